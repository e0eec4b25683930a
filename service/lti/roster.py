"""The course roster from the LMS (NRPS): every member, including students who never launched."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pylti1p3.names_roles import NamesRolesProvisioningService

from core.errors import GraderError
from service.lti.services import SCOPE_NRPS, CachingConnector, describe
from service.store.models import Course, Membership, Platform, User, utcnow

TEACHER_ROLES = ("Instructor", "TeachingAssistant", "Administrator", "ContentDeveloper")


@dataclass(frozen=True)
class RosterSync:
    """How many members the LMS listed, and how many were new to us."""

    members: int
    added: int


def sync_roster(lti: Any, course_id: int) -> RosterSync:
    """Fetch a course's members by NRPS and upsert them as users and memberships."""
    store = lti.store
    with store.session() as session:
        course = session.get(Course, course_id)
        if course is None or not course.memberships_url:
            raise GraderError("the LMS gave no roster service for this course")
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
        raise GraderError(f"the LMS roster could not be read: {describe(exc)}") from exc
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
    return RosterSync(len(members), added)
