"""A platform's latest self-test, and what its registration and launches claimed.

One row per platform (platform_checks). The self-test (service.lti.self_test) replaces its
result; the registration notes the scopes it was granted and the product family; each launch
notes the product family and its AGS claim's scopes, writing only when they changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from service.store.database import Store
from service.store.models import Course, Membership, Placement, PlatformCheck

SCOPES_LENGTH = 2000


@dataclass(frozen=True)
class Claimed:
    """What the registration and the latest launch said of the platform."""

    product_family: str | None
    registered_scopes: str | None
    launch_scopes: str | None


@dataclass(frozen=True)
class Latest:
    """A platform's latest self-test, as stored."""

    checked_at: datetime
    grades_ok: bool
    result: Any  # core.lms_traps.SelfTest.to_json()


@dataclass(frozen=True)
class TestCourse:
    """The course a self-test works in: the latest launched, and what its launches lacked."""

    course_id: int
    line_items_url: str | None  # None: its launches carried no AGS claim
    memberships_url: str | None
    links_without_line_item: int


def _row(session: Session, platform_id: int) -> PlatformCheck:
    """Return the platform's row, made if it has none; safe under concurrency."""
    found = session.get(PlatformCheck, platform_id)
    if found is not None:
        return found
    try:
        with session.begin_nested():
            row = PlatformCheck(platform_id=platform_id)
            session.add(row)
        return row
    except IntegrityError:  # a concurrent launch made it first
        found = session.get(PlatformCheck, platform_id, populate_existing=True)
        assert found is not None
        return found


def note_registration(store: Store, platform_id: int, family: str | None, scopes: str) -> None:
    """Keep what a dynamic registration answered: the scopes granted, the product family."""
    with store.session() as session:
        row = _row(session, platform_id)
        row.registered_scopes = scopes[:SCOPES_LENGTH]
        if family:
            row.product_family = family[:64]


def note_launch(
    session: Session, platform_id: int, family: str | None, scopes: tuple[str, ...] | None
) -> None:
    """Keep what a launch claimed (in the launch's transaction); write only what changed."""
    found = session.get(PlatformCheck, platform_id)
    listed = None if scopes is None else " ".join(scopes)[:SCOPES_LENGTH]
    family = family[:64] if family else None
    if found is not None and found.launch_scopes == listed:
        if family is None or found.product_family == family:
            return
    row = found or _row(session, platform_id)
    row.launch_scopes = listed
    if family:
        row.product_family = family


def claimed(store: Store, platform_id: int) -> Claimed:
    """Return what the registration and launches said of the platform (None: nothing yet)."""
    with store.reading() as session:
        row = session.get(PlatformCheck, platform_id)
        if row is None:
            return Claimed(None, None, None)
        return Claimed(row.product_family, row.registered_scopes, row.launch_scopes)


def save(store: Store, platform_id: int, result: Any, grades_ok: bool, at: datetime) -> None:
    """Keep a self-test's result as the platform's latest."""
    with store.session() as session:
        row = _row(session, platform_id)
        row.result, row.grades_ok, row.checked_at = result, grades_ok, at


def latest(store: Store) -> dict[int, Latest]:
    """Return every tested platform's latest self-test, by platform id."""
    with store.reading() as session:
        rows = session.scalars(select(PlatformCheck).where(PlatformCheck.checked_at.is_not(None)))
        return {
            row.platform_id: Latest(row.checked_at, bool(row.grades_ok), row.result)
            for row in rows
            if row.checked_at is not None
        }


def test_course(store: Store, platform_id: int) -> TestCourse | None:
    """Return the platform's course launched last (preferring one with AGS), or None."""
    with store.reading() as session:
        last_seen = (
            select(Membership.course_id, func.max(Membership.seen_at).label("seen"))
            .group_by(Membership.course_id)
            .subquery()
        )
        course = session.scalars(
            select(Course)
            .join(last_seen, last_seen.c.course_id == Course.id)
            .where(Course.platform_id == platform_id, last_seen.c.seen.is_not(None))
            .order_by(Course.line_items_url.is_(None), last_seen.c.seen.desc(), Course.id.desc())
            .limit(1)
        ).first()
        if course is None:
            return None
        bare = session.scalar(
            select(func.count())
            .select_from(Placement)
            .where(Placement.course_id == course.id, Placement.line_item_url.is_(None))
        )
        return TestCourse(course.id, course.line_items_url, course.memberships_url, bare or 0)


def course_blocked(store: Store, course_id: int) -> tuple[bool, bool] | None:
    """Return (its launches carried no AGS claim, its platform's latest self-test found a
    trap that blocks grades) for a course; None if there is no such course."""
    with store.reading() as session:
        course = session.get(Course, course_id)
        if course is None:
            return None
        row = session.get(PlatformCheck, course.platform_id)
        # a course only deep linked so far has launched no lesson: its launches say nothing yet
        placed = session.scalar(select(Placement.id).where(Placement.course_id == course_id))
        no_ags = course.line_items_url is None and placed is not None
        return no_ags, row is not None and row.grades_ok is False


def ask(
    store: Store, platform_id: int, now: datetime, every: timedelta, shut_out: frozenset[str]
) -> bool:
    """Claim the asking of a self-test after a launch; return whether this caller claimed it.

    Asked when the platform's latest self-test met a trap in `shut_out` that a launch
    disproves (the tool pending activation, a key turned off): a launch got through, so the
    result is stale. Never for a platform never tested: its admin runs the first by hand, as
    a test tries things in a course. Once per `every`, however many launches come at once
    (a conditional update: one caller wins).
    """
    with store.session() as session:
        row = _row(session, platform_id)
        if row.checked_at is None or not _met(row.result, shut_out):
            return False
        claimed = session.execute(
            update(PlatformCheck)
            .where(
                PlatformCheck.platform_id == platform_id,
                or_(PlatformCheck.asked_at.is_(None), PlatformCheck.asked_at < now - every),
            )
            .values(asked_at=now)
            .execution_options(synchronize_session=False)
        )
        return bool(getattr(claimed, "rowcount", 0))


def _met(result: Any, trap_ids: frozenset[str]) -> bool:
    traps = result.get("traps") if isinstance(result, dict) else None
    return isinstance(traps, list) and any(
        isinstance(t, dict) and t.get("id") in trap_ids for t in traps
    )
