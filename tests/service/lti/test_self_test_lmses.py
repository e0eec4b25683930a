"""The registration self-test against each LMS the demo plays, over real HTTP: every trap an
LMS is known for is named, with that LMS's own fix, and a working one passes."""

from dataclasses import replace

import pytest
import requests

from core.lms_traps import CheckStatus
from demo.browser import run_launch
from demo.tokens import SCORE
from service.lti import self_test
from service.store import platform_checks
from testkit.lms import make_lms
from tests.service.lti.test_self_test import launched, platform_id, statuses, trap_ids

SEED = "expert/what-is-attention"


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


@pytest.fixture
def lms_as(tmp_path):
    """Start the tool and the demo LMS playing the LMS named; stopped after the test."""
    started = []

    def start(personality, **demo_config):
        found, tool_server = make_lms(tmp_path, personality=personality, **demo_config)
        started.append((found, tool_server))
        return found

    yield start
    for found, tool_server in started:
        found.demo.stop()
        tool_server.stop()
        found.store.dispose()


def launched_by_hand(lms, who="ali"):
    """A link placed by hand with no grade item (Brightspace's, Blackboard's web link)."""
    link = lms.platform.add_link(lms.client_id, "By hand", custom={"lesson": SEED})
    with requests.Session() as browser:
        run_launch(browser, lms.platform.launch(who, link.id))
    return link


def test_sakai_without_its_two_boxes_names_both(lms_as):
    sakai = lms_as("sakai")
    launched(sakai)
    result = self_test.run(sakai.lti, platform_id(sakai))
    assert trap_ids(result)[0] == "no_score_scope"
    assert not result.grades_ok
    fix = fix_of(result, "no_score_scope")
    assert "return grades" in fix and "create grade columns" in fix


def test_sakai_with_both_boxes_takes_grades_and_warns_its_launch_lists_no_score(lms_as):
    sakai = lms_as("sakai")
    sakai.platform.tick(sakai.client_id, outcomes=True, lineitems=True)
    launched(sakai)
    result = self_test.run(sakai.lti, platform_id(sakai))
    assert result.grades_ok, result.traps
    assert trap_ids(result) == ["launch_lists_no_score"]
    assert statuses(result)["read_back"] is CheckStatus.OK


@pytest.mark.parametrize(("lms_name", "words"), [
    ("brightspace", "Brightspace makes no grade item"),
    ("blackboard", "In Blackboard"),
])  # fmt: skip
def test_a_link_placed_without_a_grade_item_is_named_in_that_lms_words(lms_as, lms_name, words):
    found = lms_as(lms_name)
    launched_by_hand(found)  # no worker here: the line item the launch asks for is not made yet
    result = self_test.run(found.lti, platform_id(found))
    assert "links_without_line_item" in trap_ids(result)
    assert words in fix_of(result, "links_without_line_item")
    assert result.grades_ok  # the tool makes the item itself: a warning, not a block


@pytest.mark.parametrize("lms_name", ["brightspace", "blackboard", "sakai", "moodle", "canvas"])
def test_every_lms_the_demo_plays_is_named_by_its_family(lms_as, lms_name):
    found = lms_as(lms_name)
    launched(found)
    self_test.run(found.lti, platform_id(found))
    family = platform_checks.claimed(found.store, platform_id(found)).product_family
    assert family == (found.demo.config.product_family_code)


def test_a_brightspace_added_without_its_audience_names_the_audience(lms_as):
    bare = lms_as("brightspace", token_audience=False)  # the admin left the audience out
    launched(bare)
    result = self_test.run(bare.lti, platform_id(bare))
    # the one block: not "tool not enabled" (it is), nor a missing scope (none was refused);
    # the launched link's missing grade item is a warning beside it
    assert trap_ids(result) == ["token_audience", "links_without_line_item"], result.traps
    assert not result.grades_ok
    assert "Brightspace OAuth2 Audience" in fix_of(result, "token_audience")
    assert bare.platform.knobs.hits["token"] >= 1  # it was asked, and refused


def test_a_brightspace_added_with_its_audience_takes_grades(lms_as):
    given = lms_as("brightspace")  # by hand, the OAuth2 Audience given as the admin copied it
    launched(given)
    result = self_test.run(given.lti, platform_id(given))
    assert result.grades_ok, result.traps
    assert statuses(result)["read_back"] is CheckStatus.OK
