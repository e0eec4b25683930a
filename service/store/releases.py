"""Placements that hold their scores: the release (the teacher's, or the sweep's at its date).

While a placement holds its scores, its syncs post "handed in" without the points and are
then held (core.syncs), as a regrade's are; a release makes them pending again through the
one release of held scores (grades.release_held), so that each student's score goes out
FullyGraded, once.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from service.queue import SyncMessage
from service.store import grades, regrades
from service.store.database import changed
from service.store.models import Placement


def release(session: Session, placement_id: int, now: datetime) -> list[int]:
    """Release the placement's held scores; return the users whose scores now go out.

    A conditional update marks it released: of two releases at once, one releases and the
    other returns []; so does a release of scores not held. A regrade under review keeps its
    scores (and the placement's) held until the teacher sends it, which releases them all.
    """
    won = changed(
        session,
        update(Placement)
        .where(
            Placement.id == placement_id,
            Placement.hold_scores.is_(True),
            Placement.released_at.is_(None),
        )
        .values(released_at=now),
    )
    if won != 1 or regrades.open_regrade(session, placement_id) is not None:
        return []
    return grades.release_held(session, placement_id, now)


def set_hold(
    session: Session, placement_id: int, hold: bool, release_at: datetime | None, now: datetime
) -> list[int]:
    """Keep whether the placement holds its scores, and until when; return users released.

    Turning the hold off releases what it held; turning it on holds the scores from now on.
    """
    placement = session.get(Placement, placement_id)
    if placement is None:
        return []
    users = [] if hold else release(session, placement_id, now)
    if hold and not placement.hold_scores:
        placement.released_at = None
    placement.hold_scores = hold
    placement.release_at = release_at
    return users


def due(session: Session, now: datetime) -> list[SyncMessage]:
    """Release every placement whose release date has come; return the syncs to send."""
    ids = session.scalars(
        select(Placement.id).where(
            Placement.hold_scores.is_(True),
            Placement.released_at.is_(None),
            Placement.release_at.is_not(None),
            Placement.release_at <= now,
        )
    )
    return [
        SyncMessage(user_id, placement_id)
        for placement_id in list(ids)
        for user_id in release(session, placement_id, now)
    ]
