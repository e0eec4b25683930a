"""The figures /metrics shows: submissions by status and outcome, syncs, grading latency."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from service.store.database import Store
from service.store.models import GradeSync, Submission

LATENCY_SAMPLE = 10_000  # the newest graded submissions whose latency is measured


@dataclass(frozen=True)
class Figures:
    """Counts by label, and the grading latencies (seconds) of the newest graded work."""

    submissions: list[tuple[str, int]]  # by status
    runs: list[tuple[str, int]]  # graded runs by outcome
    syncs: list[tuple[str, int]]  # grade syncs by status
    latencies: list[float]


def figures(store: Store) -> Figures:
    """Read the figures in one read-only transaction (four queries)."""
    with store.reading() as session:
        by_status = session.execute(
            select(Submission.status, func.count()).group_by(Submission.status)
        ).all()
        by_outcome = session.execute(
            select(Submission.run_status, func.count())
            .where(Submission.run_status.is_not(None))
            .group_by(Submission.run_status)
        ).all()
        syncs = session.execute(
            select(GradeSync.status, func.count()).group_by(GradeSync.status)
        ).all()
        latencies = session.execute(
            select(Submission.created_at, Submission.graded_at)
            .where(Submission.graded_at.is_not(None))
            .order_by(Submission.id.desc())
            .limit(LATENCY_SAMPLE)
        ).all()
    return Figures(
        [(str(status), int(count)) for status, count in by_status],
        [(str(outcome), int(count)) for outcome, count in by_outcome],
        [(str(status), int(count)) for status, count in syncs],
        [(graded - created).total_seconds() for created, graded in latencies if graded],
    )
