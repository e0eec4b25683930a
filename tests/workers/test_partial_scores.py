"""Partial credit on its way to the LMS: an exercise's points shared by case weight, the
lesson score and the AGS scoreGiven carrying the share, and best result, late penalty and
attempts as before. Every score is read back from the demo LMS's own gradebook (the strict
stand-in for Moodle: one score a second, a Pending score blanks the grade).

The lesson (tests/workers/partial_lesson.py): a 2-point question, and a 6-point exercise of
four cases weighing 1, 2, 1, 2; so the lesson is out of 8.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
import requests
from sqlalchemy import select, update

from core.runs import RunStatus
from service.store.models import GradeSync, Placement, Submission, SyncStatus, utcnow
from testkit.lms import lms_with_a_worker, signed_in_headers
from testkit.waits import wait_for
from tests.workers.partial_lesson import (
    FULL,
    HALF,
    LESSON,
    QUESTION,
    RIGHT,
    SIXTH,
    TWO_THIRDS,
    Course,
    Student,
    open_course,
    write_lessons,
)


@pytest.fixture
def course(tmp_path):
    opened = open_course(tmp_path)
    yield opened
    opened.close()


def submission_row(course: Course, submission_id: int) -> Submission:
    with course.store.session() as session:
        row = session.get(Submission, submission_id)
        session.expunge(row)
        return row


def set_policy(course: Course, placement_id: int, **policy) -> None:
    with course.store.session() as session:
        session.execute(update(Placement).where(Placement.id == placement_id).values(**policy))


def test_half_the_exercise_and_the_question_reach_the_lms_as_5_of_8(course):
    ali = Student.launch(course, "ali", course.link())
    ali.answer()  # 2 of the 2 question points
    assert course.drain() == ["sent"]
    assert ali.in_the_lms() == (2.0, 8.0)
    submitted = ali.submit(HALF)  # passes f(1) and f(2): weights 1 + 2 of 6
    assert course.drain() == ["graded", "sent"]
    row = submission_row(course, submitted)
    assert (row.run_status, row.score) == (RunStatus.FAILED, 0.5)
    assert [(c["name"], c["status"], c["weight"]) for c in row.cases] == [
        ("f of one", "passed", 1.0), ("f of two", "passed", 2.0),
        ("g of three", "failed", 1.0), ("g of four", "failed", 2.0),
    ]  # fmt: skip
    assert ali.in_the_lms() == (5.0, 8.0)  # 2 + 6 x 0.5
    with course.store.session() as session:
        last = session.scalars(select(GradeSync).order_by(GradeSync.id.desc())).first()
        assert (last.status, last.score_given, last.score_maximum) == (SyncStatus.SENT, 5.0, 8.0)


def test_the_best_partial_result_counts(course):
    ali = Student.launch(course, "ali", course.link())
    ali.submit(HALF)
    course.drain()
    assert ali.in_the_lms() == (3.0, 8.0)
    ali.submit(SIXTH)  # worse: 1 of 6
    assert course.drain() == ["graded", "sent"]
    assert ali.in_the_lms() == (3.0, 8.0)  # the better earlier result still counts
    ali.submit(TWO_THIRDS)  # better: 4 of 6
    assert course.drain() == ["graded", "sent"]
    assert ali.in_the_lms() == (4.0, 8.0)
    given = [s.body["scoreGiven"] for s in course.lms.platform.scores(user="ali") if s.applied]
    assert given == [3.0, 3.0, 4.0]  # never lowered on the way


def test_the_late_penalty_is_taken_off_the_partial_score(course):
    ali = Student.launch(course, "ali", course.link())
    ali.answer()  # on time: 2 points whole
    course.drain()
    set_policy(course, ali.placement_id, due_at=utcnow() - timedelta(hours=1), late_penalty=0.2)
    submitted = ali.submit(HALF)  # late: 6 x 0.5 x 0.8 = 2.4
    assert course.drain() == ["graded", "sent"]
    assert submission_row(course, submitted).late is True
    assert ali.in_the_lms() == (4.4, 8.0)
    ali.submit(SIXTH)  # late and worse: 6 x 1/6 x 0.8 = 0.8 does not lower it
    course.drain()
    assert ali.in_the_lms() == (4.4, 8.0)


def test_partial_submissions_use_attempts_and_the_last_one_closes(course):
    ali = Student.launch(course, "ali", course.link())
    set_policy(course, ali.placement_id, max_attempts=2)
    ali.submit(SIXTH)
    ali.submit(HALF)  # waits its turn: sent once the one before it is graded
    assert course.drain() == ["graded", "sent", "graded", "sent"]
    refused = ali.try_submit(FULL)
    assert refused.status_code == 409 and refused.json()["error"] == "out_of_attempts"
    assert ali.in_the_lms() == (3.0, 8.0)
    assert course.messages == []


def test_a_partial_result_is_no_pass_for_the_reveal_policy(course):
    ali = Student.launch(course, "ali", course.link())
    set_policy(course, ali.placement_id, reveal="after_pass")
    ali.submit(HALF)
    course.drain()
    ali.submit(TWO_THIRDS)  # still open: a partial result shows no sample solution
    course.drain()
    ali.submit(FULL)
    course.drain()
    assert ali.in_the_lms() == (6.0, 8.0)
    refused = ali.try_submit(FULL)  # every case passed: the solution shows, submissions close
    assert refused.status_code == 409 and refused.json()["error"] == "solution_shown"


@pytest.mark.celery
@pytest.mark.slow
def test_a_partial_submission_through_the_real_worker_sandbox_and_lms(tmp_path, redis_server):
    """The whole path on real processes: the API, Redis, a Celery worker grading on the
    warm sandbox, the AGS post, and the demo LMS's gradebook."""
    root = write_lessons(tmp_path / "lessons")
    changes = {"lessons_dir": root, "sandbox": "warm", "submit_rate": 1_000_000}
    with (
        lms_with_a_worker(tmp_path, redis_server, "grade,sync", pool=1, **changes) as lms,
        requests.Session() as browser,
    ):
        link = lms.link(lesson=LESSON, title="Two functions", score=8.0)
        headers, placement_id = signed_in_headers(browser, lms, "ali", link)
        api = f"{lms.tool_url}/api/placements/{placement_id}"
        answered = browser.post(
            f"{api}/answers", json={"question_id": QUESTION, "answer": RIGHT}, headers=headers
        )
        assert answered.status_code == 201, answered.text
        submitted = browser.post(f"{api}/submissions", json={"source": HALF}, headers=headers)
        assert submitted.status_code == 202, submitted.text

        def holds():
            found = [s for (sub, _), s in lms.platform.gradebook().items()
                     if sub == lms.platform.user_sub("ali")]  # fmt: skip
            return found[0].body if found else {}

        wait_for(lambda: holds().get("scoreGiven") == 5.0, "5 of 8 in the LMS", 90)
        body = holds()
        assert (body["scoreGiven"], body["scoreMaximum"], body["gradingProgress"]) == (
            5.0, 8.0, "FullyGraded"
        )  # fmt: skip
        with lms.store.session() as session:
            row = session.scalar(select(Submission))
            assert (row.run_status, row.score) == ("failed", 0.5)
            # the real harness ran each case: the failing ones saw g's wrong values
            assert [c["status"] for c in row.cases] == ["passed", "passed", "failed", "failed"]
        assert lms.worker.errors() == []
