"""A student's work on a placement, read back: their answers and submissions, and the
failures many submissions share."""

from __future__ import annotations

from dataclasses import dataclass

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
