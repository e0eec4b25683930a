"""The registration self-test against the demo LMS over real HTTP: a platform that works
passes every check and keeps no line item; each broken one names its trap and fix."""

import json
import subprocess
import sys

import pytest
import requests

from core.lms_traps import CheckStatus
from demo.browser import run_launch
from demo.tokens import LINEITEM, MEMBERSHIPS, RESULT_READONLY
from service.lti import self_test
from service.store import platform_checks
from service.store.models import Platform
from service.web import extensions
from testkit.lms import lms_with_a_worker, make_lms
from testkit.pipeline import Pipeline
from testkit.waits import wait_for
from tests.conftest import REPO
from tests.service.lti.lms_trials import register_dynamically


@pytest.fixture
def lms(tmp_path):
    found, tool_server = make_lms(tmp_path, fake_celery=True)
    yield found
    found.demo.stop()
    tool_server.stop()
    found.store.dispose()


def platform_id(lms):
    with lms.store.session() as session:
        return session.query(Platform.id).scalar()


def launched(lms, who="ali"):
    """Place a lesson and launch `who` into it: the tool now knows the course."""
    link = lms.link()
    with requests.Session() as browser:
        run_launch(browser, lms.platform.launch(who, link.id))
    return link


def statuses(result):
    return {check.name: check.status for check in result.checks}


def trap_ids(result):
    return [trap.id for trap in result.traps]


def test_a_working_platform_passes_every_check_and_keeps_no_line_item(lms):
    launched(lms)
    before = len(lms.platform.lineitems())
    result = self_test.run(lms.lti, platform_id(lms))
    assert set(statuses(result).values()) == {CheckStatus.OK}, result.checks
    assert result.traps == ()
    assert result.grades_ok
    assert len(lms.platform.lineitems()) == before
    assert {"key_set", "scopes", "course", "roster", "line_item", "score", "read_back",
            "cleanup"} <= statuses(result).keys()  # fmt: skip
    stored = platform_checks.latest(lms.store)[platform_id(lms)]
    assert stored.grades_ok and stored.result == result.to_json()


def reregister(lms, **changes):
    """Register the tool again with the demo LMS, under its client id, as `changes` say."""
    return lms.platform.register_tool(
        name="CodeBlanks",
        login_url=lms.tool_url + "/lti/login",
        launch_url=lms.tool_url + "/lti/launch",
        jwks_url=lms.tool_url + "/lti/jwks",
        deep_link_url=lms.tool_url + "/lti/launch",
        client_id=lms.client_id,
        deployment_id=lms.deployment_id,
        **changes,
    )


def test_a_tool_registered_without_the_score_scope_names_the_trap(lms):
    launched(lms)
    reregister(lms, scopes=[LINEITEM, RESULT_READONLY, MEMBERSHIPS])
    result = self_test.run(lms.lti, platform_id(lms))
    assert trap_ids(result)[0] == "no_score_scope"
    assert not result.grades_ok
    assert statuses(result)["scopes"] is CheckStatus.FAILED
    assert "score" in str(result.traps[0].words)
    assert "grant this tool the score scope" in str(result.traps[0].fix)


def test_an_erring_grade_service_names_its_trap(lms):
    launched(lms)
    before = len(lms.platform.lineitems())
    lms.platform.fail("ags", times=1)
    result = self_test.run(lms.lti, platform_id(lms))
    assert "ags_erring" in trap_ids(result)
    assert statuses(result)["line_item"] is CheckStatus.FAILED
    assert not result.grades_ok
    assert len(lms.platform.lineitems()) == before


def test_a_step_that_fails_after_the_line_item_still_deletes_it(lms):
    launched(lms)
    before = len(lms.platform.lineitems())
    lms.platform.fail("results", times=5)  # the read-back fails, after the item was made
    result = self_test.run(lms.lti, platform_id(lms))
    assert statuses(result)["read_back"] is CheckStatus.FAILED
    assert statuses(result)["cleanup"] is CheckStatus.OK
    assert len(lms.platform.lineitems()) == before
    assert "ags_erring" in trap_ids(result)


def test_a_tool_pending_activation_names_its_trap(tmp_path):
    found, tool_server = make_lms(tmp_path)
    try:
        reregister(found, active=False)
        result = self_test.run(found.lti, platform_id(found))
        assert trap_ids(result) == ["tool_not_enabled"]
        assert "activated" in str(result.traps[0].fix)
        assert statuses(result)["course"] is CheckStatus.WARNING  # no launch yet
        assert "No launch has come from this LMS yet" in str(result.checks[-1].words)
    finally:
        found.demo.stop()
        tool_server.stop()
        found.store.dispose()


