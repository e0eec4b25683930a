"""Drafts: the code a student is writing, kept as they type so that a reload loses nothing."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError

from service.store.database import Store, changed
from service.store.models import Draft


def save(store: Store, placement_id: int, user_id: int, source: str, now: datetime) -> None:
    """Keep the user's newest draft for the placement (one row per student and placement)."""
    mine = (Draft.placement_id == placement_id, Draft.user_id == user_id)
    values = {"source": source, "updated_at": now}
    try:
        with store.session() as session:
            if not changed(session, update(Draft).where(*mine).values(**values)):
                changed(
                    session,
                    insert(Draft).values(placement_id=placement_id, user_id=user_id, **values),
                )
    except IntegrityError:
        # two first saves at once (PostgreSQL): the other one made the row; update it
        with store.session() as session:
            changed(session, update(Draft).where(*mine).values(**values))


def load(store: Store, placement_id: int, user_id: int) -> Draft | None:
    """Return the user's draft for the placement, or None."""
    with store.reading() as session:
        return session.scalar(
            select(Draft).where(Draft.placement_id == placement_id, Draft.user_id == user_id)
        )
