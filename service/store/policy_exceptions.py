"""Students' exceptions to a placement's policy: read, set (with who and when), removed.

Setting or removing one re-computes what it changes in the same transaction: the late
flag of the student's work against their due date, and a grade sync so that the LMS gets
the score (a waived penalty changes it) once committed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from core.placements import StudentException
from service.store import grades, policies
from service.store.database import changed
from service.store.models import Placement, PolicyException, QuestionAnswer, Submission, User

Pair = tuple[int, int]  # (placement id, user id)


@dataclass(frozen=True)
class Set:
    """A student's exception, and who set it when."""

    exception: StudentException
    by: str  # the teacher's name, or "" once their account is gone
    at: datetime


def _of(row: PolicyException) -> StudentException:
    return StudentException(row.due_at, row.max_attempts, row.waive_penalty)


def get(session: Session, placement_id: int, user_id: int) -> Set | None:
    """Return the user's exception on the placement, or None."""
    found = session.execute(
        select(PolicyException, User.name, User.sub)
        .outerjoin(User, User.id == PolicyException.set_by)
        .where(PolicyException.placement_id == placement_id, PolicyException.user_id == user_id)
    ).first()
    if found is None:
        return None
    row, name, sub = found
    return Set(_of(row), name or sub or "", row.set_at)


def of_placements(session: Session, placement_ids: list[int]) -> dict[Pair, StudentException]:
    """Return every student's exception on the placements, keyed by (placement, user)."""
    rows = session.scalars(
        select(PolicyException).where(PolicyException.placement_id.in_(placement_ids))
    )
    return {(row.placement_id, row.user_id): _of(row) for row in rows}


def of_user(
    session: Session, user_id: int, placement_ids: list[int]
) -> dict[int, StudentException]:
    """Return the user's exceptions on the placements, keyed by placement."""
    rows = session.scalars(
        select(PolicyException).where(
            PolicyException.placement_id.in_(placement_ids), PolicyException.user_id == user_id
        )
    )
    return {row.placement_id: _of(row) for row in rows}


def save(
    session: Session,
    placement: Placement,
    user_id: int,
    exception: StudentException | None,
    by: int,
    now: datetime,
) -> bool:
    """Set the user's exception on the placement (None removes it); say whether a sync follows.

    The late flag of the user's work is set again against their new due date, and a sync
    of their grade is queued when they have work to grade.
    """
    where = (PolicyException.placement_id == placement.id, PolicyException.user_id == user_id)
    session.execute(delete(PolicyException).where(*where))
    if exception is not None:
        session.add(
            PolicyException(
                placement_id=placement.id,
                user_id=user_id,
                due_at=exception.due_at,
                max_attempts=exception.max_attempts,
                waive_penalty=exception.waive_penalty,
                set_by=by,
                set_at=now,
            )
        )
    session.flush()
    due = policies.policy_of(placement, exception).due_at
    worked = 0
    for kind in (Submission, QuestionAnswer):
        late = False if due is None else kind.created_at > due
        worked += changed(
            session,
            update(kind)
            .where(kind.placement_id == placement.id, kind.user_id == user_id)
            .values(late=late),
        )
    if not worked:
        return False
    held = grades.awaits_review(session, placement.id, user_id)
    grades.needs_sync(session, placement.id, user_id, now, held=held)
    return not held
