"""A student's exception on real processes: the demo LMS's launches, the tool, redis-server
and a Celery worker grading and posting. A later due date set on the teacher's page takes the
penalty off work already handed in, lets a late submission in on time, and the LMS's
gradebook gets each score."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape

import pytest
import requests
from sqlalchemy import select, update

from service.store.models import Placement, Submission, User, utcnow
from testkit.lms import lms_with_a_worker, signed_in_headers
from testkit.waits import wait_for
from tests.workers.partial_lesson import FULL, HALF, LESSON, write_lessons


@pytest.mark.celery
@pytest.mark.slow
def test_a_late_submission_with_a_later_due_date_is_on_time_and_reaches_the_lms(
    tmp_path, redis_server
):
    root = write_lessons(tmp_path / "lessons")  # a 2-point question, a 6-point exercise
    changes = {"lessons_dir": root, "sandbox": "warm", "submit_rate": 1_000_000}
    with (
        lms_with_a_worker(tmp_path, redis_server, "grade,sync", pool=1, **changes) as lms,
        requests.Session() as student,
        requests.Session() as teacher,
    ):
        link = lms.link(lesson=LESSON, title="Two functions", score=8.0)
        headers, placement_id = signed_in_headers(student, lms, "ali", link)
        with lms.store.session() as session:  # due an hour ago; late work loses half
            session.execute(update(Placement).where(Placement.id == placement_id)
                            .values(due_at=utcnow() - timedelta(hours=1), late_penalty=0.5,
                                    max_attempts=1))  # fmt: skip
            ali = session.scalar(select(User.id).where(User.sub == lms.platform.user_sub("ali")))
        api = f"{lms.tool_url}/api/placements/{placement_id}"

        def holds():
            found = [s for (sub, _), s in lms.platform.gradebook().items()
                     if sub == lms.platform.user_sub("ali")]  # fmt: skip
            return found[0].body.get("scoreGiven") if found else None

        late = student.post(f"{api}/submissions", json={"source": HALF}, headers=headers)
        assert late.status_code == 202, late.text
        wait_for(lambda: holds() == 1.5, "1.5 of 8 (half of 3, late) in the LMS", 90)
        # one attempt, used: a second is refused until the teacher gives more
        refused = student.post(f"{api}/submissions", json={"source": FULL}, headers=headers)
        assert refused.status_code == 409, refused.text

        # the teacher, launched from the LMS, gives Ali two more days and a second attempt
        teacher_headers, _ = signed_in_headers(teacher, lms, "ada", link)
        s = teacher_headers["X-CodeBlanks-Session"]
        page_url = f"{lms.tool_url}/teach/placements/{placement_id}/students/{ali}"
        page = teacher.get(page_url, params={"s": s})
        assert page.status_code == 200, page.text
        token = unescape(re.search(r'name="csrf" value="([^"]+)"', page.text).group(1))
        due = (utcnow() + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M")
        # the form's action carries the session the page was made for (its CSRF nonce too)
        action = unescape(re.search(r'action="([^"]*/exception\?[^"]*)"', page.text).group(1))
        saved = teacher.post(lms.tool_url + action, allow_redirects=False,
                             data={"csrf": token, "due_at": due, "max_attempts": "2"})  # fmt: skip
        assert saved.status_code == 303, saved.text
        # the work handed in is on time now: its penalty goes, and the LMS gets the score
        wait_for(lambda: holds() == 3.0, "3 of 8 (half, on time) in the LMS", 90)

        on_time = student.post(f"{api}/submissions", json={"source": FULL}, headers=headers)
        assert on_time.status_code == 202, on_time.text
        wait_for(lambda: holds() == 6.0, "6 of 8 in the LMS", 90)
        with lms.store.session() as session:
            rows = session.execute(select(Submission.late, Submission.score)
                                   .order_by(Submission.id)).all()  # fmt: skip
        assert [tuple(row) for row in rows] == [(False, 0.5), (False, 1.0)]
        lesson_page = student.get(f"{lms.tool_url}/lessons/{placement_id}", headers=headers)
        assert "(an exception for you)" in lesson_page.text
        assert lms.worker.errors() == []
