"""The registration self-test against each LMS the demo plays, over real HTTP: every trap an
LMS is known for is named, with that LMS's own fix, and a working one passes."""

from dataclasses import replace

import pytest

from core.lms_traps import CheckStatus
from demo.tokens import SCORE
from service.lti import self_test
from service.store import platform_checks
from testkit.lms import make_lms
from tests.service.lti.test_self_test import launched, platform_id, statuses, trap_ids


@pytest.fixture
def canvas(tmp_path):
    found, tool_server = make_lms(tmp_path, personality="canvas", registration_by="developer_key")
    yield found
    found.demo.stop()
    tool_server.stop()
    found.store.dispose()


def fix_of(result, trap_id):
    return str(next(t.fix for t in result.traps if t.id == trap_id))


def test_a_working_canvas_passes_and_is_known_as_canvas(canvas):
    launched(canvas)
    result = self_test.run(canvas.lti, platform_id(canvas))
    assert result.traps == (), result.traps
    assert set(statuses(result).values()) == {CheckStatus.OK}, result.checks
    assert platform_checks.claimed(canvas.store, platform_id(canvas)).product_family == "canvas"
    assert canvas.platform.lineitems() and all(
        i.label != "CodeBlanks self-test" for i in canvas.platform.lineitems()
    )


def test_canvas_with_the_score_scope_unticked_says_where_to_tick_it(canvas):
    launched(canvas)
    canvas.platform.untick(canvas.client_id, SCORE)
    result = self_test.run(canvas.lti, platform_id(canvas))
    assert trap_ids(result)[0] == "no_score_scope"
    assert not result.grades_ok
    assert "Developer Keys" in fix_of(result, "no_score_scope")


def test_an_unpublished_canvas_course_is_named_for_what_it_is(canvas):
    launched(canvas)
    canvas.platform.publish(False)  # Canvas answers 422 "User not found ... not a student"
    result = self_test.run(canvas.lti, platform_id(canvas))
    assert "course_unpublished" in trap_ids(result)
    assert not result.grades_ok
    assert "publish the course" in fix_of(result, "course_unpublished")
    assert statuses(result)["cleanup"] is CheckStatus.OK


def test_canvas_throttling_is_a_warning_not_a_blocked_gradebook(canvas):
    launched(canvas)
    canvas.platform.throttle(1, client_id=canvas.client_id)
    result = self_test.run(canvas.lti, platform_id(canvas))
    assert "rate_limited" in trap_ids(result)
    assert "403" in str(next(t.words for t in result.traps if t.id == "rate_limited"))


def test_a_canvas_key_turned_off_names_the_key(canvas):
    launched(canvas)
    key = canvas.platform.tool(canvas.client_id)
    canvas.platform.records.put_tool(replace(key, active=False))  # the admin turns it OFF
    result = self_test.run(canvas.lti, platform_id(canvas))
    assert trap_ids(result)[0] in ("tool_not_enabled", "developer_key_off")
    assert "Developer Keys" in str(result.traps[0].fix)
