"""Each case's passes and the commonest first failing case, over each student's latest
graded submission (on SQLite and PostgreSQL)."""

import pytest

from core.runs import RunStatus
from service.store import case_tallies
from service.store.case_tallies import CaseCount, FirstFailure
from testkit.factories import add_student, place, submission
from tests.service.store.case_work import CASES, graded

P, F, T, E = RunStatus.PASSED, RunStatus.FAILED, RunStatus.TIMEOUT, RunStatus.ERROR
NAMES = list(CASES)


def verdicts(example, equal, row):
    return dict(zip(NAMES, (example, equal, row), strict=True))


@pytest.fixture
def cohort(store):
    """A placement with students in every state; returns (placement_id, latest by student)."""
    placed = place(store)
    ids = [placed.user_id] + [add_student(store, placed, f"s{i}") for i in range(2, 9)]
    s1, s2, s3, s4, s5, s6, s7, s8 = ids
    at = placed.placement_id
    graded(store, at, s1, verdicts(F, F, F))  # older: only the latest counts
    graded(store, at, s1, verdicts(P, F, P))  # first fails 'equal scores'
    graded(store, at, s2, verdicts(T, P, F))  # first fails 'the example' (timeout)
    graded(store, at, s3, verdicts(P, P, P))  # passes every case
    graded(store, at, s4, verdicts(P, F, F))  # first fails 'equal scores'
    graded(store, at, s5, verdicts(F, P, P))  # first fails 'the example' ...
    graded(store, at, s5, None, grader_error="sandbox broke")  # ... our fault: not counted
    submission(store, at, s6)  # queued, never graded: not counted
    graded(store, at, s7, None)  # graded before cases were kept
    graded(store, at, s8, verdicts(T, P, P))  # first fails 'the example' (timeout)
    other = place(store)  # another placement's work is not counted
    graded(store, other.placement_id, other.user_id, verdicts(F, F, F))
    return at


def test_each_case_counts_each_students_latest_graded_submission(store, cohort):
    with store.reading() as session:
        counted = case_tallies.tally(session, cohort, NAMES)
    assert counted.cases == [
        CaseCount("the example", passed=3, graded=6),  # s1 s3 s4
        CaseCount("equal scores", passed=4, graded=6),  # s2 s3 s5 s8
        CaseCount("a row", passed=4, graded=6),  # s1 s3 s5 s8
    ]
    assert counted.first_failures == [
        FirstFailure("the example", 3, (("timeout", 2), ("failed", 1))),
        FirstFailure("equal scores", 2, (("failed", 2),)),
    ]
    assert (counted.all_passed, counted.students, counted.unrecorded) == (1, 6, 1)
    assert not counted.capped


def test_a_case_the_submissions_never_ran_counts_none_and_a_dropped_one_is_ignored(store, cohort):
    # the lesson since gained 'a new case' and lost 'the example': a regrade would fix it
    with store.reading() as session:
        counted = case_tallies.tally(session, cohort, ["equal scores", "a row", "a new case"])
    assert counted.cases[2] == CaseCount("a new case", 0, 0)
    assert [(f.name, f.students) for f in counted.first_failures] == [
        ("equal scores", 2),
        ("a row", 1),  # s2, whose first failure was the dropped case
    ]
    assert counted.all_passed == 3  # s3, s5, s8


def test_the_count_is_capped_at_the_newest_students(store, cohort):
    with store.reading() as session:
        counted = case_tallies.tally(session, cohort, NAMES, limit=2)
    assert counted.capped
    # the two newest latest submissions: s8's, then s7's (no cases kept)
    assert (counted.students, counted.unrecorded) == (1, 1)
    assert counted.first_failures == [FirstFailure("the example", 1, (("timeout", 1),))]


def test_a_placement_without_graded_work_counts_nobody(store):
    placed = place(store)
    submission(store, placed.placement_id, placed.user_id)
    with store.reading() as session:
        counted = case_tallies.tally(session, placed.placement_id, NAMES)
    assert counted.cases == [CaseCount(name, 0, 0) for name in NAMES]
    assert (counted.first_failures, counted.students, counted.capped) == ([], 0, False)
