"""The course roster from the LMS (NRPS): every member, including students who never launched.

It is read in the background (the `codeblanks.refresh_roster` task), asked for by a teacher's
launch and by the teacher's pages when it is stale; no request waits on the LMS for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from celery import Celery
from pylti1p3.names_roles import NamesRolesProvisioningService

from core.errors import GraderError
from service.lti.services import SCOPE_NRPS, CachingConnector, describe
from service.queue import RosterMessage, send_roster_read
from service.store import courses, memberships, roster_reads
from service.store.database import Store
from service.store.models import Course, Membership, Platform, User, utcnow

TEACHER_ROLES = ("Instructor", "TeachingAssistant", "Administrator", "ContentDeveloper")
MAX_AGE = timedelta(minutes=5)  # an older roster is read again when a teacher comes by
# at most one read asked for per course in this long: longer than a failing read's retries
# (workers.tasks), so that two of them never hammer an LMS that is down
ASK_EVERY = timedelta(minutes=2)


@dataclass(frozen=True)
class RosterSync:
    """How many members the LMS listed, and how many were new to us."""

    members: int
    added: int


def ask_for_read(store: Store, celery_app: Celery, course_id: int, now: datetime) -> bool:
    """Have the course's roster read in the background if it is stale; return whether asked.

    However many launches and pages ask at once, one read is sent per course in ASK_EVERY.
    """
    if not roster_reads.ask(store, course_id, now, MAX_AGE, ASK_EVERY):
        return False
    if not send_roster_read(celery_app, RosterMessage(course_id)):
        roster_reads.failed(store, course_id, "the task queue could not be reached")
        return False
    return True


def sync_roster(lti: Any, course_id: int) -> RosterSync | None:
    """Fetch a course's members by NRPS and upsert them as users and memberships.

    Return None if the LMS offers no roster for the course. When the LMS fails, note why on
    the course (its teacher's pages show it) and raise GraderError; a success clears it.
    """
    store = lti.store
    with store.session() as session:
        course = session.get(Course, course_id)
        if course is None or not course.memberships_url:
            return None
        platform = session.get(Platform, course.platform_id)
        assert platform is not None
        access = lti.access(platform)
        url = course.memberships_url
    service = NamesRolesProvisioningService(
        CachingConnector(access, lti.tokens, lti.http),
        {"context_memberships_url": url, "service_versions": ["2.0"], "scope": [SCOPE_NRPS]},
    )
    try:
        members = service.get_members()
    except Exception as exc:  # noqa: BLE001  the LMS's failure, reported to the teacher
        error = f"the LMS roster could not be read: {describe(exc)}"
        roster_reads.failed(store, course_id, error)
        raise GraderError(error) from exc
    added = 0
    now = utcnow()
    with store.session() as session:
        users = {
            u.sub: u for u in session.query(User).filter(User.platform_id == access.platform_id)
        }
        memberships = {
            m.user_id: m
            for m in session.query(Membership).filter(Membership.course_id == course_id)
        }
        for member in members:
            sub = str(member.get("user_id", ""))[:255]
            if not sub:
                continue
            user = users.get(sub)
            if user is None:
                user = User(platform_id=access.platform_id, sub=sub)
                session.add(user)
                users[sub] = user
            user.name = str(member.get("name") or user.name or "")[:255]
            user.email = str(member.get("email") or user.email or "")[:320]
            session.flush()
            roles = [str(r) for r in member.get("roles", [])]
            teacher = any(r.rsplit("#", 1)[-1] in TEACHER_ROLES for r in roles)
            active = member.get("status", "Active") == "Active"
            membership = memberships.get(user.id)
            if membership is None:
                membership = Membership(course_id=course_id, user_id=user.id, seen_at=None)
                session.add(membership)
                added += 1
            membership.roles = " ".join(roles)[:2000]
            membership.teacher = teacher
            membership.active = active
            membership.roster_at = now
        roster_reads.read(session, course_id, now)
    return RosterSync(len(members), added)
