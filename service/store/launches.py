"""What a valid launch records: the user, the course, the membership and the placement.

Every row is upserted so that concurrent launches (a class opening a lesson at once) agree:
the loser of a race for a new row finds the winner's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from service.store import platform_checks
from service.store.database import Store
from service.store.models import Course, Membership, Placement, Platform, User, utcnow

T = TypeVar("T")


@dataclass(frozen=True)
class LinkFacts:
    """The resource link a launch opens, and what may place a lesson behind it."""

    resource_link_id: str
    title: str
    lesson_id: str | None  # the launch's custom lesson, when the catalog has it
    line_item_url: str | None  # AGS line item, when the launch gave one


@dataclass(frozen=True)
class LaunchFacts:
    """A valid launch's claims, as the store keeps them (cut to the columns' sizes)."""

    platform_id: int
    site_name: str | None  # tool_platform.name, when the launch carries one
    product_code: str | None  # tool_platform.product_family_code
    sub: str
    name: str
    email: str
    locale: str | None  # launch_presentation.locale, when it is a language tag ("tr")
    context_id: str
    course_title: str
    line_items_url: str | None  # AGS, when the launch gave one
    memberships_url: str | None  # NRPS, when the launch gave one
    roles: str
    teacher: bool
    resource_link_id: str | None
    link: LinkFacts | None  # None for a deep linking request: it opens no placement
    ags_scopes: tuple[str, ...] | None = None  # the AGS claim's scope list, if it has one


@dataclass(frozen=True)
class Opened:
    """Who launched, into which course, and the placement the link opens (if any yet)."""

    user_id: int
    course_id: int
    teacher: bool
    resource_link_id: str | None
    placement_id: int | None


def record(store: Store, facts: LaunchFacts) -> Opened:
    """Upsert the launch's user, course and membership; find or make its placement."""
    with store.session() as session:
        if facts.site_name is not None:
            _name_platform(session, facts.platform_id, facts.site_name, facts.product_code)
        # what the LMS says it is and grants, for the self-test's traps (service.lti.self_test)
        platform_checks.note_launch(
            session, facts.platform_id, facts.product_code, facts.ags_scopes
        )
        user = _upsert(
            session,
            User,
            {"platform_id": facts.platform_id, "sub": facts.sub},
            {"name": facts.name, "email": facts.email, "locale": facts.locale},
        )
        course = _upsert(
            session,
            Course,
            {"platform_id": facts.platform_id, "context_id": facts.context_id},
            {"title": facts.course_title},
        )
        if facts.line_items_url is not None:
            course.line_items_url = facts.line_items_url
        if facts.memberships_url is not None:
            course.memberships_url = facts.memberships_url
        _upsert(
            session,
            Membership,
            {"course_id": course.id, "user_id": user.id},
            {"roles": facts.roles, "teacher": facts.teacher, "active": True, "seen_at": utcnow()},
        )
        placement_id = None
        if facts.link is not None:
            placement = _placement(session, course.id, facts.link)
            placement_id = placement.id if placement else None
        return Opened(user.id, course.id, facts.teacher, facts.resource_link_id, placement_id)


def _name_platform(session: Session, platform_id: int, site: str, product: str | None) -> None:
    """Name the platform by its site's own name, if it has only a name made up for it: its
    issuer's host, or its product's code ("moodle", as registrations did)."""
    platform = session.get(Platform, platform_id)
    if not site or platform is None or platform.name == site:
        return
    if platform.name in ("", urlsplit(platform.issuer).hostname, product):
        platform.name = site


def _placement(session: Session, course_id: int, link: LinkFacts) -> Placement | None:
    def find() -> Placement | None:
        return session.scalar(
            select(Placement).where(
                Placement.course_id == course_id,
                Placement.resource_link_id == link.resource_link_id,
            )
        )

    found = find()
    if found is None:
        lesson_id = link.lesson_id
        if lesson_id is None:
            return None  # a teacher picks the lesson on first launch
        found = _create(
            session,
            lambda: Placement(
                course_id=course_id,
                resource_link_id=link.resource_link_id,
                lesson_id=lesson_id,
                title=link.title,
                line_item_url=link.line_item_url,
            ),
            find,
        )
    elif link.line_item_url and found.line_item_url != link.line_item_url:
        found.line_item_url = link.line_item_url
    return found


def _upsert(session: Session, model: type[T], keys: dict[str, Any], values: dict[str, Any]) -> T:
    """Return the row with `keys`, made or updated with `values`; safe under concurrency."""
    query = select(model).filter_by(**keys)
    row = session.scalar(query)
    if row is None:
        row = _create(session, lambda: model(**keys, **values), lambda: session.scalar(query))
    for name, value in values.items():
        setattr(row, name, value)
    session.flush()
    return row


def _create(session: Session, make: Callable[[], T], find: Callable[[], T | None]) -> T:
    try:
        with session.begin_nested():
            row = make()
            session.add(row)
        return row
    except IntegrityError:
        found = find()  # a concurrent launch made it first
        assert found is not None
        return found
