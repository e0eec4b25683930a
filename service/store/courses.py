"""Courses (LTI contexts), and where a course's roster is read from."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from service.store.database import Store
from service.store.models import Course, Platform


@dataclass(frozen=True)
class RosterSource:
    """Where to read a course's roster: its platform, and the LMS's NRPS URL for it."""

    platform: Platform
    memberships_url: str


def get(session: Session, course_id: int) -> Course | None:
    """Return the course, or None."""
    return session.get(Course, course_id)


def roster_source(store: Store, course_id: int) -> RosterSource | None:
    """Return where the course's roster is read, or None if the LMS offers none for it."""
    with store.session() as session:
        course = session.get(Course, course_id)
        if course is None or not course.memberships_url:
            return None
        platform = session.get(Platform, course.platform_id)
        assert platform is not None  # a course is deleted with its platform
        return RosterSource(platform, course.memberships_url)
