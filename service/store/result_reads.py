"""Reads of a line item's results from the LMS (AGS): asked for, done, or failed, and what
each pair's read found.

The results are read by a background task. Asking is one conditional UPDATE, so that however
many teachers' page views arrive at once, one of them asks, and no line item is asked for
more than once in `every` (service.lti.results decides both intervals). What a read found is
kept beside what the tool believes the LMS holds (Grade.lms_given): only for a pair no post
touched while it read, so that a score the LMS accepted meanwhile is never called lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.lesson_scores import LessonScore
from core.messages import Text, from_json, to_json
from service.store.database import Store, changed
from service.store.models import Course, Grade, LineItemRead, Placement, User


@dataclass(frozen=True)
class ResultsState:
    """Where a placement's results reads stand: whether there is a line item, and its reads."""

    offered: bool  # the placement has a line item to read
    requested_at: datetime | None
    read_at: datetime | None
    error: Any  # why the last read failed (core.messages JSON); None once one succeeds

    def due(self, now: datetime, max_age: timedelta, every: timedelta) -> bool:
        """Return whether a read may be asked for now: there is a line item, its last read
        is older than `max_age`, and none was asked for within `every` (ask() decides)."""
        return (
            self.offered
            and (self.read_at is None or self.read_at <= now - max_age)
            and (self.requested_at is None or self.requested_at <= now - every)
        )

    @property
    def problem(self) -> Text | None:
        """Return why the last read failed, to be worded for the reader; None if it did not."""
        return None if self.error is None else from_json(self.error)

    @property
    def pending(self) -> bool:
        """Return whether a read was asked for after the last one, and has not failed."""
        return (
            self.requested_at is not None
            and (self.read_at is None or self.requested_at > self.read_at)
            and self.error is None
        )


@dataclass(frozen=True)
class Seen:
    """A pair as a read found it at its start: its grade, and the stamp the LMS accepted."""

    grade_id: int
    lms_at: datetime | None


@dataclass(frozen=True)
class Target:
    """What a read of one placement's results needs: where, and the pairs it may settle."""

    placement_id: int
    platform_id: int
    line_item_url: str
    pairs: dict[str, Seen]  # by the user's LTI sub, as the results name them


def states(session: Session, placement_ids: list[int]) -> dict[int, ResultsState]:
    """Return the results state of each placement."""
    rows = session.execute(
        select(
            Placement.id,
            Placement.line_item_url,
            LineItemRead.requested_at,
            LineItemRead.read_at,
            LineItemRead.error,
        )
        .outerjoin(LineItemRead, LineItemRead.placement_id == Placement.id)
        .where(Placement.id.in_(placement_ids))
    )
    return {
        placement_id: ResultsState(bool(url), requested_at, read_at, error)
        for placement_id, url, requested_at, read_at, error in rows
    }


def ask(
    store: Store, placement_id: int, now: datetime, max_age: timedelta, every: timedelta
) -> bool:
    """Note a read as asked for, if the placement has a line item, its last read is older
    than `max_age` and none was asked for within `every`; return whether this caller asks."""
    with store.session() as session:
        if not session.scalar(select(Placement.line_item_url).where(Placement.id == placement_id)):
            return False
        _keep_row(session, placement_id)
        return bool(
            changed(
                session,
                update(LineItemRead)
                .where(
                    LineItemRead.placement_id == placement_id,
                    or_(LineItemRead.read_at.is_(None), LineItemRead.read_at <= now - max_age),
                    or_(
                        LineItemRead.requested_at.is_(None),
                        LineItemRead.requested_at <= now - every,
                    ),
                )
                # the read asked for now says how it ends, whatever the last one said
                .values(requested_at=now, error=None),
            )
        )


def _keep_row(session: Session, placement_id: int) -> None:
    """Make the placement's row of reads, unless it has one (two asking at once make one)."""
    if session.get(LineItemRead, placement_id) is not None:
        return
    try:
        with session.begin_nested():
            session.add(LineItemRead(placement_id=placement_id))
    except IntegrityError:
        pass  # a concurrent ask made it first


def target(session: Session, placement_id: int, now: datetime) -> Target | None:
    """Return what a read of the placement's results needs; None without a line item.

    A pair whose post holds its turn now is left out: the LMS may take that post while the
    results are read.
    """
    found = session.execute(
        select(Placement.line_item_url, Course.platform_id)
        .join(Course, Course.id == Placement.course_id)
        .where(Placement.id == placement_id)
    ).first()
    if found is None or not found.line_item_url:
        return None
    rows = session.execute(
        select(User.sub, Grade.id, Grade.lms_at)
        .join(User, User.id == Grade.user_id)
        .where(
            Grade.placement_id == placement_id,
            or_(Grade.posting_until.is_(None), Grade.posting_until <= now),
        )
    )
    pairs = {sub: Seen(grade_id, lms_at) for sub, grade_id, lms_at in rows}
    return Target(placement_id, found.platform_id, found.line_item_url, pairs)


def save(
    store: Store,
    read: Target,
    found: Mapping[str, LessonScore | None],
    complete: bool,
    started: datetime,
    now: datetime,
) -> None:
    """Keep what the read found of each pair, and note the read done.

    `found` holds each user the results listed (None: listed without a score); one they did
    not list holds no score, when the read was `complete`, and is unknown otherwise. A pair
    whose LMS took a post since the read began, or that posts now, is left unknown.
    """
    with store.session() as session:
        changed(
            session,
            update(Grade)
            .where(Grade.placement_id == read.placement_id)
            .values(read_given=None, read_maximum=None, read_at=None),
        )
        for sub, seen in read.pairs.items():
            if sub not in found and not complete:
                continue
            score = found.get(sub)
            stamp = Grade.lms_at.is_(None) if seen.lms_at is None else Grade.lms_at == seen.lms_at
            changed(
                session,
                update(Grade)
                .where(
                    Grade.id == seen.grade_id,
                    stamp,
                    or_(Grade.posting_until.is_(None), Grade.posting_until <= now),
                )
                .values(
                    read_given=score.given if score else None,
                    read_maximum=score.maximum if score else None,
                    read_at=started,
                ),
            )
        _keep_row(session, read.placement_id)
        changed(
            session,
            update(LineItemRead)
            .where(LineItemRead.placement_id == read.placement_id)
            .values(read_at=now, error=None),
        )


def failed(store: Store, placement_id: int, problem: Text) -> None:
    """Note why a read failed, for the teacher's pages; what earlier reads found is kept."""
    with store.session() as session:
        _keep_row(session, placement_id)
        changed(
            session,
            update(LineItemRead)
            .where(LineItemRead.placement_id == placement_id)
            .values(error=to_json(problem)),
        )
