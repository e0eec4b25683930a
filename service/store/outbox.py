"""A grade sync's store side: one read of the pair, and one write of what core.syncs decided.

A sync runs two transactions around its post to the LMS: `look` then `enact` (the decision,
and the pair's turn to post), then `conclude` (the LMS's answer). Each decision settles only
the syncs its read found, so a change saved meanwhile keeps a pending row of its own.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from core.lessons import Catalog
from core.syncs import (
    Accepted,
    Away,
    Decision,
    Due,
    Failed,
    Found,
    Hold,
    Outcome,
    Pause,
    Post,
    Skip,
    Take,
    Wait,
    early,
    held_post,
)
from service import wording
from service.queue import SyncMessage
from service.store import grades, outages, score_comments
from service.store.database import changed
from service.store.models import GradeSync, Placement, Submission, SubmissionStatus, SyncStatus


def look(
    session: Session, catalog: Catalog, placement_id: int, user_id: int, now: datetime
) -> Found | None:
    """Read everything a sync of the pair decides on now; None when it has no pending sync.

    A retry come early decides on its pending rows alone: nothing more is read for it.
    """
    pending = grades.pending(session, placement_id, user_id)
    if pending is None:
        return None
    found = Found(
        user_id=user_id,
        placement_id=placement_id,
        sync_ids=pending.sync_ids,
        attempts=pending.attempts,
        due_at=pending.due_at,
        platform_id=pending.platform_id,
        due=None,
    )
    if early(pending.attempts, pending.due_at, now):
        return found
    placement = pending.placement
    lesson = catalog.lesson(placement.lesson_id)
    held = grades.holds(session, placement_id, user_id)
    said = None if lesson is None else score_comments.comment(session, placement, lesson, user_id)
    scored = None if lesson is None else grades.scored(session, placement, lesson, user_id)
    due = Due(
        awaits_review=grades.awaits_review(session, placement_id, user_id),
        held=placement.holds_scores,
        lesson_id=placement.lesson_id,
        score=None if scored is None else scored.score,
        override_comment=scored.override.comment if scored and scored.override else None,
        label=placement.title or (lesson.title if lesson is not None else ""),
        user_sub=pending.user_sub,
        line_item_url=placement.line_item_url,
        line_items_url=pending.line_items_url,
        resource_link_id=placement.resource_link_id,
        outage=outages.outage(session, pending.platform_id),
        lms_at=held.at,
        posting_until=held.posting_until,
        in_flight=_in_flight(session, placement_id, user_id),
        # worded here, in the worker, in the student's language: the LMS shows it as it is
        comment="" if said is None else wording.worded(said, pending.locale),
    )
    return replace(found, due=due)


def enact(session: Session, found: Found, decision: Decision, now: datetime) -> Take:
    """Write the decision; for a post, take the pair's turn (and the probe); say what it found.

    The turn is taken only while the LMS holds the stamp the read found: a post accepted
    in between would make this one's stamp stale (Moodle refuses it with a 409).
    """
    pair = (found.placement_id, found.user_id)
    match decision:
        case Hold():
            _hold(session, found.sync_ids, now)
        case Skip(reason=reason, score=score):
            if score is not None:
                grades.save_grade(session, *pair, score, now)
            grades.settle(
                session, found.sync_ids, SyncStatus.SKIPPED, now, lesson=score, error=reason
            )
        case Wait(score=score) | Pause(score=score) if score is not None:
            grades.save_grade(session, *pair, score, now)
        case Post(score_post=post, until=until, probe=probe):
            grades.save_grade(session, *pair, post.score, now)
            if not grades.take_turn(session, *pair, now, until, after=found.due):
                return Take.BUSY
            message = SyncMessage(found.user_id, found.placement_id)
            if probe and not outages.take_probe(session, found.platform_id, message, now, until):
                grades.end_turn(session, *pair)  # another sync probes it now
                return Take.PROBED
    return Take.TAKEN


def conclude(session: Session, found: Found, outcome: Outcome) -> tuple[list[SyncMessage], float]:
    """Record the LMS's answer; return the pairs it released, and the wait before a probe."""
    pair = (found.placement_id, found.user_id)
    message = SyncMessage(found.user_id, found.placement_id)
    ids, now = found.sync_ids, outcome.at
    match outcome:
        case Accepted(score_post=post, response=response, line_item=line_item):
            if line_item is not None:
                _set_line_item(session, found.placement_id, line_item)
            again = []
            if held_post(post):  # the LMS shows it handed in: the score waits for release
                grades.end_turn(session, *pair, blank_at=post.timestamp)
                if _still_held(session, found.placement_id):
                    grades.settle(session, ids, SyncStatus.HELD, now, response=response)
                else:  # released while this post was on its way: the release did not see
                    # its rows (pending then), so the score goes now, FullyGraded
                    grades.settle(session, ids, SyncStatus.PENDING, now, response=response)
                    again = [message]
            else:
                grades.settle(
                    session, ids, SyncStatus.SENT, now, lesson=post.score, response=response
                )
                grades.end_turn(session, *pair, accepted=post.score, at=post.timestamp)
            # it answers: it is back
            return again + outages.end(session, found.platform_id, now), 0.0
        case Failed(error=error, retry_in_s=retry_in_s):
            grades.end_turn(session, *pair)
            # a refusal is an answer: a platform that was away is back for the others (and
            # one that is not, if this failure never reached it, costs a post per process)
            released = outages.end(session, found.platform_id, now)
            if retry_in_s is None:
                grades.settle(session, ids, SyncStatus.FAILED, now, error=error)
            else:
                retry_at = now + timedelta(seconds=retry_in_s)
                grades.settle(session, ids, SyncStatus.PENDING, now, error=error, retry_at=retry_at)
            return released, retry_in_s or 0.0
        case Away(error=error):
            grades.end_turn(session, *pair)
            probe_at = outages.down(session, found.platform_id, message, now, error)
            # not an attempt: an outage is the platform's, and a long one must not fail
            # grades that a teacher then has to send again
            _postpone(session, ids, now, error, probe_at)
            return [], (probe_at - now).total_seconds()


