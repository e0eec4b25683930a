"""What a student does with a placement: submit code, answer a question, follow a submission.

Refusals are `Refused` (a status code, a stable error code and a sentence); the JSON API
renders them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from celery import Celery
from sqlalchemy import Connection, bindparam, func, insert, select
from sqlalchemy.orm import Session

from core.lessons import Catalog, Lesson
from core.placements import Closure, Reveal
from core.questions import AnswerError, score_answer
from service.queue import GradeMessage, send_grade
from service.settings import Settings
from service.store import drafts, grades, submissions
from service.store.database import Store
from service.store.models import Placement, QuestionAnswer, Submission, User
from service.web.auth import SignedIn


class Refused(Exception):
    """A request the student cannot have, with what to tell them."""

    def __init__(
        self, status: int, error: str, message: str, retry_after: int | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.message = message
        self.retry_after = retry_after


@dataclass(frozen=True)
class Scored:
    """A scored answer, as the student sees it."""

    question_id: str
    earned: float
    possible: float
    explanation: str

    def as_json(self) -> dict[str, object]:
        """Return the answer's result for the JSON API."""
        return {
            "question_id": self.question_id,
            "earned": self.earned,
            "possible": self.possible,
            "correct": self.earned >= self.possible,
            "explanation": self.explanation,
        }


@dataclass(frozen=True)
class Submitted:
    """A queued submission."""

    submission_id: int


# The statements of every submission, built once with bound parameters: building a
# statement costs more CPU than SQLite takes to run it.
_SUBMITTING = select(
    Placement.lesson_id,
    Placement.reveal,
    Placement.reveal_after_attempts,
    Placement.max_attempts,
    Placement.due_at,
    Placement.late_penalty,
).where(Placement.id == bindparam("placement"))
_RECENT = select(func.count(Submission.id), func.min(Submission.created_at)).where(
    Submission.user_id == bindparam("user"), Submission.created_at > bindparam("since")
)
_QUEUED = (
    insert(Submission)
    .values(
        placement_id=bindparam("placement"),
        user_id=bindparam("user"),
        source=bindparam("code"),
        late=bindparam("is_late"),
        created_at=bindparam("now"),
        enqueued_at=bindparam("now"),
    )
    .returning(Submission.id)
)


def submit(
    store: Store,
    catalog: Catalog,
    settings: Settings,
    user: SignedIn,
    placement_id: int,
    source: str,
    now: datetime,
) -> Submitted:
    """Check the placement, the rate and the policy, then write a queued submission."""
    if not user.may_open(placement_id):
        raise Refused(403, "not_launched", "Open this lesson from your course first.")
    with store.transaction() as connection:
        placement = connection.execute(_SUBMITTING, {"placement": placement_id}).first()
        if placement is None:
            raise Refused(404, "unknown_placement", "There is no such lesson placement.")
        lesson = _lesson(catalog, placement.lesson_id)
        if lesson.exercise is None:
            raise Refused(404, "no_exercise", "This lesson has no exercise to submit code to.")
        if not store.is_sqlite:
            # one student's submissions are taken one at a time, so that two at once cannot
            # both use the last attempt (SQLite's transactions are serial already)
            connection.execute(select(User.id).where(User.id == user.user_id).with_for_update())
        _check_rate(connection, user.user_id, now, settings)
        policy = grades.policy_of(placement)
        used = None  # without a limit (or a reveal that counts them), attempts need no counting
        if policy.max_attempts is not None or policy.reveal is Reveal.AFTER_ATTEMPTS:
            used = submissions.attempts_used(connection, placement_id, user.user_id)
        passed = policy.reveal is Reveal.AFTER_PASS and submissions.has_passed(
            connection, placement_id, user.user_id
        )
        # once the sample solution is shown, handing it in would earn its points
        revealed = policy.reveals(now, used or 0, passed)
        closed = policy.closed(now, used, revealed)
        if closed is not None:
            status = 403 if closed.closure is Closure.PAST_DUE else 409
            raise Refused(status, closed.closure.value, closed.message)
        row = {"placement": placement_id, "user": user.user_id, "now": now}
        created = connection.execute(
            _QUEUED, {**row, "code": source, "is_late": policy.is_late(now)}
        )
        # nothing goes to the LMS yet: a score posted now could only repeat the one it holds
        # (Moodle blanks a Pending one), and would push the graded score a second later
        return Submitted(int(created.scalar_one()))


def send_to_grading(celery_app: Celery, sent: Submitted) -> None:
    """Enqueue a committed submission's grading; its grade goes to the LMS once graded."""
    # after the commit: a lost message only delays the grade (the sweep sends it again)
    send_grade(celery_app, GradeMessage(sent.submission_id))


