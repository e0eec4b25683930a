"""The sweep: what a lost message or a dead worker left behind, found in the database.

Redis is only the transport: a submission (or a practice run) queued too long, one whose
worker's lease ran out, and a grade sync past its due time are enqueued again; held scores
whose release date has come are released. Delivering twice is harmless (claims and fenced
saves make grading idempotent; posting a score twice changes nothing).

A live worker renews the lease of the submission it grades (workers.grading), so a lease
that ran out means its worker is gone: every worker sweeps every `sweep_interval_s` (2 s by
default), and the submission goes back at the head of its queue, within seconds of the
death (docs/operations.md, "When a worker dies").
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import timedelta

from celery import bootsteps
from celery.worker import WorkController

from service.queue import GradeMessage, PracticeMessage, SyncMessage, send_sweep
from service.settings import Settings
from service.store import expiry, grades, outages, practice_runs, releases, submissions
from service.store.database import Store
from service.store.models import utcnow


@dataclass
class Found:
    """What one sweep found to enqueue again."""

    submissions: list[GradeMessage] = field(default_factory=list)
    turns: list[GradeMessage] = field(default_factory=list)  # waited behind a turn missed
    runs: list[PracticeMessage] = field(default_factory=list)  # practice runs, stuck or waiting
    syncs: list[SyncMessage] = field(default_factory=list)
    purged: int = 0  # expired rows deleted (logins, nonces, tokens, failure counts, runs)


# a probe of a platform that is away comes back on time, within a second; this late, it is
# lost (its worker died, or its message), and another goes
PROBE_LATE = timedelta(seconds=10)
PURGE_EVERY_S = 60.0  # expired rows are no hurry: the sweep itself runs every few seconds
_purged_at: float | None = None  # this process's last purge (time.monotonic)


def find_stuck(store: Store, settings: Settings) -> Found:
    """Find stuck submissions, overdue syncs and lost probes, marking each as enqueued now."""
    global _purged_at
    now = utcnow()
    found = Found(submissions=submissions.stuck(store, now, settings.queued_deadline_s))
    found.turns = submissions.turns_due(store, now)
    found.runs = practice_runs.stuck(store, now, settings.queued_deadline_s)
    found.runs += practice_runs.turns_due(store, now)
    with store.session() as session:
        found.syncs = grades.due_syncs(session, now, settings.queued_deadline_s)
        lost = outages.lost_probes(session, now, PROBE_LATE)
        found.syncs += [message for message in lost if message not in found.syncs]
        # a release date come: nobody has to press anything (a release is taken once)
        released = releases.due(session, now)
        found.syncs += [message for message in released if message not in found.syncs]
    if _purged_at is None or time.monotonic() - _purged_at >= PURGE_EVERY_S:
        found.purged = expiry.purge(store, now)
        found.purged += practice_runs.purge(store, now - timedelta(seconds=settings.run_kept_s))
        _purged_at = time.monotonic()
    return found


class SweepTimer(bootsteps.StartStopStep):  # type: ignore[misc]
    """Sends a sweep task every `sweep_interval_s`, from each worker's main process.

    A timer in the worker rather than Celery beat: nothing more to run or to keep single,
    and N workers sweeping is harmless (each row is taken by one sweep). The sweep runs as
    a task in a pool process, so a slow database never stalls the worker's consumer.
    """

    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker: WorkController, **options: object) -> None:
        self.tref: object | None = None

    def start(self, worker: WorkController) -> None:
        """Start the timer."""
        interval = float(worker.app.conf.codeblanks_sweep_interval_s)
        self.tref = worker.timer.call_repeatedly(interval, self._send, (worker, interval))

    def stop(self, worker: WorkController) -> None:
        """Stop the timer."""
        if self.tref is not None:
            self.tref.cancel()  # type: ignore[attr-defined]
            self.tref = None

    def _send(self, worker: WorkController, interval: float) -> None:
        # a sweep that waited three intervals is pointless: the next ones are on their way
        # (one interval is too short: on a busy worker it waits out the task in hand)
        send_sweep(worker.app, 3 * interval)
