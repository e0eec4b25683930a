"""A grade a teacher cleared in the LMS, found by the tool and sent again, in a real browser.

FINDINGS: after a teacher cleared a grade in Moodle, the tool still said "LMS: 8". Here a
student's score lands in the demo LMS, a teacher clears it from the demo LMS's gradebook (as
Moodle's reset does), then opens the tool inside the LMS's iframe: the page reads the LMS's
results in the background (a real worker), says when it is read, "LMS has none", and offers
to resend; the gradebook passes axe's audit showing it, and its Resend puts the score back.
"""

import pytest
import requests
from sqlalchemy import select

from service.store.models import Grade
from testkit.lms import answer, signed_in_headers
from testkit.waits import wait_for
from tests.service.web import test_pages_browser as pages
from tests.service.web.a11y import assert_accessible
from tests.service.web.test_pages_browser import TIMEOUT_MS, expect_text

lms, chromium = pages.lms, pages.chromium

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.slow]


def believed(lms):
    """Return what the tool believes the LMS holds of the one pair."""
    with lms.store.session() as session:
        return session.scalar(select(Grade.lms_given))


def test_a_grade_cleared_in_the_lms_is_shown_lost_and_resent(lms, chromium):
    link = lms.link()  # "What is attention?", 8 points
    with requests.Session() as student:
        headers, placement_id = signed_in_headers(student, lms, "ali", link)
        assert answer(student, lms, headers, placement_id).status_code == 201
    wait_for(lambda: believed(lms) == 1.0, "the score in the LMS", 60)

    # the teacher clears Ali's grade in the LMS's own gradebook
    context = chromium.new_context(viewport={"width": 1100, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    context.route("**/favicon.ico", lambda route: route.fulfill(status=204))
    page = context.new_page()
    page.goto(f"{lms.demo.url}/demo/gradebook")
    page.get_by_role("button", name="Clear Ali Student's grade").click()
    expect_text(page.locator("table").first, "cleared")

    # the tool, inside the LMS: its lesson page reads the LMS in the background, says when
    # it is done (never reloading under the teacher), and then shows what it found
    page.goto(f"{lms.demo.url}/demo/")
    page.get_by_role("link", name="Launch as Ada Teacher").first.click()
    frame = page.frame_locator("iframe.tool")
    expect_text(frame.locator("[data-results-pending]"), "Checking the LMS…")
    frame.get_by_role("link", name="The LMS was read: show what it holds").click()
    expect_text(frame.locator("div.lost"), "LMS has none")
    frame.locator(".bar a").first.click()
    frame.locator("table.gradebook").wait_for()
    expect_text(frame.locator("table.gradebook div.lost"), "LMS has none")
    expect_text(frame.locator("table.gradebook thead"), "LMS checked")
    handle = page.locator("iframe.tool").element_handle().content_frame()
    assert_accessible(handle, "teacher: the gradebook with a score the LMS lost")

    # its Resend sends the score again, and the LMS holds it once more
    frame.get_by_role("button", name="Resend Ali Student's score on What is attention?").click()
    expect_text(frame.locator("[role=status]").first, "1 grade sync sent again.")
    [item] = lms.platform.lineitems_of(link)
    cleared_at = lms.platform.records.cleared(item.id)[lms.platform.user_sub("ali")]
    wait_for(
        lambda: any(
            s.applied and s.received_at > cleared_at for s in lms.platform.scores(user="ali")
        ),
        "the score back in the LMS",
        60,
    )
    handle.goto(handle.url)
    frame.locator("table.gradebook").wait_for()
    assert frame.locator("div.lost").count() == 0
    page.goto(f"{lms.demo.url}/demo/gradebook")
    expect_text(page.locator("table").first.locator("strong"), "1")