def answer(
    store: Store,
    catalog: Catalog,
    user: SignedIn,
    placement_id: int,
    question_id: str,
    given: object,
    now: datetime,
) -> Scored:
    """Score an answer at once and keep it; the first answer to a question counts."""
    with store.session() as session:
        placement, lesson = open_placement(session, catalog, user, placement_id)
        question = lesson.question(question_id)
        if question is None:
            raise Refused(404, "unknown_question", f"This lesson has no question {question_id!r}.")
        policy = grades.policy_of(placement)
        closed = policy.closed(now)
        if closed is not None:
            raise Refused(403, closed.closure.value, closed.message)
        try:
            result = score_answer(question, given)
        except AnswerError as exc:
            raise Refused(400, "malformed_answer", f"The answer does not fit: {exc}.") from None
        earlier = session.scalar(
            select(QuestionAnswer).where(
                QuestionAnswer.placement_id == placement.id,
                QuestionAnswer.user_id == user.user_id,
                QuestionAnswer.question_id == question.id,
            )
        )
        if earlier is not None:
            raise Refused(409, "already_answered", "You have answered this question already.")
        session.add(
            QuestionAnswer(
                placement_id=placement.id,
                user_id=user.user_id,
                question_id=question.id,
                answer=given,
                earned=result.earned,
                possible=result.possible,
                late=policy.is_late(now),
                created_at=now,
            )
        )
        grades.needs_sync(session, placement.id, user.user_id, now)
    return Scored(question.id, result.earned, result.possible, question.explanation)


def save_draft(
    store: Store,
    catalog: Catalog,
    user: SignedIn,
    placement_id: int,
    source: str,
    now: datetime,
) -> None:
    """Keep the student's newest unsubmitted code for the placement's exercise."""
    with store.reading() as session:
        open_placement(session, catalog, user, placement_id)
    drafts.save(store, placement_id, user.user_id, source, now)


def status_of(store: Store, user: SignedIn, submission_id: int) -> dict[str, Any]:
    """Return the submission's status and, once graded, its verdict; only to its author."""
    with store.reading() as session:
        submission = session.get(Submission, submission_id)
        if submission is None or submission.user_id != user.user_id:
            raise Refused(404, "unknown_submission", "There is no such submission of yours.")
        return describe(submission)


def describe(submission: Submission) -> dict[str, Any]:
    """Return a submission as the JSON API shows it."""
    graded = submission.status == submissions.GRADED
    verdict = None
    if graded:
        difference = None
        if submission.diff_line is not None:
            difference = {
                "line": submission.diff_line,
                "expected": submission.diff_expected,
                "got": submission.diff_got,
            }
        verdict = {
            "status": submission.run_status,
            "score": submission.score,
            "stdout": submission.stdout,
            "stderr": submission.stderr,
            "exit_code": submission.exit_code,
            "duration_ms": submission.duration_ms,
            "feedback": submission.feedback,
            "first_difference": difference,
            "grader_failed": submission.grader_error is not None,
        }
    return {
        "id": submission.id,
        "placement_id": submission.placement_id,
        # a submission queued again for a bulk regrade keeps showing its last verdict
        "status": submission.status,
        "late": submission.late,
        "created_at": submission.created_at.isoformat(),
        "graded_at": submission.graded_at.isoformat() if submission.graded_at else None,
        "verdict": verdict,
    }


def open_placement(
    session: Session, catalog: Catalog, user: SignedIn, placement_id: int
) -> tuple[Placement, Lesson]:
    """Return the placement and its lesson, if the user's launches opened it."""
    # the launch check first: whether a placement exists is nobody else's business
    if not user.may_open(placement_id):
        raise Refused(403, "not_launched", "Open this lesson from your course first.")
    placement = session.get(Placement, placement_id)
    if placement is None:
        raise Refused(404, "unknown_placement", "There is no such lesson placement.")
    return placement, _lesson(catalog, placement.lesson_id)


def _lesson(catalog: Catalog, lesson_id: str) -> Lesson:
    lesson = catalog.lesson(lesson_id)
    if lesson is None:
        raise Refused(404, "unknown_lesson", f"The lesson {lesson_id!r} is not in the catalog.")
    return lesson


def _check_rate(connection: Connection, user_id: int, now: datetime, settings: Settings) -> None:
    since = now - timedelta(seconds=settings.submit_window_s)
    count, oldest = connection.execute(_RECENT, {"user": user_id, "since": since}).one()
    if count >= settings.submit_rate:
        wait = math.ceil((oldest - since).total_seconds()) or 1
        raise Refused(
            429,
            "rate_limited",
            f"You submitted {count} times in {settings.submit_window_s} s; "
            f"wait {wait} s before submitting again.",
            retry_after=wait,
        )
