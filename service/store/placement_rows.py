"""Placements: a course's placed lessons, found by id, by course, or by resource link."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from service.store.database import Store, changed
from service.store.models import Course, Placement


def get(session: Session, placement_id: int) -> Placement | None:
    """Return the placement, or None."""
    return session.get(Placement, placement_id)


@dataclass(frozen=True)
class LineItemWanted:
    """A placement without a line item in a course whose LMS lets the tool make one."""

    placement_id: int
    platform_id: int
    line_items_url: str
    resource_link_id: str
    lesson_id: str
    title: str


def line_item_wanted(store: Store, placement_id: int) -> LineItemWanted | None:
    """Return what making the placement's line item needs, or None if it has one (or its LMS
    gave no line items URL to make one at)."""
    with store.reading() as session:
        found = session.execute(
            select(Placement, Course.platform_id, Course.line_items_url)
            .join(Course, Course.id == Placement.course_id)
            .where(Placement.id == placement_id)
        ).first()
    if found is None:
        return None
    placement, platform_id, line_items_url = found
    if placement.line_item_url or not line_items_url:
        return None
    return LineItemWanted(
        placement.id,
        platform_id,
        line_items_url,
        placement.resource_link_id,
        placement.lesson_id,
        placement.title,
    )


def find(store: Store, placement_id: int) -> Placement | None:
    """Return the placement, read in a transaction of its own, or None."""
    with store.reading() as session:
        return session.get(Placement, placement_id)


def of_course(
    session: Session, course_id: int, placement_ids: list[int] | None = None
) -> list[Placement]:
    """Return the course's placements in the order they were made (or only some of them)."""
    query = select(Placement).where(Placement.course_id == course_id).order_by(Placement.id)
    if placement_ids is not None:
        query = query.where(Placement.id.in_(placement_ids))
    return list(session.scalars(query))


def ids_in_course(session: Session, course_id: int, placement_id: int | None = None) -> list[int]:
    """Return the ids of the course's placements (or of the one given, if it is the course's)."""
    query = select(Placement.id).where(Placement.course_id == course_id)
    if placement_id is not None:
        query = query.where(Placement.id == placement_id)
    return list(session.scalars(query))


def by_link(session: Session, course_id: int, resource_link_id: str) -> Placement | None:
    """Return the placement behind a course's resource link, or None."""
    return session.scalar(
        select(Placement).where(
            Placement.course_id == course_id, Placement.resource_link_id == resource_link_id
        )
    )


def place(store: Store, course_id: int, resource_link_id: str, lesson_id: str, title: str) -> int:
    """Place a lesson behind a resource link unless one is there already; return its id."""
    with store.session() as session:
        placement = by_link(session, course_id, resource_link_id)
        if placement is None:
            placement = Placement(
                course_id=course_id,
                resource_link_id=resource_link_id,
                lesson_id=lesson_id,
                title=title,
            )
            session.add(placement)
            session.flush()
        return placement.id


def save_policy(
    store: Store,
    placement_id: int,
    *,
    reveal: str,
    reveal_after_attempts: int | None,
    max_attempts: int | None,
    due_at: datetime | None,
    late_penalty: float | None,
) -> None:
    """Store a placement's policy, as its teacher set it."""
    with store.session() as session:
        changed(
            session,
            update(Placement)
            .where(Placement.id == placement_id)
            .values(
                reveal=reveal,
                reveal_after_attempts=reveal_after_attempts,
                max_attempts=max_attempts,
                due_at=due_at,
                late_penalty=late_penalty,
            ),
        )
