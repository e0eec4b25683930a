"""A teacher's overrides of scores: every change kept, the newest of a pair standing.

core.overrides decides what an override makes of a score; here are its rows. A change is a
new row, never an update, so the history says who set what, with which comment, and when.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, bindparam, func, select
from sqlalchemy.orm import Session, aliased

from core.overrides import Change, Override, Part
from service.store.models import ScoreOverride, User

Pair = tuple[int, int]  # (placement id, user id)

# read for every grade sync: built once, with bound parameters (see service.store.grades)
_STANDING = (
    select(
        ScoreOverride.change,
        ScoreOverride.part,
        ScoreOverride.given,
        ScoreOverride.comment,
        ScoreOverride.automatic,
    )
    .where(
        ScoreOverride.placement_id == bindparam("placement"),
        ScoreOverride.user_id == bindparam("user"),
    )
    .order_by(ScoreOverride.id.desc())
    .limit(1)
)


@dataclass(frozen=True)
class Entry:
    """One manual change of a score, as the teacher's page lists it."""

    change: Change
    part: Part
    given: float | None  # None: removed
    comment: str
    automatic: float  # the part's automatic points at the time
    by: str  # the teacher's name ("" once their account is gone)
    at: datetime


def _override(
    change: str, part: str, given: float | None, comment: str, automatic: float
) -> Override | None:
    if change == Change.REMOVED or given is None:
        return None
    return Override(Part(part), given, comment, automatic)


def standing(session: Session | Connection, placement_id: int, user_id: int) -> Override | None:
    """Return the override that stands on the pair's score, or None: the automatic one counts."""
    row = session.execute(_STANDING, {"placement": placement_id, "user": user_id}).first()
    return None if row is None else _override(*row)


def standing_on(session: Session, placement_ids: list[int]) -> dict[Pair, Override]:
    """Return the overrides that stand on the placements' scores, by (placement, user)."""
    newest = (
        select(func.max(ScoreOverride.id))
        .where(ScoreOverride.placement_id.in_(placement_ids))
        .group_by(ScoreOverride.placement_id, ScoreOverride.user_id)
    )
    rows = session.execute(
        select(
            ScoreOverride.placement_id,
            ScoreOverride.user_id,
            ScoreOverride.change,
            ScoreOverride.part,
            ScoreOverride.given,
            ScoreOverride.comment,
            ScoreOverride.automatic,
        ).where(ScoreOverride.id.in_(newest))
    )
    found: dict[Pair, Override] = {}
    for placement_id, user_id, change, part, given, comment, automatic in rows:
        override = _override(change, part, given, comment, automatic)
        if override is not None:
            found[(placement_id, user_id)] = override
    return found


def history(session: Session, placement_id: int, user_id: int) -> list[Entry]:
    """Return every manual change of the pair's score, newest first."""
    teacher = aliased(User)
    rows = session.execute(
        select(ScoreOverride, teacher.name, teacher.sub)
        .outerjoin(teacher, teacher.id == ScoreOverride.set_by)
        .where(ScoreOverride.placement_id == placement_id, ScoreOverride.user_id == user_id)
        .order_by(ScoreOverride.id.desc())
    )
    return [
        Entry(
            Change(row.change),
            Part(row.part),
            row.given,
            row.comment,
            row.automatic,
            name or sub or "",
            row.set_at,
        )
        for row, name, sub in rows
    ]


def record(
    session: Session,
    placement_id: int,
    user_id: int,
    change: Change,
    part: Part,
    given: float | None,
    comment: str,
    automatic: float,
    by: int,
    now: datetime,
) -> None:
    """Keep one manual change of the pair's score (the caller makes its grade sync)."""
    session.add(
        ScoreOverride(
            placement_id=placement_id,
            user_id=user_id,
            change=change,
            part=part,
            given=given,
            comment=comment,
            automatic=automatic,
            set_by=by,
            set_at=now,
        )
    )
    session.flush()
