"""Sending a lesson's score to the LMS, through the grade-sync outbox.

Celery-free, so that tests drive it directly; workers.tasks wraps it in a task with retries.
"""

from __future__ import annotations

import enum
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from core.lessons import Catalog
from core.platforms import GradePoster, PlatformAway, Probe, ScorePost, ScoreRefused, probing
from service.queue import SyncMessage
from service.store import grades, outages
from service.store.database import Store
from service.store.models import SyncStatus, utcnow

_BACKOFF_BASE_S = 5.0
_BACKOFF_CAP_S = 1800.0
_EARLY = timedelta(seconds=0.5)  # a retry this much before its due time posts now
_SECOND = timedelta(seconds=1)
_COALESCE = timedelta(seconds=1.5)  # wait at most this long for a later whole second
_TURN = timedelta(seconds=60)  # a post's turn: past the outbound deadline, re-post included
_TURN_POLL_S = 2.0

log = logging.getLogger(__name__)


class Synced(enum.StrEnum):
    """How one sync attempt ended."""

    SENT = "sent"
    SKIPPED = "skipped"  # nothing to post to; the reason is recorded
    RETRY = "retry"
    FAILED = "failed"  # out of attempts; the teacher sees it and may resend
    HELD = "held"  # a regraded score of the pair waits for the teacher: sent with it
    WAIT = "wait"  # the pair's next post must wait (its turn, the next second, its probe)
    AWAY = "away"  # the LMS did not take the post: this pair probes it again, no attempt counted
    PAUSED = "paused"  # the LMS is away and another pair probes it: released when it answers
    NOTHING_TO_DO = "nothing_to_do"


@dataclass(frozen=True)
class SyncResult:
    """The outcome; for RETRY, WAIT and AWAY, when to try again; and the pairs to send now.

    `released`: the platform was away and this sync's post found it back: every pair that
    waited for it is due now, and goes to the queue at once.
    """

    outcome: Synced
    retry_in_s: float = 0.0
    released: tuple[SyncMessage, ...] = ()


def backoff(attempt: int) -> float:
    """Return the wait before attempt `attempt + 1`: exponential, capped, with jitter."""
    delay = min(_BACKOFF_CAP_S, _BACKOFF_BASE_S * 2.0 ** max(attempt - 1, 0))
    return delay * random.uniform(0.8, 1.2)  # noqa: S311  spreads retries, not a secret


