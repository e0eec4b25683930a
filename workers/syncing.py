"""Sending a lesson's score to the LMS, through the grade-sync outbox.

Celery-free, so that tests drive it directly; workers.tasks wraps it in a task with retries.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from core.lessons import Catalog
from core.platforms import GradePoster, ScorePost
from service.store import grades
from service.store.database import Store
from service.store.models import utcnow

_BACKOFF_BASE_S = 5.0
_BACKOFF_CAP_S = 1800.0


class Synced(enum.StrEnum):
    """How one sync attempt ended."""

    SENT = "sent"
    SKIPPED = "skipped"  # nothing to post to; the reason is recorded
    RETRY = "retry"
    FAILED = "failed"  # out of attempts; the teacher sees it and may resend
    HELD = "held"  # a regraded score of the pair waits for the teacher: sent with it
    NOTHING_TO_DO = "nothing_to_do"


@dataclass(frozen=True)
class SyncResult:
    """The outcome, and for RETRY, when to try again."""

    outcome: Synced
    retry_in_s: float = 0.0


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
) -> SyncResult:
    """Compute the user's lesson score, keep it, and post it for every pending sync."""
    now = clock()
    with store.session() as session:
        found = grades.pending(session, placement_id, user_id)
        if found is None:
            return SyncResult(Synced.NOTHING_TO_DO)
        ids, placement = found.sync_ids, found.placement
        if grades.awaits_review(session, placement_id, user_id):
            # the score now would include regraded work the teacher has not sent yet: this
            # change goes out with it, when the teacher sends the regrade (release_held)
            grades.hold(session, ids, now)
            return SyncResult(Synced.HELD)
        lesson = catalog.lesson(placement.lesson_id)
        if lesson is None:
            reason = f"the lesson {placement.lesson_id!r} is not in the catalog"
            grades.settle(session, ids, grades.SKIPPED, now, error=reason)
            return SyncResult(Synced.SKIPPED)
        score = grades.score(session, placement, lesson, user_id)
        grades.save_grade(session, placement_id, user_id, score, now)
        if poster is None or not (placement.line_item_url or found.line_items_url):
            reason = (
                grades.NO_LINE_ITEM
                if not (placement.line_item_url or found.line_items_url)
                else "no grade poster is configured"
            )
            grades.settle(session, ids, grades.SKIPPED, now, lesson=score, error=reason)
            return SyncResult(Synced.SKIPPED)
        pending_run = grades.in_flight(session, placement_id, user_id)
        post = ScorePost(
            found.platform_id,
            placement.line_item_url or "",
            found.user_sub,
            score,
            now,
            activity_progress="Submitted" if pending_run else "Completed",
            grading_progress="Pending" if pending_run else "FullyGraded",
            line_items_url=found.line_items_url,
            resource_link_id=placement.resource_link_id,
            resource_id=placement.lesson_id,
            label=placement.title or lesson.title,
        )
    try:
        posted = poster.post(post)
    except Exception as exc:  # noqa: BLE001  whatever broke, the outbox row says so
        return _failed(
            store, ids, found.attempts + 1, max_attempts, f"{type(exc).__name__}: {exc}", now
        )
    with store.session() as session:
        if posted.line_item_url and posted.line_item_url != post.line_item_url:
            grades.set_line_item(session, placement_id, posted.line_item_url)
        grades.settle(session, ids, grades.SENT, clock(), lesson=score, response=posted.response)
    return SyncResult(Synced.SENT)


def _failed(
    store: Store, ids: tuple[int, ...], attempt: int, max_attempts: int, error: str, now: datetime
) -> SyncResult:
    with store.session() as session:
        if attempt >= max_attempts:
            grades.settle(session, ids, grades.FAILED, now, error=error)
            return SyncResult(Synced.FAILED)
        delay = backoff(attempt)
        retry_at = now + timedelta(seconds=delay)
        grades.settle(session, ids, grades.PENDING, now, error=error, retry_at=retry_at)
    return SyncResult(Synced.RETRY, retry_in_s=delay)
