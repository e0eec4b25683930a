"""A teacher's override on real processes: the teacher's form, Redis, a Celery worker grading
in the sandbox and posting by AGS, and the demo LMS's gradebook, which holds the override's
score with its comment and keeps them through a later, better automatic grade until the
teacher takes it.

The lesson (tests/workers/partial_lesson.py): a 2-point question and a 6-point exercise.
"""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from sqlalchemy import func, select

from demo.browser import run_launch
from service.store.models import GradeSync, Submission, SubmissionStatus, SyncStatus, User
from testkit.lms import lms_with_a_worker, signed_in_headers
from testkit.waits import wait_for
from tests.service.sessions import form_token
from tests.workers.partial_lesson import FULL, HALF, LESSON, QUESTION, RIGHT, write_lessons

pytestmark = [pytest.mark.celery, pytest.mark.slow]

COMMENT = "Your g is right in spirit; the hidden case fails on a typo. 2.5 of 3 for it."


def test_the_override_and_its_comment_reach_the_lms_and_outlast_a_later_grade(
    tmp_path, redis_server
):
    root = write_lessons(tmp_path / "lessons")
    changes = {"lessons_dir": root, "submit_rate": 1_000_000}
    with (
        lms_with_a_worker(tmp_path, redis_server, "grade,sync", pool=1, **changes) as lms,
        requests.Session() as student,
        requests.Session() as staff,
    ):
        link = lms.link(lesson=LESSON, title="Two functions", score=8.0)
        headers, placement_id = signed_in_headers(student, lms, "ali", link)
        api = f"{lms.tool_url}/api/placements/{placement_id}"
        answer = {"question_id": QUESTION, "answer": RIGHT}
        assert student.post(f"{api}/answers", json=answer, headers=headers).status_code == 201
        assert student.post(f"{api}/submissions", json={"source": HALF}, headers=headers).ok

        def holds():
            found = [s for (sub, _), s in lms.platform.gradebook().items()
                     if sub == lms.platform.user_sub("ali")]  # fmt: skip
            return found[0].body if found else {}

        wait_for(lambda: holds().get("scoreGiven") == 5.0, "5 of 8 in the LMS", 120)
        automatic = holds()["comment"]  # why the automatic score is what it is
        assert COMMENT not in automatic

        # the teacher, launched from the demo LMS, sets the exercise's part with a comment
        trace = run_launch(staff, lms.platform.launch("ada", link.id))
        token = parse_qs(urlsplit(trace.launch.headers["Location"]).query)["s"][0]
        with lms.store.session() as session:
            ali = session.scalar(select(User.id).where(User.sub == "demo-ali"))
        page_url = f"{lms.tool_url}/teach/placements/{placement_id}/students/{ali}"
        page = staff.get(page_url, params={"s": token}, timeout=30)
        assert page.status_code == 200, page.text
        form = {"csrf": form_token(page.text), "part": "exercise", "given": "5.5"}
        sent = staff.post(
            lms.tool_url + action(page.text, "/override"),
            data={**form, "comment": COMMENT},
            allow_redirects=False,
            timeout=30,
        )
        assert sent.status_code == 303, sent.text
        wait_for(lambda: holds().get("scoreGiven") == 7.5, "the override (2 + 5.5) in the LMS", 60)
        assert holds()["comment"] == COMMENT
        assert holds()["gradingProgress"] == "FullyGraded"

        # a later, better automatic grade: 8 of 8, which the override outlasts
        posted = len(lms.platform.scores(user="ali"))
        assert student.post(f"{api}/submissions", json={"source": FULL}, headers=headers).ok
        wait_for(lambda: _settled(lms), "the full marks graded and synced", 120)
        wait_for(lambda: len(lms.platform.scores(user="ali")) > posted, "the sync's post", 30)
        assert (holds()["scoreGiven"], holds()["comment"]) == (7.5, COMMENT)
        page = staff.get(page_url, params={"s": token}, timeout=30).text
        assert "A newer automatic result exists: 6 of 6" in page

        # the teacher takes it: the automatic 8, and the automatic comment, not theirs
        sent = staff.post(
            lms.tool_url + action(page, "/override/remove"),
            data={"csrf": form_token(page)},
            allow_redirects=False,
            timeout=30,
        )
        assert sent.status_code == 303, sent.text
        wait_for(lambda: holds().get("scoreGiven") == 8.0, "the automatic 8 in the LMS", 60)
        assert COMMENT not in holds()["comment"] and "passed" in holds()["comment"]
        assert lms.worker.errors() == []


def action(page: str, ending: str) -> str:
    """Return the URL of the page's form whose action ends so (with the session it carries)."""
    found = re.search(rf'action="([^"?]*{re.escape(ending)}\?[^"]*)"', page)
    assert found is not None, f"no form posts to …{ending}"
    return html.unescape(found.group(1))


def _settled(lms) -> bool:
    """Return whether every submission is graded and every grade sync settled."""
    with lms.store.session() as session:
        waiting = session.scalar(
            select(func.count())
            .select_from(Submission)
            .where(Submission.status != SubmissionStatus.GRADED)
        )
        pending = session.scalar(
            select(func.count())
            .select_from(GradeSync)
            .where(GradeSync.status == SyncStatus.PENDING)
        )
        graded = session.scalar(select(func.count()).select_from(Submission))
    return waiting == 0 and pending == 0 and graded == 2