def _in_flight(session: Session, placement_id: int, user_id: int) -> bool:
    """Return whether the user has a submission queued or running on the placement."""
    return (
        session.scalar(
            select(Submission.id)
            .where(
                Submission.placement_id == placement_id,
                Submission.user_id == user_id,
                Submission.status.in_((SubmissionStatus.QUEUED, SubmissionStatus.RUNNING)),
            )
            .limit(1)
        )
        is not None
    )


def _still_held(session: Session, placement_id: int) -> bool:
    """Return whether the placement holds its scores now, locking its row until the commit.

    The lock orders this write after a release in progress (which updates the row first),
    so that rows held here are held before the release looks for them, or see it released.
    """
    held = session.execute(
        select(Placement.hold_scores, Placement.released_at)
        .where(Placement.id == placement_id)
        .with_for_update()
    ).first()
    return held is not None and bool(held.hold_scores) and held.released_at is None


def _hold(session: Session, sync_ids: tuple[int, ...], now: datetime) -> None:
    """Hold pending syncs back with the pair's held score, until release_held()."""
    changed(
        session,
        update(GradeSync)
        .where(GradeSync.id.in_(sync_ids), GradeSync.status == SyncStatus.PENDING)
        .values(status=SyncStatus.HELD, updated_at=now),
    )


def adopt_line_item(session: Session, placement_id: int, url: str) -> str:
    """Keep `url` as the placement's line item unless it has one; return the one it keeps.

    Two posts that each made a line item for a placement (two students at once, the launch
    gave none) both ask: the first to ask wins, and the other deletes its own.
    """
    _set_line_item(session, placement_id, url)
    kept = session.scalar(select(Placement.line_item_url).where(Placement.id == placement_id))
    return kept or url


def _set_line_item(session: Session, placement_id: int, url: str) -> None:
    """Keep the line item the LMS made for a placement, so later posts go straight to it."""
    session.execute(
        update(Placement)
        .where(Placement.id == placement_id, Placement.line_item_url.is_(None))
        .values(line_item_url=url)
    )


def _postpone(
    session: Session, sync_ids: tuple[int, ...], now: datetime, error: str, due: datetime
) -> None:
    """Keep syncs pending until `due` after a failure that was the platform's (it is away):
    the error is kept, and no attempt is counted."""
    changed(
        session,
        update(GradeSync)
        .where(GradeSync.id.in_(sync_ids), GradeSync.status == SyncStatus.PENDING)
        .values(updated_at=now, next_attempt_at=due, last_error=error[:2000]),
    )
