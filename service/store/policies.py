"""A student's policy on a placement: the placement's, with their exception applied.

The one read of it (core.placements.Policy.for_student decides what the exception changes):
the submit path, the answers, the reveals and the pages ask here, and the score SQL takes
LATE_PENALTY with the exception outer-joined by excepted(). tests/test_architecture.py holds
every other module to it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Connection, Row, and_, bindparam, case, func, select
from sqlalchemy.orm import Session

from core.placements import Policy, Reveal, StudentException
from service.store.models import Placement, PolicyException


def excepted(placement_id: Any, user_id: Any) -> ColumnElement[bool]:
    """Return the condition that picks the exception of a (placement, user): to outer-join."""
    return and_(PolicyException.placement_id == placement_id, PolicyException.user_id == user_id)


# the share (0..1) taken off late work: the placement's, or nothing when the student's
# exception waives it (with policy_exceptions outer-joined by excepted())
LATE_PENALTY = case(
    (PolicyException.waive_penalty.is_(True), 0.0),
    else_=func.coalesce(Placement.late_penalty, 0.0),
)
# the student's exception, labelled as exception_of() reads it
_EXCEPTION_COLUMNS = (
    PolicyException.due_at.label("exception_due_at"),
    PolicyException.max_attempts.label("exception_max_attempts"),
    PolicyException.waive_penalty.label("exception_waives"),
)
_EXCEPTION = select(*_EXCEPTION_COLUMNS).where(excepted(bindparam("placement"), bindparam("user")))
# the submit path's: the placement's policy and the student's exception, in one read
_SUBMITTING = (
    select(
        Placement.lesson_id,
        Placement.reveal,
        Placement.reveal_after_attempts,
        Placement.max_attempts,
        Placement.due_at,
        Placement.late_penalty,
        *_EXCEPTION_COLUMNS,
    )
    .outerjoin(PolicyException, excepted(Placement.id, bindparam("user")))
    .where(Placement.id == bindparam("placement"))
)


def policy_of(placement: Placement | Row[Any], exception: StudentException | None) -> Policy:
    """Return a student's policy on the placement (from the row, or its columns).

    `exception` is the student's (exception_of); None only for a student who has none, or
    for the placement's own policy, as its teacher sets it.
    """
    return Policy(
        reveal=Reveal(placement.reveal),
        reveal_after_attempts=placement.reveal_after_attempts,
        max_attempts=placement.max_attempts,
        due_at=placement.due_at,
        late_penalty=placement.late_penalty,
    ).for_student(exception)


def exception_of(row: Any) -> StudentException | None:
    """Return the student's exception from a row with its labelled columns, or None."""
    if row is None or row.exception_waives is None:  # no exception row was joined
        return None
    return StudentException(
        row.exception_due_at, row.exception_max_attempts, bool(row.exception_waives)
    )


def student_policy(session: Session | Connection, placement: Placement, user_id: int) -> Policy:
    """Return the user's policy on the placement: the placement's, with their exception."""
    found: Any = session.execute(_EXCEPTION, {"placement": placement.id, "user": user_id}).first()
    return policy_of(placement, exception_of(found))


def submitting(
    connection: Connection, placement_id: int, user_id: int
) -> tuple[str, Policy] | None:
    """Return the placement's lesson id and the user's policy on it, or None without one."""
    found: Any = connection.execute(_SUBMITTING, {"placement": placement_id, "user": user_id})
    found = found.first()
    return None if found is None else (found.lesson_id, policy_of(found, exception_of(found)))
