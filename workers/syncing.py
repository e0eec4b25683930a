"""Syncing a lesson's score to the LMS, through the grade-sync outbox.

Celery-free, so that tests drive it directly; workers.tasks wraps it in a task with retries.
"""

from __future__ import annotations

import enum
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from core import syncs
from core.lessons import Catalog
from core.platforms import GradePoster, Posted, ScoreRefused
from service.queue import SyncMessage
from service.store import outbox
from service.store.database import Store
from service.store.models import utcnow

_BACKOFF_BASE_S = 5.0
_BACKOFF_CAP_S = 1800.0

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


def sync_pair(
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
    What to do is core.syncs's to decide; the store reads once and writes once around it.
    """
    now = clock()
    with store.session() as session:
        found = outbox.look(session, catalog, placement_id, user_id, now)
        if found is None:
            return SyncResult(Synced.NOTHING_TO_DO)
        decision = syncs.decide(found, poster is not None, now)
        decision = syncs.taken(decision, outbox.enact(session, found, decision, now))
    if not isinstance(decision, syncs.Post):
        return _without_post(decision)
    assert poster is not None  # decide() posts only with a poster
    post = decision.score_post
    answer: Posted | Exception
    try:
        try:
            answer = poster.post(post)
        except ScoreRefused as refused:
            # the LMS holds a timestamp we did not record (a post whose answer was lost, or
            # a clock ahead of ours): once more, a second later, then the normal backoff
            log.info(
                "sync of user %s on placement %s: %s; posting again", user_id, placement_id, refused
            )
            post = replace(post, timestamp=post.timestamp + syncs.SECOND)
            _sleep_until(post.timestamp, clock, sleep)
            answer = poster.post(post)
    except Exception as exc:  # noqa: BLE001  whatever broke, the outbox row says so
        answer = exc
    outcome = syncs.conclude(
        found, post, answer, max_attempts, backoff(found.attempts + 1), now, clock()
    )
    _log(outcome, user_id, placement_id, max_attempts)
    with store.session() as session:
        released, wait_s = outbox.conclude(session, found, outcome)
    return SyncResult(_synced(outcome), wait_s, tuple(released))


def _without_post(decision: syncs.Decision) -> SyncResult:
    if isinstance(decision, syncs.Wait):
        return SyncResult(Synced.WAIT, retry_in_s=decision.retry_in_s)
    if isinstance(decision, syncs.Hold):
        return SyncResult(Synced.HELD)
    if isinstance(decision, syncs.Skip):
        return SyncResult(Synced.SKIPPED)
    return SyncResult(Synced.PAUSED)


def _synced(outcome: syncs.Outcome) -> Synced:
    if isinstance(outcome, syncs.Accepted):
        return Synced.SENT
    if isinstance(outcome, syncs.Away):
        return Synced.AWAY
    return Synced.FAILED if outcome.retry_in_s is None else Synced.RETRY


def _sleep_until(
    moment: datetime, clock: Callable[[], datetime], sleep: Callable[[float], None]
) -> None:
    ahead = (moment - clock()).total_seconds()
    if 0 < ahead <= syncs.COALESCE.total_seconds():
        sleep(ahead)


def _log(outcome: syncs.Outcome, user_id: int, placement_id: int, max_attempts: int) -> None:
    if isinstance(outcome, syncs.Away):
        log.warning(
            "sync of user %s on placement %s: the LMS is away: %s",
            user_id, placement_id, outcome.error,
        )  # fmt: skip
    elif isinstance(outcome, syncs.Failed):
        log.warning(
            "sync of user %s on placement %s failed (attempt %d of %d): %s",
            user_id, placement_id, outcome.attempt, max_attempts, outcome.error,
        )  # fmt: skip
