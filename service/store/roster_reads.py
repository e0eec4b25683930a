"""A course's roster reads from the LMS (NRPS): asked for, done, or failed, in one row.

The roster is read by a background task. Asking is one conditional UPDATE, so that however
many launches and page views arrive at once, one of them asks, and no course is asked for
more than once in `every` (service.lti.roster decides both intervals).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import or_, update
from sqlalchemy.orm import Session

from service.store.database import Store, changed
from service.store.models import Course

ERROR_LENGTH = 500  # Course.roster_error


@dataclass(frozen=True)
class RosterState:
    """Where a course's roster stands: whether the LMS offers one, and its last reads."""

    offered: bool  # the LMS gave a roster service (an NRPS URL) for the course
    requested_at: datetime | None
    read_at: datetime | None
    error: str | None  # why the last read failed; None once one succeeds

    def stale(self, now: datetime, max_age: timedelta) -> bool:
        """Return whether the roster was never read, or not within `max_age`."""
        return self.read_at is None or now - self.read_at >= max_age

    @property
    def pending(self) -> bool:
        """Return whether a read was asked for after the last one that succeeded."""
        return self.requested_at is not None and (
            self.read_at is None or self.requested_at > self.read_at
        )


def state(session: Session, course_id: int) -> RosterState | None:
    """Return the course's roster state, or None if there is no such course."""
    course = session.get(Course, course_id)
    if course is None:
        return None
    return RosterState(
        bool(course.memberships_url),
        course.roster_requested_at,
        course.roster_read_at,
        course.roster_error,
    )


def ask(store: Store, course_id: int, now: datetime, max_age: timedelta, every: timedelta) -> bool:
    """Note a read as asked for, if the LMS offers a roster, it is stale and none was asked
    for within `every`; return whether this caller is the one to ask."""
    with store.session() as session:
        return bool(
            changed(
                session,
                update(Course)
                .where(
                    Course.id == course_id,
                    Course.memberships_url.is_not(None),
                    or_(Course.roster_read_at.is_(None), Course.roster_read_at <= now - max_age),
                    or_(
                        Course.roster_requested_at.is_(None),
                        Course.roster_requested_at <= now - every,
                    ),
                )
                .values(roster_requested_at=now),
            )
        )


def read(session: Session, course_id: int, now: datetime) -> None:
    """Note a successful read: the roster is fresh, and no error stands."""
    changed(
        session,
        update(Course).where(Course.id == course_id).values(roster_read_at=now, roster_error=None),
    )


def failed(store: Store, course_id: int, error: str) -> None:
    """Note why a read failed, for the teacher's pages; the next success clears it."""
    with store.session() as session:
        changed(
            session,
            update(Course).where(Course.id == course_id).values(roster_error=error[:ERROR_LENGTH]),
        )
