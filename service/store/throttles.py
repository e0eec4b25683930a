"""Counts of failures per key in a time window, shared by every web process (the database).

Used to slow password guessing on the admin page: once a key has failed `limit` times in
its window, further attempts are refused until the window ends, without checking them.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from service.store.database import Store
from service.store.models import LoginFailures


def wait_s(store: Store, limits: Mapping[str, int], window: timedelta, now: datetime) -> int:
    """Return the seconds until every key is under its limit again (0: go ahead)."""
    with store.reading() as session:
        rows = session.scalars(select(LoginFailures).where(LoginFailures.key.in_(list(limits))))
        waits = [
            (row.window_start + window - now).total_seconds()
            for row in rows
            if row.count >= limits[row.key] and row.window_start + window > now
        ]
    return max([int(w) + 1 for w in waits], default=0)


def fail(store: Store, keys: list[str], window: timedelta, now: datetime) -> None:
    """Count one failure for each key, starting a new window where the last one ended."""
    try:
        _count(store, keys, window, now)
    except IntegrityError:
        _count(store, keys, window, now)  # another process made the row first: count on it


def _count(store: Store, keys: list[str], window: timedelta, now: datetime) -> None:
    with store.session() as session:
        for key in keys:
            row = session.get(LoginFailures, key, with_for_update=not store.is_sqlite)
            if row is None:
                session.add(LoginFailures(key=key, count=1, window_start=now))
            elif row.window_start + window <= now:
                row.count, row.window_start = 1, now
            else:
                row.count += 1


def forget(store: Store, key: str) -> None:
    """Clear a key's failures (its owner proved who they are)."""
    with store.session() as session:
        session.execute(delete(LoginFailures).where(LoginFailures.key == key))
