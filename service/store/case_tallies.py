"""How a placement's students fare case by case: each case's pass count, and the case that
most often fails first, over each student's latest graded submission."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.runs import RunStatus
from core.student_views import case_records
from service.store.models import Submission, SubmissionStatus

# The verdicts are JSON lists (Submission.cases), which SQLite and PostgreSQL take apart with
# different functions (json_each, json_array_elements); reading the column and counting here
# is one query on both. A row holds every case's output too (up to the output limit, 64 KB by
# default, per case), so rows are streamed in batches and only names and statuses are kept:
# memory stays at a batch, and the work at one row per student, up to the newest STUDENTS.
STUDENTS = 1000
BATCH = 50


@dataclass(frozen=True)
class CaseCount:
    """One case: how many of the counted submissions passed it, of those that ran it."""

    name: str
    passed: int
    graded: int


@dataclass(frozen=True)
class FirstFailure:
    """A case that was the first, in file order, not to pass, and for how many students."""

    name: str
    students: int
    statuses: tuple[
        tuple[str, int], ...
    ]  # its verdicts then (failed, timeout ...), commonest first


@dataclass(frozen=True)
class CaseTally:
    """Each case's passes and the commonest first failures, over the students counted."""

    cases: list[CaseCount]  # in the order of the names asked for
    first_failures: list[FirstFailure]  # commonest first
    all_passed: int  # students whose submission passed every case
    students: int  # students counted: their latest graded submission kept its cases
    unrecorded: int  # students whose latest was graded before cases were kept
    capped: bool  # more students than STUDENTS: the newest submissions were counted


def tally(
    session: Session, placement_id: int, names: Sequence[str], limit: int = STUDENTS
) -> CaseTally:
    """Count each named case's passes over each student's latest graded submission.

    A submission the grader failed on says nothing about the student's code, so it is not
    anyone's latest here. A stored case that is not among `names` (the lesson has changed
    since; a regrade brings it up to date) is not counted.
    """
    latest = (
        select(func.max(Submission.id))
        .where(
            Submission.placement_id == placement_id,
            Submission.status == SubmissionStatus.GRADED,
            Submission.grader_error.is_(None),
        )
        .group_by(Submission.user_id)
    )
    rows = session.execute(
        select(Submission.cases)
        .where(Submission.id.in_(latest))
        .order_by(Submission.id.desc())
        .limit(limit + 1)
        .execution_options(yield_per=BATCH)
    )
    passed: Counter[str] = Counter()
    graded: Counter[str] = Counter()
    first: dict[str, Counter[str]] = {}
    all_passed = students = unrecorded = read = 0
    for (stored,) in rows:
        read += 1
        if read > limit:
            break
        records = case_records(stored)
        if not records:
            unrecorded += 1
            continue
        students += 1
        statuses = _statuses(records)
        failing = None
        for name in names:
            if name not in statuses:
                continue
            graded[name] += 1
            if statuses[name] == RunStatus.PASSED:
                passed[name] += 1
            elif failing is None:
                failing = name
        if failing is None:
            all_passed += 1
        else:
            first.setdefault(failing, Counter())[statuses[failing]] += 1
    rows.close()
    failures = [
        FirstFailure(name, sum(counts.values()), tuple(counts.most_common()))
        for name, counts in first.items()
    ]
    order = {name: i for i, name in enumerate(names)}
    failures.sort(key=lambda f: (-f.students, order[f.name]))
    return CaseTally(
        cases=[CaseCount(name, passed[name], graded[name]) for name in names],
        first_failures=failures,
        all_passed=all_passed,
        students=students,
        unrecorded=unrecorded,
        capped=read > limit,
    )


def _statuses(records: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Return each stored case's status by its name (CaseVerdict.record() dicts)."""
    return {str(r.get("name")): str(r.get("status")) for r in records if isinstance(r, Mapping)}
