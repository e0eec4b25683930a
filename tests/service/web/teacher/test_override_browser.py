"""The teacher's override form in a real browser: Chromium opens the demo LMS, the teacher
sets a student's score with a comment from the student's page, a real worker posts it, and
the demo LMS's gradebook shows it with its comment, as Moodle shows feedback. The pages pass
the accessibility audit, and their screenshots are the issue's (docs/screenshots with
`--screenshots docs/screenshots`)."""

import pytest
import requests

from testkit.chromium import headless
from testkit.lms import answer, lms_with_a_worker, signed_in_headers
from testkit.waits import wait_for
from tests.service.web.a11y import assert_accessible
from tests.service.web.test_pages_browser import TIMEOUT_MS, Watch, expect_text, launch

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.slow]

COMMENT = "Your reasoning on the weighted average is right; the rounding slip costs little."


@pytest.fixture
def lms(tmp_path, redis_server):
    with lms_with_a_worker(tmp_path, redis_server, "grade,sync") as found:
        yield found


@pytest.fixture
def chromium():
    with headless() as browser:
        yield browser


def holds(lms):
    """Return the body of the score the demo LMS holds of Ali, or {}."""
    sub = lms.platform.user_sub("ali")
    found = [s for (user, _), s in lms.platform.gradebook().items() if user == sub]
    return found[0].body if found else {}


def test_the_teacher_sets_a_score_with_a_comment_and_the_lms_shows_both(lms, chromium, screenshots):
    link = lms.link()  # "What is attention?", 8 points
    with requests.Session() as student:
        headers, placement_id = signed_in_headers(student, lms, "ali", link)
        assert answer(student, lms, headers, placement_id).status_code == 201  # 1 point
        wait_for(lambda: holds(lms).get("scoreGiven") == 1.0, "1 of 8 in the LMS", 60)

        teacher, frame, watch = launch(chromium, lms, "Ada Teacher")
        frame.get_by_role("link", name="Course gradebook").first.click()
        frame.get_by_role("link", name="Ali Student, What is attention?: 1 of 8").click()
        frame.get_by_role("heading", name="Score", level=2).wait_for()
        url = frame.locator("h1").evaluate("() => window.location.href")

        tab = teacher.context.new_page()  # the page on its own, for the audit and the picture
        tab_watch = Watch(tab)
        tab.set_viewport_size({"width": 1000, "height": 900})
        tab.goto(url)
        form = tab.locator("#override form.settings")
        # a score above the lesson's points: refused beside its field, the score unchanged
        form.get_by_label("Points").fill("9")
        form.get_by_role("button", name="Set the score").click()
        expect_text(tab.locator("#given-error"), "Give a number of points from 0 to 8.")
        assert tab.get_by_label("Points").get_attribute("aria-invalid") == "true"
        assert_accessible(tab, "the student page, a refused override")

        form = tab.locator("#override form.settings")
        form.get_by_label("the whole lesson (out of 8)").check()
        form.get_by_label("Points").fill("6,5")
        form.get_by_label("Comment").fill(COMMENT)
        form.get_by_label("Comment").press("Tab")
        tab.locator(":focus").press("Enter")  # the keyboard reaches and sends the form
        expect_text(tab.locator("#override [role=status]"), "Score set")
        expect_text(tab.locator("#override .score-now"), "6.5 of 8 points")
        expect_text(tab.locator("table.history"), "set the lesson to 6.5 (automatic: 1)")
        expect_text(tab.locator("table.history"), COMMENT)
        wait_for(lambda: holds(lms).get("scoreGiven") == 6.5, "the override in the LMS", 60)
        assert holds(lms)["comment"] == COMMENT

        # a later automatic result: the override stands, the page says so, the teacher keeps it
        assert answer(student, lms, headers, placement_id, "rnn-advantage", 1).status_code == 201
        wait_for(lambda: len(lms.platform.scores(user="ali")) >= 3, "the sync's post", 60)
        assert (holds(lms)["scoreGiven"], holds(lms)["comment"]) == (6.5, COMMENT)
        tab.reload()
        expect_text(tab.locator("#newer"), "A newer automatic result exists: 2 of 8")
        assert_accessible(tab, "the student page, a newer automatic result")
        tab.get_by_role("button", name="Keep the override").click()
        expect_text(tab.locator("#override [role=status]"), "Override kept.")
        expect_text(tab.locator("table.history"), "kept 6.5 over the automatic 2")
        assert tab.locator("#newer").count() == 0
        assert_accessible(tab, "the student page with an override and its history")
        tab.screenshot(path=str(screenshots / "teacher-override.png"), full_page=True)

    lms_page = teacher.context.new_page()
    lms_page.set_default_timeout(TIMEOUT_MS)
    lms_page.set_viewport_size({"width": 1000, "height": 700})
    lms_page.goto(f"{lms.demo.url}/demo/gradebook")
    cell = lms_page.locator("table").first.locator("tr", has_text="Ali Student")
    expect_text(cell, "6.5")
    expect_text(cell.locator(".feedback"), f"Feedback: {COMMENT}")
    lms_page.screenshot(path=str(screenshots / "demo-lms-override.png"))
    assert lms.worker.errors() == []
    assert watch.errors == []
    # the refused form's answer, and Chromium's console line about it: nothing else
    assert [e for e in tab_watch.errors if "400" not in e] == [] and len(tab_watch.errors) <= 2
