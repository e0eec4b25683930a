"""From the LMS gradebook back to the student's work, in a real browser with a real worker.

Ali answers a question inside the demo LMS; the worker posts his score, creating the line
item (which declares the submission review). The teacher then follows the demo gradebook's
"Review Ali's work" link, as Moodle's per-student grade link, and lands on Ali's page in the
tool, inside the LMS's frame; it passes the accessibility audit.
"""

import time

import pytest

from testkit.chromium import headless
from testkit.lms import lms_with_a_worker
from tests.service.web.a11y import assert_accessible
from tests.service.web.test_pages_browser import TIMEOUT_MS, expect_text, launch

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.slow]


@pytest.fixture
def lms(tmp_path, redis_server):
    with lms_with_a_worker(tmp_path, redis_server, "grade,sync") as found:
        yield found


@pytest.fixture
def chromium():
    with headless() as browser:
        yield browser


def test_the_gradebook_link_opens_the_students_work_for_the_teacher(lms, chromium, screenshots):
    link = lms.link(score=None)  # no grade column yet: the tool's first score creates it
    page, frame, _ = launch(chromium, lms, "Ali Student")
    blank = frame.locator("#q-weighted-average")
    blank.get_by_label("The missing part of").fill("@")
    blank.get_by_role("button", name="Check answer").click()
    expect_text(blank.locator("[data-feedback]"), "Correct.")

    deadline = time.monotonic() + 60
    while not lms.platform.lineitems_of(link) or not lms.platform.scores(user="ali"):
        assert time.monotonic() < deadline, "the worker posted no score in 60 s"
        time.sleep(0.2)
    [item] = lms.platform.lineitems_of(link)
    assert item.submission_review and item.submission_review["url"].endswith("/lti/review")

    teacher = chromium.new_context(viewport={"width": 1100, "height": 900})
    teacher.set_default_timeout(TIMEOUT_MS)
    teacher.route("**/favicon.ico", lambda route: route.fulfill(status=204))
    book = teacher.new_page()
    book.goto(f"{lms.demo.url}/demo/gradebook")
    book.get_by_role("link", name="Review Ali's work").click()
    tool = book.locator("iframe.tool").element_handle().content_frame()
    tool.wait_for_selector("main h1", state="visible")
    tool.wait_for_load_state("load")
    assert "/teach/placements/" in tool.url and "/students/" in tool.url
    expect_text(tool.locator("main"), "Ali Student")
    expect_text(tool.locator("main"), "Take the weighted average of the values.")
    expect_text(tool.locator(".bar"), "Signed in as Ada Teacher")
    book.screenshot(path=str(screenshots / "review-from-the-gradebook.png"), full_page=True)
    assert_accessible(tool, "teacher: a student's work, opened from the LMS gradebook")
    assert_accessible(book, "demo LMS: the gradebook's review frame")
    teacher.close()
    page.context.close()
