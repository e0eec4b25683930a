"""The Celery tasks, by stable name: thin wrappers that take ids and call workers.grading,
workers.practicing, workers.syncing, workers.sweep, service.lti.roster and
service.lti.results with the worker's context.

Each task reads the context its Celery app carries (`WorkerContext.of(self.app)`, made and
attached at the worker's start by workers.app); no Flask. A task returns how it ended as its
enum's member, as workers.grading and workers.syncing do: Celery keeps no result here
(`task_ignore_result`), and a StrEnum is JSON as its word, so no `.value` is needed at the
boundary (tests/workers/test_tasks.py holds both).
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from typing import NoReturn, TypeVar

from celery import Task, shared_task
from sqlalchemy.exc import DBAPIError

from core.errors import GraderError
from core.platforms import NoScoreScope
from service import logs
from service.lti import line_items, self_test
from service.lti.results import ResultsRead, read_results
from service.lti.roster import sync_roster
from service.queue import TaskName, send
from workers.context import WorkerContext
from workers.grading import Outcome, grade_stored
from workers.practicing import Practiced, practice_stored
from workers.sweep import find_stuck
from workers.syncing import Synced, backoff, sync_pair

# Waits in the broker are short (wait_s: 5 s by default), so these count hops:
_DB_RETRIES = 120  # about ten minutes of database outage
# about a minute and a half: less than service.lti.roster.ASK_EVERY, so a teacher's next
# visit asks again only once these are over
ROSTER_RETRIES = 16
# about half a minute: less than service.lti.results.ASK_EVERY, for the same reason
RESULTS_RETRIES = 3
# about half a minute; after them the placement's first grade post makes its line item
LINE_ITEM_RETRIES = 3

log = logging.getLogger(__name__)
T = TypeVar("T")


class RosterRead(enum.StrEnum):
    """How one delivery of a roster refresh ended."""

    READ = "read"
    NO_ROSTER = "no_roster"  # the LMS offers no roster for the course
    FAILED = "failed"  # the LMS failed every retry; a teacher's page asks again once stale


@shared_task(
    name=TaskName.GRADE_SUBMISSION.value,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
)
def grade_submission(self: Task, submission_id: int) -> Outcome:
    """Grade a stored submission once, then ask for its grade to be synced."""
    ctx = WorkerContext.of(self.app)
    try:
        with logs.grading(submission_id):
            graded = grade_stored(
                ctx.store,
                ctx.catalog,
                ctx.sandbox(),
                ctx.settings,
                submission_id,
                queue=_queue_of(self),
            )
    except DBAPIError as exc:
        # the database is away: this delivery gives up, a later one (or the sweep) goes on
        _retry(self, backoff(self.request.retries + 1), exc)
    if graded.outcome in (Outcome.HELD, Outcome.RETRY):
        _retry(self, graded.retry_in_s)
    send(self.app, graded.follows)  # decided as the verdict (or the pause) was saved
    return graded.outcome


@shared_task(
    name=TaskName.RUN_PRACTICE.value,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
)
def run_practice(self: Task, run_id: int) -> Practiced:
    """Run a stored practice run once (no attempt, no grade); then send its author's next."""
    ctx = WorkerContext.of(self.app)
    try:
        ran = practice_stored(ctx.store, ctx.catalog, ctx.sandbox(), ctx.settings, run_id)
    except DBAPIError as exc:
        _retry(self, backoff(self.request.retries + 1), exc)
    if ran.outcome in (Practiced.HELD, Practiced.RETRY):
        _retry(self, ran.retry_in_s)
    send(self.app, ran.follows)  # decided as the run's end (or pause) was saved
    return ran.outcome


@shared_task(name=TaskName.SYNC_GRADE.value, bind=True, acks_late=True, max_retries=None)
def sync_grade(self: Task, user_id: int, placement_id: int) -> Synced:
    """Post the user's lesson score on the placement to the LMS, with backoff on failure."""
    ctx = WorkerContext.of(self.app)
    try:
        result = sync_pair(
            ctx.store,
            ctx.catalog,
            ctx.poster,
            user_id,
            placement_id,
            ctx.settings.sync_attempts,
        )
    except DBAPIError as exc:
        _retry(self, backoff(self.request.retries + 1), exc)
    send(self.app, result.released)  # the LMS is back: what waited for it goes now
    if result.outcome in (Synced.RETRY, Synced.WAIT, Synced.AWAY):
        _retry(self, result.retry_in_s)
    return result.outcome


@shared_task(name=TaskName.SWEEP.value, bind=True, ignore_result=True)
def sweep(self: Task) -> dict[str, int]:
    """Enqueue again what is stuck: submissions past their deadline, syncs past due."""
    ctx = WorkerContext.of(self.app)
    found = find_stuck(ctx.store, ctx.settings)
    send(self.app, [*found.submissions, *found.turns, *found.runs, *found.syncs])
    return {
        "submissions": len(found.submissions),
        "turns": len(found.turns),
        "runs": len(found.runs),
        "syncs": len(found.syncs),
        "purged": found.purged,
    }


