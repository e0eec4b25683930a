"""Held scores in a real browser (issue 29, point 3): the teacher holds a lesson's scores,
the student sees "graded; your score will be released..." and no points, the demo LMS
shows the work handed in without points; the teacher's Release sends them all at once.

Inside the demo LMS's iframe, with a real redis-server and a real Celery worker; each page
that changed is audited with axe (tests/service/web/a11y.py).
"""

import pytest
from sqlalchemy import select

from demo import lms_ags
from service.store.models import GradeSync
from testkit.waits import wait_for
from tests.service.web import test_pages_browser as pages
from tests.service.web.a11y import assert_accessible
from tests.service.web.test_a11y_browser import answer, follow, settle, tool_frame
from tests.service.web.test_pages_browser import expect_text, launch

# the end-to-end browser tests' fixtures: the tool beside the demo LMS with a worker, Chromium
lms, chromium = pages.lms, pages.chromium

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.slow]


def statuses(lms):
    with lms.store.reading() as session:
        return set(session.scalars(select(GradeSync.status)))


def in_lms(lms, link):
    """The latest score the demo LMS holds for Ali on the link, and the points it shows."""
    item = lms.platform.lineitems_of(link)[0]
    score = lms.platform.gradebook().get((lms.platform.user_sub("ali"), item.id))
    return (score, None if score is None else lms_ags.scaled(item, score))


def test_the_teacher_holds_then_releases_and_the_student_waits(lms, chromium, screenshots):
    link = lms.link()  # "What is attention?", 8 points

    # ---- the teacher holds the lesson's scores ---------------------------------------------
    teacher, _, _ = launch(chromium, lms, "Ada Teacher")
    tframe = tool_frame(teacher)
    settle(tframe, "#settings")
    tframe.locator("#hold").check()
    follow(tframe, tframe.get_by_role("button", name="Save settings"))
    expect_text(tframe.locator("#settings"), "Settings saved.")
    expect_text(tframe.locator("#release"), "Scores held until you release them")

    # ---- the student answers: graded, the score not shown ---------------------------------
    page, _, _ = launch(chromium, lms, "Ali Student")
    frame = tool_frame(page)
    settle(frame, "#lesson h1")
    answer(frame, "rnn-advantage", choice="1")
    expect_text(frame.locator("#score"), "graded; your score will be released when your teacher")
    assert "of 8 points" not in frame.locator("#score").inner_text()
    expect_text(frame.locator("#q-rnn-advantage [data-feedback]"), "Correct.")  # the feedback
    assert_accessible(frame, "lesson, score held")
    page.screenshot(path=str(screenshots / "student-held.png"))

    # the LMS shows it handed in, no points
    wait_for(lambda: statuses(lms) == {"held"}, "the sync held", 60)
    score, points = in_lms(lms, link)
    assert score.body["gradingProgress"] == "PendingManual" and points is None

    # ---- the teacher's gradebook shows it held, and releases it ---------------------------
    follow(tframe, tframe.get_by_role("link", name="Course gradebook").first)
    book = tframe.locator("table.gradebook")
    expect_text(book, "Scores held until you release them")
    expect_text(book.locator("tbody tr", has_text="Ali Student"), "LMS: held")
    assert_accessible(tframe, "gradebook, scores held")
    tframe.locator("main").screenshot(path=str(screenshots / "teacher-held-gradebook.png"))
    follow(tframe, book.get_by_role("button", name="Release the scores of What is attention?"))
    expect_text(tframe.locator("main"), "1 student's score released.")
    assert "Scores held" not in tframe.locator("table.gradebook").inner_text()
    assert_accessible(tframe, "gradebook, released")

    # the LMS has the score, FullyGraded; the student sees it
    wait_for(lambda: in_lms(lms, link)[1] == 1.0, "1 of 8 in the LMS", 60)
    assert in_lms(lms, link)[0].body["gradingProgress"] == "FullyGraded"
    frame.goto(frame.url)
    expect_text(frame.locator("#score"), "1 of 8 points")
    assert lms.worker.errors() == []
