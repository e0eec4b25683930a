"""Platforms that are away, and the grade syncs that wait for them together.

While a platform does not answer, its syncs post nothing: one pair probes it (`take_probe`,
spaced by core.platforms.probe_wait), and the first answer ends the outage (`end`), making
every waiting sync of the platform due at once (`release`). A probe whose worker died is
found by the sweep (`lost_probes`). Nothing here counts a sync's attempts: an outage is the
platform's, not any one grade's.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.platforms import Outage, probe_wait
from service.queue import SyncMessage
from service.store.database import changed
from service.store.models import Course, GradeSync, Placement, PlatformOutage, SyncStatus

_ROW = (
    PlatformOutage.since,
    PlatformOutage.probes,
    PlatformOutage.probe_at,
    PlatformOutage.user_id,
    PlatformOutage.placement_id,
)


def outage(session: Session, platform_id: int) -> Outage | None:
    """Return the platform's outage, or None while it answers."""
    row = session.execute(select(*_ROW).where(PlatformOutage.platform_id == platform_id)).first()
    return None if row is None else Outage(*row)


def down(
    session: Session,
    platform_id: int,
    pair: SyncMessage,
    now: datetime,
    error: str,
) -> datetime:
    """Record that a request of `pair` found the platform away; return when it probes next.

    The pair that failed last probes next: a post already in flight when the outage began
    takes the probe over, and the waits grow with every failure (core.platforms.probe_wait).
    """
    where = PlatformOutage.platform_id == platform_id
    probes = session.scalar(select(PlatformOutage.probes).where(where).with_for_update())
    if probes is None:
        probe_at = now + timedelta(seconds=probe_wait(1))
        try:
            with session.begin_nested():
                session.execute(
                    insert(PlatformOutage).values(
                        platform_id=platform_id, since=now, probes=1, probe_at=probe_at,
                        user_id=pair.user_id, placement_id=pair.placement_id,
                        last_error=error[:2000],
                    )
                )  # fmt: skip
            return probe_at
        except IntegrityError:  # another sync found it away at the same moment
            probes = session.scalar(select(PlatformOutage.probes).where(where).with_for_update())
            if probes is None:  # and the platform answered already
                raise
    probe_at = now + timedelta(seconds=probe_wait(probes + 1))
    changed(
        session,
        update(PlatformOutage)
        .where(where)
        .values(
            probes=PlatformOutage.probes + 1,
            probe_at=probe_at,
            user_id=pair.user_id,
            placement_id=pair.placement_id,
            last_error=error[:2000],
        ),
    )
    return probe_at


def take_probe(
    session: Session, platform_id: int, pair: SyncMessage, now: datetime, until: datetime
) -> bool:
    """Take the platform's probe for `pair` until `until`, if one is due; say whether.

    A conditional update: of two syncs at once, one probes, the other waits to be released.
    """
    return (
        changed(
            session,
            update(PlatformOutage)
            .where(PlatformOutage.platform_id == platform_id, PlatformOutage.probe_at <= now)
            .values(probe_at=until, user_id=pair.user_id, placement_id=pair.placement_id),
        )
        == 1
    )


def end(session: Session, platform_id: int, now: datetime) -> list[SyncMessage]:
    """End the platform's outage, as it answered; return the pairs it released (due now).

    Only the sync that ends the outage releases: of many answers at once, one does.
    """
    where = PlatformOutage.platform_id == platform_id
    return (
        release(session, platform_id, now)
        if changed(session, delete(PlatformOutage).where(where))
        else []
    )


def release(session: Session, platform_id: int, now: datetime) -> list[SyncMessage]:
    """Make every pending sync of the platform due now; return their (user, placement) pairs."""
    placements = (
        select(Placement.id)
        .join(Course, Course.id == Placement.course_id)
        .where(Course.platform_id == platform_id)
    )
    waiting = (GradeSync.status == SyncStatus.PENDING, GradeSync.placement_id.in_(placements))
    pairs = session.execute(
        select(GradeSync.user_id, GradeSync.placement_id)
        .where(*waiting)
        .group_by(GradeSync.user_id, GradeSync.placement_id)
        .order_by(GradeSync.placement_id, GradeSync.user_id)
    ).all()
    changed(session, update(GradeSync).where(*waiting).values(next_attempt_at=now))
    return [SyncMessage(int(user), int(placement)) for user, placement in pairs]


def lost_probes(session: Session, now: datetime, late: timedelta) -> list[SyncMessage]:
    """Take the outages whose probe is `late` past due (its worker died, its message was
    lost): each gets a waiting pair to probe it now. An outage nobody waits for ends."""
    rows = session.execute(
        select(PlatformOutage.platform_id, *_ROW[2:]).where(PlatformOutage.probe_at < now - late)
    ).all()
    found: list[SyncMessage] = []
    for platform_id, probe_at, user_id, placement_id in rows:
        this = PlatformOutage.platform_id == platform_id
        pair = _waiting(session, platform_id, SyncMessage(user_id, placement_id))
        if pair is None:
            session.execute(delete(PlatformOutage).where(this))
            continue
        moved = changed(
            session,
            update(PlatformOutage)
            .where(this, PlatformOutage.probe_at == probe_at)
            .values(probe_at=now, user_id=pair.user_id, placement_id=pair.placement_id),
        )
        if moved == 1:  # two sweeps at once: one sends it
            changed(
                session,
                update(GradeSync)
                .where(
                    GradeSync.user_id == pair.user_id,
                    GradeSync.placement_id == pair.placement_id,
                    GradeSync.status == SyncStatus.PENDING,
                )
                .values(next_attempt_at=now),
            )
            found.append(pair)
    return found


def _waiting(session: Session, platform_id: int, prober: SyncMessage) -> SyncMessage | None:
    """Return the pair to probe: the probe's own if it still waits, else the oldest waiting."""
    pending = (
        select(GradeSync.user_id, GradeSync.placement_id)
        .join(Placement, Placement.id == GradeSync.placement_id)
        .join(Course, Course.id == Placement.course_id)
        .where(Course.platform_id == platform_id, GradeSync.status == SyncStatus.PENDING)
    )
    own = pending.where(
        GradeSync.user_id == prober.user_id, GradeSync.placement_id == prober.placement_id
    )
    row = (
        session.execute(own.limit(1)).first()
        or session.execute(pending.order_by(GradeSync.id).limit(1)).first()
    )
    return None if row is None else SyncMessage(int(row[0]), int(row[1]))
