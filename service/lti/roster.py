"""The course roster from the LMS (NRPS): every member, including students who never launched.

It is read in the background (the `codeblanks.refresh_roster` task), asked for by a teacher's
launch and by the teacher's pages when it is stale; no request waits on the LMS for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from celery import Celery
from pylti1p3.names_roles import NamesRolesProvisioningService, TMember

from core.errors import GraderError
from service.lti.services import SCOPE_NRPS, CachingConnector, describe
from service.queue import RosterMessage, send_roster_read
from service.store import courses, memberships, roster_reads
from service.store.database import Store
from service.store.memberships import RosterMember
from service.store.models import utcnow

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
    source = courses.roster_source(store, course_id)
    if source is None:
        return None
    access = lti.access(source.platform)
    url = source.memberships_url
    service = NamesRolesProvisioningService(
        CachingConnector(access, lti.tokens, lti.http),
        cast(
            Any,
            {"context_memberships_url": url, "service_versions": ["2.0"], "scope": [SCOPE_NRPS]},
        ),
    )
    try:
        members = service.get_members()
    except Exception as exc:  # noqa: BLE001  the LMS's failure, reported to the teacher
        error = f"the LMS roster could not be read: {describe(exc)}"
        roster_reads.failed(store, course_id, error)
        raise GraderError(error) from exc
    listed = [found for found in map(_member, members) if found is not None]
    added = memberships.save_roster(store, course_id, access.platform_id, listed, utcnow())
    return RosterSync(len(members), added)


def _member(member: TMember) -> RosterMember | None:
    """Return an NRPS member as the store keeps it; None if the LMS gave no user id."""
    sub = str(member.get("user_id", ""))[:255]
    if not sub:
        return None
    roles = [str(r) for r in member.get("roles", [])]
    return RosterMember(
        sub=sub,
        name=str(member.get("name") or ""),
        email=str(member.get("email") or ""),
        roles=" ".join(roles)[:2000],
        teacher=any(r.rsplit("#", 1)[-1] in TEACHER_ROLES for r in roles),
        active=member.get("status", "Active") == "Active",
    )
