"""A teacher gives a student an exception in a real browser, inside the demo LMS's iframe:
from the gradebook, refused with errors first, then changed on the student's page, and the
student reads their own due date on the lesson page. Each page passes axe-core's audit."""

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from service.store.models import Placement, PolicyException
from tests.service.web import test_pages_browser as pages
from tests.service.web.a11y import assert_accessible
from tests.service.web.test_pages_browser import expect_text, launch

lms, chromium = pages.lms, pages.chromium

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.slow]


def tool_frame(page):
    return page.locator("iframe.tool").element_handle().content_frame()


def follow(frame, locator):
    with frame.expect_navigation():
        locator.click()


def test_a_teacher_sets_an_exception_and_the_student_sees_their_due_date(lms, chromium):
    lms.link()  # "What is attention?"
    page, _, _ = launch(chromium, lms, "Ali Student")
    frame = tool_frame(page)
    frame.locator("#lesson h1").wait_for()
    due = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(days=1)
    with lms.store.session() as session:  # due yesterday; late work loses 20%; 3 attempts
        session.execute(update(Placement).values(due_at=due, late_penalty=0.2, max_attempts=3))

    page, _, _ = launch(chromium, lms, "Ada Teacher")
    frame = tool_frame(page)
    frame.locator("#settings").wait_for()
    follow(frame, frame.locator(".bar a").first)
    form = frame.locator("#exceptions form")
    form.locator("select[name=user_id]").select_option(label="Ali Student")
    form.locator("input[name=due_at]").fill("2020-01-01T00:00")  # before the lesson's
    form.locator("input[name=max_attempts]").fill("2")  # fewer than the lesson's
    follow(frame, form.locator("button[type=submit]"))
    alert = frame.locator("#exceptions [role=alert]")
    expect_text(alert, "Please check the fields marked below.")
    expect_text(frame.locator("#exception-due_at-error"), "Give a date after the lesson's due date")
    expect_text(frame.locator("#exception-max_attempts-error"), "Give more than the lesson's 3")
    assert_accessible(frame, "gradebook: an exception with errors")

    later = due + timedelta(days=5)
    form = frame.locator("#exceptions form")
    form.locator("select[name=user_id]").select_option(label="Ali Student")
    form.locator("input[name=due_at]").fill(later.strftime("%Y-%m-%dT%H:%M"))
    form.locator("input[name=max_attempts]").fill("")
    form.locator("input[name=waive_penalty]").check()
    follow(frame, form.locator("button[type=submit]"))
    expect_text(frame.locator("#exceptions [role=status]"), "Exception saved.")
    mark = frame.locator("table.gradebook a.tag.exception")
    expect_text(mark, "exception")
    assert_accessible(frame, "gradebook: a student with an exception")

    follow(frame, mark)
    section = frame.locator("#exception")
    expect_text(section, "The late penalty is waived.")
    expect_text(section, "Set by Ada Teacher")
    section.locator("input[name=max_attempts]").fill("5")
    follow(frame, section.locator("form.settings button[type=submit]"))
    expect_text(frame.locator("#exception [role=status]"), "Exception saved.")
    expect_text(frame.locator("#exception"), "5 attempts instead of 3.")
    assert_accessible(frame, "teacher: a student's page with their exception")
    with lms.store.session() as session:
        kept = session.execute(
            select(
                PolicyException.due_at, PolicyException.max_attempts, PolicyException.waive_penalty
            )  # fmt: skip
        ).all()
    assert [tuple(row) for row in kept] == [(later, 5, True)]

    page, _, _ = launch(chromium, lms, "Ali Student")
    frame = tool_frame(page)
    frame.locator("#lesson h1").wait_for()
    expect_text(frame.locator("#due"), "Your due date:")
    expect_text(frame.locator("#due"), "(an exception for you); late work costs you nothing.")
    expect_text(frame.locator("#attempts-used"), "Attempts used: 0 of 5")
    assert_accessible(frame, "lesson: the student's own due date")
