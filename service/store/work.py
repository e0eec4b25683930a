"""A student's work on a placement, read back: their answers and submissions (whole, or as
their attempts list shows them), and the failures many submissions share."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from service.store.models import QuestionAnswer, Submission, SubmissionStatus


@dataclass(frozen=True)
class FailingLine:
    """A first differing line that failing submissions share."""

    line: int
    expected: str | None
    submissions: int
    students: int


def answers(session: Session, placement_id: int, user_id: int) -> list[QuestionAnswer]:
    """Return the user's answers to the placement's questions."""
    return list(
        session.scalars(
            select(QuestionAnswer).where(
                QuestionAnswer.placement_id == placement_id, QuestionAnswer.user_id == user_id
            )
        )
    )


def submissions(session: Session, placement_id: int, user_id: int) -> list[Submission]:
    """Return the user's submissions on the placement, newest first."""
    return list(
        session.scalars(
            select(Submission)
            .where(Submission.placement_id == placement_id, Submission.user_id == user_id)
            .order_by(Submission.id.desc())
        )
    )


@dataclass(frozen=True)
class AttemptRow:
    """A submission as its author's list of attempts shows it: all but its code.

    It is a core.student_views.StoredVerdict (run_status, duration_ms, message, cases), so
    the list shows each verdict as its student may see it.
    """

    id: int
    number: int  # its place among its author's submissions on the placement, the first 1
    created_at: datetime
    status: str
    late: bool
    grader_error: str | None
    regrades: int
    run_status: str | None
    duration_ms: int | None
    message: Any
    cases: Any


@dataclass(frozen=True)
class Attempt:
    """One of a student's submissions on a placement, whole, with its neighbours' places."""

    submission: Submission
    number: int
    previous: tuple[int, str] | None  # the submission before it: its id and code
    next_id: int | None  # the submission after it


_LISTED = (
    Submission.id,
    Submission.created_at,
    Submission.status,
    Submission.late,
    Submission.grader_error,
    Submission.regrades,
    Submission.run_status,
    Submission.duration_ms,
    Submission.message,
    Submission.cases,
)


def attempt_rows(
    session: Session, placement_id: int, user_id: int, limit: int, offset: int = 0
) -> list[AttemptRow]:
    """Return up to `limit` of the user's submissions on the placement, newest first,
    after skipping the `offset` newest, without their code (a list of 200 attempts of
    64 KiB each would read 12.5 MiB for a page that shows none of it)."""
    number = func.row_number().over(order_by=Submission.id).label("number")
    numbered = (
        select(*_LISTED, number)
        .where(Submission.placement_id == placement_id, Submission.user_id == user_id)
        .subquery()
    )
    query = select(numbered).order_by(numbered.c.id.desc()).limit(limit).offset(offset)
    return [AttemptRow(**row._asdict()) for row in session.execute(query)]


def attempt_count(session: Session, placement_id: int, user_id: int) -> int:
    """Return how many submissions the user has made on the placement (grader faults too)."""
    query = select(func.count(Submission.id)).where(
        Submission.placement_id == placement_id, Submission.user_id == user_id
    )
    return session.scalar(query) or 0


def attempt(
    session: Session, placement_id: int, user_id: int, submission_id: int
) -> Attempt | None:
    """Return one of the user's submissions on the placement, or None if it is not one."""
    found = session.scalar(
        select(Submission).where(
            Submission.id == submission_id,
            Submission.placement_id == placement_id,
            Submission.user_id == user_id,
        )
    )
    if found is None:
        return None
    theirs = (Submission.placement_id == placement_id, Submission.user_id == user_id)
    number = session.scalar(
        select(func.count(Submission.id)).where(*theirs, Submission.id <= submission_id)
    )
    before = session.execute(
        select(Submission.id, Submission.source)
        .where(*theirs, Submission.id < submission_id)
        .order_by(Submission.id.desc())
        .limit(1)
    ).first()
    after = session.scalar(
        select(func.min(Submission.id)).where(*theirs, Submission.id > submission_id)
    )
    previous = (before.id, before.source) if before is not None else None
    return Attempt(found, number or 1, previous, after)


def attempt_source(
    session: Session, placement_id: int, user_id: int, submission_id: int
) -> str | None:
    """Return the code of one of the user's submissions on the placement, or None."""
    return session.scalar(
        select(Submission.source).where(
            Submission.id == submission_id,
            Submission.placement_id == placement_id,
            Submission.user_id == user_id,
        )
    )


def newest(
    session: Session, placement_id: int, user_id: int, graded: bool = False
) -> Submission | None:
    """Return the user's newest submission on the placement (the newest graded one), whole."""
    query = select(Submission).where(
        Submission.placement_id == placement_id, Submission.user_id == user_id
    )
    if graded:
        query = query.where(Submission.status == SubmissionStatus.GRADED)
    return session.scalar(query.order_by(Submission.id.desc()).limit(1))


def failing_lines(session: Session, placement_id: int, limit: int) -> list[FailingLine]:
    """Return the first differing lines most graded submissions share, commonest first."""
    return [
        FailingLine(int(line or 0), expected, count, students)
        for line, expected, count, students in session.execute(
            select(
                Submission.diff_line,
                Submission.diff_expected,
                func.count(Submission.id),
                func.count(func.distinct(Submission.user_id)),
            )
            .where(
                Submission.placement_id == placement_id,
                Submission.status == SubmissionStatus.GRADED,
                Submission.diff_line.is_not(None),
            )
            .group_by(Submission.diff_line, Submission.diff_expected)
            .order_by(func.count(Submission.id).desc(), Submission.diff_line)
            .limit(limit)
        )
    ]
