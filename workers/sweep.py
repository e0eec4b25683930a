"""The sweep: what a lost message or a dead worker left behind, found in the database.

Redis is only the transport: a submission queued too long, one whose worker's lease ran
out, and a grade sync past its due time are enqueued again. Delivering twice is harmless
(claims and fenced saves make grading idempotent; posting a score twice changes nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from celery import bootsteps
from celery.worker import WorkController

from service.queue import GradeMessage, SyncMessage, send_sweep
from service.settings import Settings
from service.store import expiry, grades, submissions
from service.store.database import Store
from service.store.models import utcnow


@dataclass
class Found:
    """What one sweep found to enqueue again."""

    submissions: list[GradeMessage] = field(default_factory=list)
    syncs: list[SyncMessage] = field(default_factory=list)
    purged: int = 0  # expired rows deleted (logins, nonces, tokens, failure counts)


def sweep(store: Store, settings: Settings) -> Found:
    """Find stuck submissions and overdue syncs, marking each as enqueued now."""
    now = utcnow()
    found = Found(submissions=submissions.stuck(store, now, settings.queued_deadline_s))
    with store.session() as session:
        found.syncs = grades.due_syncs(session, now, settings.queued_deadline_s)
    found.purged = expiry.purge(store, now)
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
        # a sweep older than the interval is pointless: the next one is on its way
        send_sweep(worker.app, interval)
