"""The README's newcomer path in Chromium, through a real `codeblanks dev` process.

Open the demo LMS's course page, launch "What is attention?" as Ali with the page's own
button, answer a question and submit the seed's solution in the tool's iframe, then watch the
grade arrive in the demo LMS's gradebook; Ctrl-C stops everything.
"""

import time

import pytest

from testkit.chromium import headless
from testkit.devserver import dev_server
from testkit.lms_race import LESSON, SOLUTION, score_of
from tests.service.web.test_pages_browser import Watch, expect_text, submit_code

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TIMEOUT_MS = 30_000


def test_newcomer_goes_from_the_demo_lms_to_a_grade_in_chromium(tmp_path, screenshots):
    started = time.monotonic()
    with dev_server(tmp_path / "instance") as base, headless() as browser:
        context = browser.new_context(viewport={"width": 1100, "height": 900})
        context.set_default_timeout(TIMEOUT_MS)
        # the demo LMS's pages name no icon, so Chromium asks for /favicon.ico
        context.route("**/favicon.ico", lambda route: route.fulfill(status=204))
        page = context.new_page()
        watch = Watch(page)

        # the course page: launch the lesson as Ali, with a click
        page.goto(base + "/demo/")
        row = page.locator("tr", has_text=LESSON)
        row.get_by_role("link", name="Launch as Ali Student").click()
        page.get_by_role("heading", name=LESSON, level=1).wait_for()
        frame = page.frame_locator("iframe.tool")
        frame.get_by_role("heading", name=LESSON, level=1).wait_for()

        # one question, answered right
        question = frame.locator("#q-rnn-advantage")
        question.get_by_label("It relates distant positions").check()
        question.get_by_role("button", name="Check answer").click()
        expect_text(question.locator("[data-feedback]"), "Correct.")
        expect_text(frame.locator("#score"), "1 of 8 points")

        # the seed's solution in the editor, submitted
        submit_code(page, frame, SOLUTION)
        expect_text(frame.locator("#verdict h3"), "Passed")
        expect_text(frame.locator("#score"), "6 of 8 points")

        # the demo LMS's gradebook: the grade arrives through the Celery worker
        page.get_by_role("link", name="Gradebook").click()
        page.get_by_role("heading", name="Gradebook").wait_for()
        deadline = time.monotonic() + 60
        while (shown := score_of(page, "Ali Student")) != "6":
            assert time.monotonic() < deadline, (
                f"Ali's score did not reach the gradebook: {shown!r}"
            )
            time.sleep(1)
            page.reload()
        shot = screenshots / "newcomer-demo-gradebook.png"
        page.screenshot(path=str(shot), full_page=True)

        assert watch.errors == []
        assert watch.outside() == [], f"requests left 127.0.0.1: {watch.outside()}"
        assert any(url.startswith(base + "/") for url in watch.requests)
    assert time.monotonic() - started < 120