@shared_task(name=TaskName.REFRESH_ROSTER.value, bind=True, acks_late=True, max_retries=None)
def refresh_roster(self: Task, course_id: int) -> RosterRead:
    """Read the course's roster from the LMS (NRPS), with backoff while the LMS fails."""

    def read() -> RosterRead:
        synced = sync_roster(WorkerContext.of(self.app).lti, course_id)
        return RosterRead.NO_ROSTER if synced is None else RosterRead.READ

    # a roster that failed is noted on the course: its teacher's pages show it, and ask
    # again once the roster is stale
    return _from_lms(self, read, RosterRead.FAILED, ROSTER_RETRIES, "course_id", course_id)


@shared_task(name=TaskName.READ_RESULTS.value, bind=True, acks_late=True, max_retries=None)
def read_line_item(self: Task, placement_id: int) -> ResultsRead:
    """Read what the placement's line item holds in the LMS, with backoff while it is away."""

    def read() -> ResultsRead:
        return read_results(WorkerContext.of(self.app).lti, placement_id)

    # a read that failed is noted on the placement: its teacher's pages show it, and ask
    # again once the read is stale
    return _from_lms(self, read, ResultsRead.FAILED, RESULTS_RETRIES, "placement_id", placement_id)


@shared_task(name=TaskName.CHECK_PLATFORM.value, bind=True, acks_late=True)
def check_platform(self: Task, platform_id: int) -> bool | None:
    """Run a platform's self-test in the background (read-only: no throwaway grade in a
    course) and keep its result; return whether grades can be sent.

    No retry: the self-test notes a platform that is away as its result, and the admin runs
    it again from the admin page or `codeblanks platforms check`.
    """
    found = self_test.run(WorkerContext.of(self.app).lti, platform_id, try_grades=False)
    return None if found is None else found.grades_ok


class LineItemMade(enum.StrEnum):
    """How one delivery of a line item's making ended."""

    MADE = "made"  # made, or found bound to the placement's link
    NOT_WANTED = "not_wanted"  # the placement has one already, or its LMS gives no URL
    REFUSED = "refused"  # the LMS grants no line item scope: its grade posts will say so
    FAILED = "failed"  # the LMS failed every retry; the first grade post tries again


@shared_task(name=TaskName.MAKE_LINE_ITEM.value, bind=True, acks_late=True, max_retries=None)
def make_line_item(self: Task, placement_id: int) -> LineItemMade:
    """Make the placement's line item in its LMS (its launch gave none), with backoff."""

    def make() -> LineItemMade:
        try:
            made = line_items.make(WorkerContext.of(self.app).lti, placement_id)
        except NoScoreScope:
            return LineItemMade.REFUSED
        return LineItemMade.NOT_WANTED if made is None else LineItemMade.MADE

    return _from_lms(
        self, make, LineItemMade.FAILED, LINE_ITEM_RETRIES, "placement_id", placement_id
    )


def _from_lms(task: Task, read: Callable[[], T], failed: T, retries: int, key: str, id_: int) -> T:
    """Return what `read` read from the LMS, retrying with backoff; `failed` after `retries`."""
    try:
        return read()
    except DBAPIError as exc:
        # the database is away: like the other tasks, try again once it may be back
        _retry(task, backoff(task.request.retries + 1), exc)
    except GraderError as exc:
        attempt = task.request.retries + 1
        log.warning(
            "%s (%s %s) not read (attempt %s of %s): %s",
            task.name,
            key,
            id_,
            attempt,
            retries + 1,
            exc,
            extra={key: id_},
        )
        if task.request.retries >= retries:
            return failed
        raise task.retry(countdown=wait_s(task, backoff(attempt)), exc=exc) from exc


def _retry(task: Task, countdown: float, exc: Exception | None = None) -> NoReturn:
    if task.request.retries >= _DB_RETRIES and exc is not None:
        raise exc  # the sweep takes it from here once the database is back
    raise task.retry(countdown=wait_s(task, countdown), exc=exc)


def wait_s(task: Task, countdown: float) -> float:
    """Return how long a retry of `task` may wait in the broker: at most half the visibility
    timeout, so that a live worker's waiting message is never delivered to another.

    A longer wait goes in hops: the task, back early, finds its work not due yet (a grade
    sync's next attempt, a lease held by another worker) and waits again.
    """
    return min(countdown, WorkerContext.of(task.app).settings.visibility_timeout_s / 2)


def _queue_of(task: Task) -> str | None:
    """Return the queue the task's message came from (None when run in-process)."""
    delivery = task.request.delivery_info or {}
    queue = delivery.get("routing_key")
    return str(queue) if queue else None


def prepare_sandbox(ctx: WorkerContext) -> None:
    """Build this pool process's sandbox before its first task, and start a warm one's first
    zygote in the background: the first submission after a worker (re)start does not wait."""
    start = getattr(ctx.sandbox(), "start", None)
    if start is not None:
        start(1)  # a prefork pool process runs one submission at a time