def test_an_unreachable_key_set_names_its_trap(lms):
    launched(lms)
    with lms.store.session() as session:
        # a port nothing listens on, on the demo LMS's allowed host
        platform = session.get(Platform, platform_id(lms))
        platform.key_set_url = lms.platform.jwks_url + "-gone"
    result = self_test.run(lms.lti, platform_id(lms))
    assert statuses(result)["key_set"] is CheckStatus.FAILED
    assert trap_ids(result) == ["key_set_unusable"]
    assert "key set (JWKS) URL" in str(result.traps[0].fix)
    assert statuses(result)["score"] is CheckStatus.OK  # the other checks still ran


def test_an_unknown_platform_has_no_self_test(lms):
    assert self_test.run(lms.lti, 999) is None


def check_command(lms, *args):
    """Run `codeblanks platforms check` as its own process, on the tool's store and keys."""
    env = {"PATH": "/usr/bin:/bin", **Pipeline.env_of(extensions.settings(lms.app))}
    return subprocess.run(
        [sys.executable, "-m", "service", "platforms", "check", *args],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=120,
    )  # fmt: skip


def test_the_command_exits_0_when_grades_can_be_sent(lms):
    launched(lms)
    before = len(lms.platform.lineitems())
    done = check_command(lms, str(platform_id(lms)), "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["grades_ok"] is True and found["traps"] == []
    assert {c["status"] for c in found["checks"]} == {"ok"}
    assert len(lms.platform.lineitems()) == before
    printed = check_command(lms, str(platform_id(lms)))
    assert printed.returncode == 0
    assert "ok      cleanup" in printed.stdout
    assert printed.stdout.rstrip().endswith("grades can be sent")


def test_the_command_exits_1_on_a_trap_that_blocks_grades(lms):
    launched(lms)
    reregister(lms, scopes=[LINEITEM, RESULT_READONLY, MEMBERSHIPS])
    done = check_command(lms, str(platform_id(lms)))
    assert done.returncode == 1, done.stderr
    assert "trap    no_score_scope (blocks grades): This LMS granted no score scope" in done.stdout
    assert "fix: Ask the LMS's administrator to grant this tool the score scope." in done.stdout


def test_the_command_exits_2_for_an_unknown_platform(lms):
    done = check_command(lms, "999")
    assert done.returncode == 2
    assert "no platform 999" in done.stderr


def checks_sent(lms):
    return [s.args for s in lms.celery_app.sent if s.name == "codeblanks.check_platform"]


def test_a_launch_from_a_platform_never_tested_asks_for_no_test(lms):
    launched(lms)  # added by hand: its admin runs the first test, which tries a grade
    assert checks_sent(lms) == []


def test_a_launch_after_the_tool_was_shut_out_has_it_tested_again(tmp_path):
    found, tool_server = make_lms(tmp_path, fake_celery=True)
    try:
        reregister(found, active=False)  # Moodle: registered, pending the admin's activation
        assert trap_ids(self_test.run(found.lti, platform_id(found))) == ["tool_not_enabled"]
        reregister(found, active=True)  # the admin activates it; a teacher places a lesson
        launched(found, "ada")
        launched(found, "berna")
        assert checks_sent(found) == [[platform_id(found)]]  # once, however many launches
        items = found.platform.lineitems()
        sent = self_test.run(found.lti, platform_id(found), try_grades=False)  # as the task
        assert statuses(sent)["line_item"] is CheckStatus.WARNING  # read-only in the background
        assert found.platform.lineitems() == items and not found.platform.scores()
        stored = platform_checks.latest(found.store)[platform_id(found)]
        assert stored.grades_ok and stored.result["traps"] == []
        launched(found, "ali")
        assert checks_sent(found) == [[platform_id(found)]]  # green now: no more asks
    finally:
        found.demo.stop()
        tool_server.stop()
        found.store.dispose()


def test_a_launch_after_a_test_that_passed_asks_for_none(lms):
    self_test.run(lms.lti, platform_id(lms))
    launched(lms)
    assert checks_sent(lms) == []


@pytest.mark.celery
def test_a_dynamic_registration_is_tested_by_a_real_worker_at_once(tmp_path, redis_server):
    with lms_with_a_worker(tmp_path, redis_server, "sync") as lms:
        with requests.Session() as browser:
            new = register_dynamically(lms, browser)
        stored = wait_for(
            lambda: platform_checks.latest(lms.store).get(new.id), "the worker's self-test", 60
        )
        checks = {c["name"]: c["status"] for c in stored.result["checks"]}
        assert checks["key_set"] == "ok" and checks["scopes"] == "ok", stored.result
        assert checks["course"] == "warning"  # no launch yet: no course to try a grade in
