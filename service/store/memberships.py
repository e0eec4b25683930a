"""Course memberships: who is in a course, from their launches and from the LMS roster."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.store import roster_reads
from service.store.database import Store
from service.store.models import Membership, User


@dataclass(frozen=True)
class RosterMember:
    """A member as the LMS's roster lists them."""

    sub: str
    name: str  # "" when the roster gives none: the stored name is kept
    email: str  # likewise
    roles: str
    teacher: bool
    active: bool


def is_member(session: Session, course_id: int, user_id: int) -> bool:
    """Return whether the user is in the course (as a launch or the roster showed them)."""
    found = session.scalar(
        select(Membership.id).where(
            Membership.course_id == course_id, Membership.user_id == user_id
        )
    )
    return found is not None


def students(session: Session, course_id: int) -> list[tuple[User, bool]]:
    """Return the course's students (members who do not teach it), each with whether active."""
    return [
        (user, bool(active))
        for user, active in session.execute(
            select(User, Membership.active)
            .join(Membership, Membership.user_id == User.id)
            .where(Membership.course_id == course_id, Membership.teacher.is_(False))
        )
    ]


def users(session: Session, user_ids: Iterable[int]) -> list[User]:
    """Return the users with these ids."""
    return list(session.scalars(select(User).where(User.id.in_(list(user_ids)))))


def user(session: Session, user_id: int) -> User | None:
    """Return the user, or None."""
    return session.get(User, user_id)


def save_roster(
    store: Store, course_id: int, platform_id: int, members: Sequence[RosterMember], now: datetime
) -> int:
    """Upsert the roster's users and memberships, and note the read; return how many joined."""
    added = 0
    with store.session() as session:
        known = {
            u.sub: u for u in session.scalars(select(User).where(User.platform_id == platform_id))
        }
        memberships = {
            m.user_id: m
            for m in session.scalars(select(Membership).where(Membership.course_id == course_id))
        }
        for member in members:
            found = known.get(member.sub)
            if found is None:
                found = User(platform_id=platform_id, sub=member.sub)
                session.add(found)
                known[member.sub] = found
            found.name = (member.name or found.name or "")[:255]
            found.email = (member.email or found.email or "")[:320]
            session.flush()
            membership = memberships.get(found.id)
            if membership is None:
                membership = Membership(course_id=course_id, user_id=found.id, seen_at=None)
                session.add(membership)
                added += 1
            membership.roles = member.roles
            membership.teacher = member.teacher
            membership.active = member.active
            membership.roster_at = now
        roster_reads.read(session, course_id, now)
    return added


def member_of(store: Store, course_id: int, platform_id: int, sub: str) -> int | None:
    """Return the id of the course's member known to the platform by `sub`, or None."""
    with store.reading() as session:
        return session.scalar(
            select(User.id)
            .join(Membership, Membership.user_id == User.id)
            .where(
                User.platform_id == platform_id,
                User.sub == sub,
                Membership.course_id == course_id,
            )
        )