def sync_grade(
    store: Store,
    catalog: Catalog,
    poster: GradePoster | None,
    user_id: int,
    placement_id: int,
    max_attempts: int,
    clock: Callable[[], datetime] = utcnow,
    sleep: Callable[[float], None] = time.sleep,
) -> SyncResult:
    """Compute the user's lesson score, keep it, and post it for every pending sync.

    One sync of a pair posts at a time, with a timestamp strictly later, in whole seconds,
    than the last one the LMS accepted (Moodle refuses any other with a 409). A change in
    the same second as the last post waits for the next second, and every change made
    meanwhile goes out with it, in one post of the latest score. While the platform is away,
    only the pair that probes it posts; the others pause until an answer releases them.
    """
    now = clock()
    with store.session() as session:
        found = grades.pending(session, placement_id, user_id)
        if found is None:
            return SyncResult(Synced.NOTHING_TO_DO)
        if found.attempts and found.due_at is not None and found.due_at > now + _EARLY:
            # a retry's backoff longer than a wait in the broker may be (workers.tasks.wait_s)
            # goes in hops: this one came early. A change not yet tried is due at once, even
            # if the clock that stamped it runs ahead of ours.
            return SyncResult(Synced.WAIT, retry_in_s=(found.due_at - now).total_seconds())
        ids, placement = found.sync_ids, found.placement
        if grades.awaits_review(session, placement_id, user_id):
            # the score now would include regraded work the teacher has not sent yet: this
            # change goes out with it, when the teacher sends the regrade (release_held)
            grades.hold(session, ids, now)
            return SyncResult(Synced.HELD)
        lesson = catalog.lesson(placement.lesson_id)
        if lesson is None:
            reason = grades.missing_lesson(placement.lesson_id)
            grades.settle(session, ids, SyncStatus.SKIPPED, now, error=reason)
            return SyncResult(Synced.SKIPPED)
        score = grades.score(session, placement, lesson, user_id)
        grades.save_grade(session, placement_id, user_id, score, now)
        to_lms = grades.reaches_lms(placement.line_item_url, found.line_items_url)
        if poster is None or not to_lms:
            reason = grades.NO_LINE_ITEM if not to_lms else "no grade poster is configured"
            grades.settle(session, ids, SyncStatus.SKIPPED, now, lesson=score, error=reason)
            return SyncResult(Synced.SKIPPED)
        outage = outages.outage(session, found.platform_id)
        step, wait = probing(outage, user_id, placement_id, now)
        if step is Probe.PAUSE:
            # one post every few seconds tells when the LMS is back, not one per grade
            return SyncResult(Synced.PAUSED)
        if step is Probe.WAIT:
            return SyncResult(Synced.WAIT, retry_in_s=wait)
        held = grades.holds(session, placement_id, user_id)
        if held.posting_until is not None and held.posting_until > now:
            # another sync of the pair is posting: look again when it should have ended
            wait = (held.posting_until - now).total_seconds()
            return SyncResult(Synced.WAIT, retry_in_s=min(max(wait, 0.2), _TURN_POLL_S))
        stamp = next_stamp(held.at, now)
        if timedelta(0) < stamp - now <= _COALESCE:
            # the LMS holds a score of this second: post in the next one, with what is new then
            return SyncResult(Synced.WAIT, retry_in_s=(stamp - now).total_seconds() + 0.05)
        if not grades.take_turn(session, placement_id, user_id, now, now + _TURN):
            return SyncResult(Synced.WAIT, retry_in_s=0.5)
        pair = SyncMessage(user_id, placement_id)
        if outage is not None and not outages.take_probe(
            session, found.platform_id, pair, now, now + _TURN
        ):
            grades.end_turn(session, placement_id, user_id)  # another sync probes it now
            return SyncResult(Synced.PAUSED)
        pending_run = grades.in_flight(session, placement_id, user_id)
        post = ScorePost(
            found.platform_id,
            placement.line_item_url or "",
            found.user_sub,
            score,
            stamp,
            # FullyGraded always: Moodle blanks the points of a Pending score
            activity_progress="Submitted" if pending_run else "Completed",
            line_items_url=found.line_items_url,
            resource_link_id=placement.resource_link_id,
            resource_id=placement.lesson_id,
            label=placement.title or lesson.title,
        )
    try:
        try:
            posted = poster.post(post)
        except ScoreRefused as refused:
            # the LMS holds a timestamp we did not record (a post whose answer was lost, or
            # a clock ahead of ours): once more, a second later, then the normal backoff
            log.info(
                "sync of user %s on placement %s: %s; posting again", user_id, placement_id, refused
            )
            post = replace(post, timestamp=post.timestamp + _SECOND)
            _sleep_until(post.timestamp, clock, sleep)
            posted = poster.post(post)
    except Exception as exc:  # noqa: BLE001  whatever broke, the outbox row says so
        error = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, PlatformAway):
            log.warning(
                "sync of user %s on placement %s: the LMS is away: %s", user_id, placement_id, error
            )
            return _away(store, found, pair, error, clock())
        log.warning(
            "sync of user %s on placement %s failed (attempt %d of %d): %s",
            user_id, placement_id, found.attempts + 1, max_attempts, error,
        )  # fmt: skip
        return _failed(store, found, user_id, found.attempts + 1, max_attempts, error, now)
    with store.session() as session:
        if posted.line_item_url and posted.line_item_url != post.line_item_url:
            grades.set_line_item(session, placement_id, posted.line_item_url)
        grades.settle(
            session, ids, SyncStatus.SENT, clock(), lesson=score, response=posted.response
        )
        grades.end_turn(session, placement_id, user_id, accepted=score, at=post.timestamp)
        released = outages.end(session, found.platform_id, clock())  # it answers: it is back
    return SyncResult(Synced.SENT, released=tuple(released))


def next_stamp(last: datetime | None, now: datetime) -> datetime:
    """Return the timestamp of the next post: now in whole seconds, and after `last`."""
    stamp = now.replace(microsecond=0)
    if last is not None and stamp <= last:
        stamp = last.replace(microsecond=0) + _SECOND
    return stamp


def _sleep_until(
    moment: datetime, clock: Callable[[], datetime], sleep: Callable[[float], None]
) -> None:
    ahead = (moment - clock()).total_seconds()
    if 0 < ahead <= _COALESCE.total_seconds():
        sleep(ahead)


def _failed(
    store: Store,
    found: grades.Pending,
    user_id: int,
    attempt: int,
    max_attempts: int,
    error: str,
    now: datetime,
) -> SyncResult:
    ids = found.sync_ids
    with store.session() as session:
        grades.end_turn(session, found.placement.id, user_id)
        # a refusal is an answer: a platform that was away is back for the others (and one
        # that is not, if this failure never reached it, costs a post per pool process)
        released = tuple(outages.end(session, found.platform_id, now))
        if attempt >= max_attempts:
            grades.settle(session, ids, SyncStatus.FAILED, now, error=error)
            return SyncResult(Synced.FAILED, released=released)
        delay = backoff(attempt)
        retry_at = now + timedelta(seconds=delay)
        grades.settle(session, ids, SyncStatus.PENDING, now, error=error, retry_at=retry_at)
    return SyncResult(Synced.RETRY, retry_in_s=delay, released=released)


def _away(
    store: Store, found: grades.Pending, pair: SyncMessage, error: str, now: datetime
) -> SyncResult:
    with store.session() as session:
        grades.end_turn(session, pair.placement_id, pair.user_id)
        probe_at = outages.down(session, found.platform_id, pair, now, error)
        # not an attempt: an outage is the platform's, and a long one must not fail grades
        # that a teacher then has to send again
        grades.postpone(session, found.sync_ids, now, error, probe_at)
    return SyncResult(Synced.AWAY, retry_in_s=(probe_at - now).total_seconds())
