"""A regrade of a lesson whose cases changed, with partial scores, over real HTTP: the preview
shows each student's old and new partial score, nothing reaches the LMS before the teacher
sends, sending posts the new partial scores, and a post that failed is resent.

The lesson and its sources: tests/workers/partial_lesson.py. Before: cases weigh f 1, 2 and
g 1, 2 (of 6). After: f 1, 1, g 2, 2 and a new g case of weight 2 (of 8), which Ali's g
fails. Ali (f right, g wrong) goes from 3 of 8 to 6 x 2/8 = 1.5; Berna (g right, f wrong)
from 3 to 6 x 6/8 = 4.5.
"""

from __future__ import annotations

import html
import re
from urllib.parse import urljoin

import pytest
import requests
from sqlalchemy import select

from demo.browser import run_launch
from service.store.models import Course as CourseRow
from service.store.models import GradeSync, SyncStatus
from tests.workers.partial_lesson import G_ONLY, HALF, REWEIGHED, Student, open_course


@pytest.fixture
def course(tmp_path):
    opened = open_course(tmp_path, sync_attempts=1)  # one failed post marks the sync failed
    yield opened
    opened.close()


class Teacher:
    """Ada, launched from the demo LMS into the tool's teacher pages."""

    def __init__(self, course, link):
        self.course = course
        self.browser = requests.Session()
        trace = run_launch(self.browser, course.lms.platform.launch("ada", link.id))
        self.page = self.get(urljoin(trace.launch.url, trace.launch.headers["Location"]))

    def get(self, url: str) -> str:
        self.url = urljoin(self.course.lms.tool_url, url)
        response = self.browser.get(self.url, timeout=10)
        assert response.status_code == 200, response.text[:500]
        return response.text

    def token(self) -> str:
        """Return the signed session the last page's links carry."""
        return html.unescape(re.search(r"[?&]s=([^\"&]+)", self.page).group(1))

    def post_form(self, action_part: str, page: str | None = None) -> requests.Response:
        """Submit the form of the page (the last one read) whose action contains `action_part`."""
        page = page or self.page
        action = next(
            html.unescape(a) for a in re.findall(r'<form[^>]+action="([^"]+)"', page)
            if action_part in html.unescape(a)
        )  # fmt: skip
        csrf = html.unescape(re.search(r'name="csrf" value="([^"]+)"', page).group(1))
        response = self.browser.post(
            urljoin(self.course.lms.tool_url, action), data={"csrf": csrf},
            allow_redirects=False, timeout=10,
        )  # fmt: skip
        assert response.status_code == 303, response.text[:500]
        self.page = self.get(response.headers["Location"])
        return response


def rows(page: str) -> dict[str, tuple[str, str, str]]:
    """Return the preview's table: student -> (before, after, change), as the page says them."""
    found = {}
    for row in re.findall(r"<tr><th scope=\"row\"[^>]*>(.*?)</tr>", page, re.S):
        name, rest = row.split("</th>", 1)
        cells = [
            re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td>(.*?)</td>", rest, re.S)
        ]
        found[html.unescape(name)] = tuple(cells)
    return found


def test_a_regrade_with_changed_cases_previews_sends_and_resends_partial_scores(course):
    link = course.link()
    ali = Student.launch(course, "ali", link)
    berna = Student.launch(course, "berna", link)
    ali.submit(HALF)
    berna.submit(G_ONLY)
    assert course.drain() == ["graded", "graded", "sent", "sent"]
    assert ali.in_the_lms() == berna.in_the_lms() == (3.0, 8.0)

    teacher = Teacher(course, link)
    course.change_cases(REWEIGHED)
    teacher.post_form("/regrade")
    assert "2 submissions queued for regrading" in teacher.page
    assert rows(teacher.page) == {
        "Ali Student": ("3 of 8", "regrading…", ""),
        "Berna Student": ("3 of 8", "regrading…", ""),
    }
    # graded again, and held: the syncs their tasks ask for find nothing to post yet
    assert course.drain() == ["graded", "graded", "nothing_to_do", "nothing_to_do"]
    preview = teacher.get(teacher.url)
    assert rows(preview) == {
        "Ali Student": ("3 of 8", "1.5 of 8", "−1.5"),
        "Berna Student": ("3 of 8", "4.5 of 8", "+1.5"),
    }
    assert "2 of 2 score changes" in preview
    assert ali.in_the_lms() == berna.in_the_lms() == (3.0, 8.0)  # nothing sent yet

    # the first post of the two fails with the LMS's own error (a 503 would be the LMS away:
    # its grades would wait for it, workers/syncing.py, not fail)
    course.lms.platform.fail("ags", times=1, status=500)
    teacher.post_form("/regrade/send", preview)
    assert "New scores sent to the LMS for 2 students" in teacher.page
    assert sorted(course.drain()) == ["failed", "sent"]
    held = {ali.in_the_lms(), berna.in_the_lms()}
    assert len(held & {(1.5, 8.0), (4.5, 8.0)}) == 1  # one new score reached the LMS
    assert (3.0, 8.0) in held  # the other student's failed: the LMS holds the old one
    with course.store.session() as session:
        failed = session.scalars(
            select(GradeSync).where(GradeSync.status == SyncStatus.FAILED)
        ).all()
        assert len(failed) == 1
        course_id = session.scalar(select(CourseRow.id))

    book = teacher.get(f"/teach/courses/{course_id}?s={teacher.token()}")
    teacher.post_form("/resend", book)
    assert course.drain() == ["sent"]
    assert ali.in_the_lms() == (1.5, 8.0)
    assert berna.in_the_lms() == (4.5, 8.0)
    for who, new in (("ali", 1.5), ("berna", 4.5)):
        posted = [s.body["scoreGiven"] for s in course.lms.platform.scores(user=who)]
        assert posted[0] == 3.0 and posted[-1] == new


def test_a_regrade_without_review_posts_the_best_new_partial_score(course):
    """`codeblanks regrade` (no preview): the new scores go out as they come, and the best
    of a student's regraded submissions counts, whichever it was before."""
    from service.queue import send
    from service.web.teacher.regrading import queue_regrade

    ali = Student.launch(course, "ali", course.link())
    ali.submit(HALF)
    ali.submit(G_ONLY)  # as good, before the change: 3 of 6 each
    course.drain()
    assert ali.in_the_lms() == (3.0, 8.0)
    course.change_cases(REWEIGHED)
    assert send(course.lms.celery_app, queue_regrade(course.store, ali.placement_id)) == 2
    assert course.drain() == ["graded", "graded", "sent", "nothing_to_do"]
    assert ali.in_the_lms() == (4.5, 8.0)  # G_ONLY's 6/8 now; HALF's 2/8 does not lower it
