"""The whole submission pipeline on real processes: the app, redis-server, Celery workers.

Used by the fault tests and by benchmarks/pipeline.py. The app runs in this process (its
test client makes the HTTP requests, or gunicorn serves it for the benchmark); workers are
`codeblanks worker` child processes configured through CODEBLANKS_* variables.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from core.runs import RunRequest
from service.settings import PREFIX, Settings
from service.store.models import GradeSync, Submission, SubmissionStatus, SyncStatus
from service.web import create_app, extensions
from testkit.factories import SCALED, Placed, add_student, place, settings_in
from testkit.servers import REPO, RedisServer, WorkerProcess
from testkit.sessions import sign_in
from testkit.waits import until
from workers.sandbox import BACKENDS, make_sandbox

SOLUTION = (REPO / "lessons" / SCALED / "solution" / "model.py").read_text()


def fastest_sandbox(settings: Settings) -> str:
    """Return "warm" when that backend exists here and runs, else "bwrap"."""
    if "warm" in BACKENDS:
        try:
            sandbox = make_sandbox("warm", settings.runtime_dir)
            sandbox.run(RunRequest({"main.py": b"print(1)"}, "main.py"))
            close = getattr(sandbox, "close", None)
            if close is not None:
                close()
            return "warm"
        except Exception:  # noqa: BLE001  not ready on this machine: use the cold backend
            pass
    return "bwrap"


@dataclass(frozen=True)
class Counts:
    """How a batch of submissions fared; `duplicated` counts verdicts saved more than once."""

    submitted: int
    graded: int
    lost: int
    duplicated: int
    extra_claims: int

    def line(self, what: str) -> str:
        """Return the counts as one line for the test log."""
        return (
            f"{what}: submitted={self.submitted} graded={self.graded} lost={self.lost} "
            f"duplicated={self.duplicated} (extra claims after faults: {self.extra_claims})"
        )


def add_sync_pool(parser: argparse.ArgumentParser) -> None:
    """Add a benchmark's --sync-pool option: the sync worker's pool, as the settings have it."""
    parser.add_argument(
        "--sync-pool",
        type=int,
        default=Settings.from_env().sync_concurrency,
        help="the sync worker's pool (0: no sync worker, one worker on both queues)",
    )


class Pipeline:
    """A private redis-server, a database, an app and any number of workers."""

    def __init__(self, tmp_path: Path, redis: RedisServer, database_url: str, **changes: Any):
        defaults: dict[str, Any] = {
            "database_url": database_url,
            "redis_url": redis.url,
            "submit_rate": 1_000_000,
            "lease_s": 6,
            "queued_deadline_s": 3,
            "sweep_interval_s": 1,
        }
        self.settings = settings_in(tmp_path, **{**defaults, **changes})
        self.tmp_path = tmp_path
        self.redis = redis
        self.app = create_app({"TESTING": True, "SETTINGS": self.settings})
        self.store = extensions.store(self.app)
        self.client = self.app.test_client()
        self.workers: list[WorkerProcess] = []
        self.placed: Placed = place(self.store)
        self._students = 0

    def env(self) -> dict[str, str]:
        """Return the settings as CODEBLANKS_* variables, for worker processes."""
        return self.env_of(self.settings)

    @staticmethod
    def env_of(settings: Settings) -> dict[str, str]:
        """Return `settings` as CODEBLANKS_* variables, for worker processes."""
        return {PREFIX + f.name.upper(): str(getattr(settings, f.name)) for f in fields(settings)}

    def start_worker(self, concurrency: int = 2, queues: str = "grade,sync") -> WorkerProcess:
        """Start a worker process and wait until it consumes."""
        log = self.tmp_path / f"worker-{len(self.workers)}.log"
        worker = WorkerProcess(self.env(), log, queues)
        worker.start(concurrency)
        worker.wait_ready()
        self.workers.append(worker)
        return worker

    def stop(self) -> None:
        """Stop every worker, then close the app's connections."""
        for worker in self.workers:
            worker.stop()
        self.store.dispose()

    def student(self) -> None:
        """Sign the client in as a new student of the placement."""
        self._students += 1
        user_id = add_student(self.store, self.placed, f"learner-{self._students}")
        sign_in(self.client, user_id, [self.placed.placement_id])

    def submit(self, source: str = SOLUTION) -> int:
        """POST code through the API; return the submission's id."""
        url = f"/api/placements/{self.placed.placement_id}/submissions"
        response = self.client.post(url, json={"source": source})
        assert response.status_code == 202, response.get_json()
        return int(response.get_json()["id"])

    def statuses(self, ids: Iterable[int]) -> dict[int, str]:
        """Return each submission's status."""
        with self.store.session() as session:
            rows = session.execute(
                select(Submission.id, Submission.status).where(Submission.id.in_(list(ids)))
            )
            return {sid: status for sid, status in rows}

    def wait_until(self, ids: list[int], status: str, timeout: float) -> bool:
        """Wait until every submission has the status; return whether they all did."""
        return until(lambda: all(s == status for s in self.statuses(ids).values()), timeout, 0.2)

    def explain(self, ids: list[int]) -> str:
        """Say where the submissions stand and what the workers logged last (for a failure)."""
        statuses: dict[str, int] = {}
        for status in self.statuses(ids).values():
            statuses[status] = statuses.get(status, 0) + 1
        logs = "\n".join(
            f"--- {worker.log.name}:\n" + "\n".join(worker.log.read_text().splitlines()[-40:])
            for worker in self.workers
            if worker.log.exists()
        )
        return f"statuses {statuses}\n{logs}"

    def wait_for_syncs(self, timeout: float) -> int:
        """Wait until no grade sync is pending; return how many still are."""
        query = select(func.count(GradeSync.id)).where(GradeSync.status == SyncStatus.PENDING)

        def pending() -> int:
            with self.store.session() as session:
                return int(session.scalar(query) or 0)

        until(lambda: pending() == 0, timeout, 0.2)
        return pending()

    def counts(self, ids: list[int]) -> Counts:
        """Count the batch's outcome from the database, the source of truth."""
        with self.store.session() as session:
            rows = session.execute(
                select(
                    Submission.status, Submission.gradings, Submission.regrades, Submission.claims
                ).where(Submission.id.in_(ids))
            ).all()
        graded = sum(1 for row in rows if row.status == SubmissionStatus.GRADED)
        return Counts(
            submitted=len(ids),
            graded=graded,
            lost=len(ids) - graded,
            # a verdict per grading asked for: the first, and one per bulk regrade
            duplicated=sum(1 for row in rows if row.gradings > 1 + row.regrades),
            extra_claims=sum(row.claims - 1 - row.regrades for row in rows if row.claims > 1),
        )
