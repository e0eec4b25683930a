"""What a valid launch records: the user, the course, the membership and the placement."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.lessons import Catalog
from service.lti.claims import DEEP_LINKING, is_teacher
from service.lti.validation import ValidLaunch
from service.store.database import Store
from service.store.models import Course, Membership, Placement, Platform, User, utcnow

AGS = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
T = TypeVar("T")


@dataclass(frozen=True)
class Opened:
    """Who launched, into which course, and the placement the link opens (if any yet)."""

    user_id: int
    course_id: int
    teacher: bool
    resource_link_id: str | None
    placement_id: int | None


def record(store: Store, catalog: Catalog, launch: ValidLaunch) -> Opened:
    """Upsert the launch's user, course and membership; find or make its placement."""
    body = launch.body
    context = launch.claim("context") or {}
    link = launch.claim("resource_link") or {}
    ags = body.get(AGS) or {}
    nrps = body.get(NRPS) or {}
    teacher = is_teacher(body)
    context_id = context.get("id") or f"link:{link.get('id', 'none')}"
    with store.session() as session:
        _name_platform(session, launch.platform_id, launch.claim("tool_platform"))
        user = _upsert(
            session,
            User,
            {"platform_id": launch.platform_id, "sub": body["sub"]},
            {"name": _name(body), "email": str(body.get("email", ""))[:320]},
        )
        course = _upsert(
            session,
            Course,
            {"platform_id": launch.platform_id, "context_id": context_id},
            {"title": str(context.get("title") or context.get("label") or "")[:255]},
        )
        if isinstance(ags.get("lineitems"), str):
            course.line_items_url = ags["lineitems"]
        if isinstance(nrps.get("context_memberships_url"), str):
            course.memberships_url = nrps["context_memberships_url"]
        roles = " ".join(str(r) for r in launch.claim("roles", []))
        _upsert(
            session,
            Membership,
            {"course_id": course.id, "user_id": user.id},
            {"roles": roles[:2000], "teacher": teacher, "active": True, "seen_at": utcnow()},
        )
        placement_id = None
        if launch.message_type != DEEP_LINKING:
            placement = _placement(session, catalog, course.id, link, launch, ags)
            placement_id = placement.id if placement else None
        return Opened(user.id, course.id, teacher, link.get("id"), placement_id)


def _name_platform(session: Session, platform_id: int, tool_platform: Any) -> None:
    """Name the platform by its site's own name (tool_platform.name), if it has only a name
    made up for it: its issuer's host, or its product's code ("moodle", as registrations did).
    """
    if not isinstance(tool_platform, dict) or not isinstance(tool_platform.get("name"), str):
        return
    site = tool_platform["name"].strip()[:255]
    platform = session.get(Platform, platform_id)
    if not site or platform is None or platform.name == site:
        return
    product = tool_platform.get("product_family_code")
    if platform.name in ("", urlsplit(platform.issuer).hostname, product):
        platform.name = site


def _placement(
    session: Session,
    catalog: Catalog,
    course_id: int,
    link: dict[str, Any],
    launch: ValidLaunch,
    ags: dict[str, Any],
) -> Placement | None:
    found = session.scalar(
        select(Placement).where(
            Placement.course_id == course_id, Placement.resource_link_id == link["id"]
        )
    )
    line_item = ags.get("lineitem") if isinstance(ags.get("lineitem"), str) else None
    if found is None:
        lesson_id = (launch.claim("custom") or {}).get("lesson")
        if not isinstance(lesson_id, str) or catalog.lesson(lesson_id) is None:
            return None  # a teacher picks the lesson on first launch
        found = _create(
            session,
            lambda: Placement(
                course_id=course_id,
                resource_link_id=link["id"],
                lesson_id=lesson_id,
                title=str(link.get("title") or "")[:255],
                line_item_url=line_item,
            ),
            lambda: session.scalar(
                select(Placement).where(
                    Placement.course_id == course_id, Placement.resource_link_id == link["id"]
                )
            ),
        )
    elif line_item and found.line_item_url != line_item:
        found.line_item_url = line_item
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


def _name(body: dict[str, Any]) -> str:
    name = (
        body.get("name")
        or " ".join(str(body.get(k, "")) for k in ("given_name", "family_name")).strip()
    )
    return str(name)[:255]
