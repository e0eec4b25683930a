from datetime import UTC, datetime, timedelta

import pytest

from core.placements import Closure, Policy, Reveal, StudentException

DUE = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
BEFORE, AFTER = DUE - timedelta(minutes=1), DUE + timedelta(minutes=1)


@pytest.mark.parametrize(
    ("policy", "at", "used", "closure"),
    [
        (Policy(), AFTER, 99, None),
        (Policy(due_at=DUE), BEFORE, 0, None),
        (Policy(due_at=DUE), AFTER, 0, Closure.PAST_DUE),
        (Policy(due_at=DUE, late_penalty=0.0), AFTER, 0, None),
        (Policy(max_attempts=3), BEFORE, 2, None),
        (Policy(max_attempts=3), BEFORE, 3, Closure.OUT_OF_ATTEMPTS),
        (Policy(max_attempts=3), BEFORE, None, None),  # answers: attempts do not apply
        (Policy(max_attempts=1, due_at=DUE), AFTER, 1, Closure.PAST_DUE),
    ],
)
def test_closed(policy, at, used, closure):
    closed = policy.closed(at, used)
    assert (closed.closure if closed else None) == closure
    if closed:
        assert closed.message


def test_a_shown_solution_closes_the_exercise():
    closed = Policy(reveal=Reveal.AFTER_PASS).closed(BEFORE, 1, revealed=True)
    assert closed is not None and closed.closure is Closure.SOLUTION_SHOWN
    assert "sample solution" in str(closed.message)
    assert Policy(reveal=Reveal.AFTER_PASS).closed(BEFORE, 1, revealed=False) is None


def test_closed_messages_say_why():
    assert "2026-12-01 12:00 UTC" in str(Policy(due_at=DUE).closed(AFTER).message)
    assert "your 1 attempt " in str(Policy(max_attempts=1).closed(BEFORE, 1).message)
    assert "all 2 attempts " in str(Policy(max_attempts=2).closed(BEFORE, 2).message)


@pytest.mark.parametrize(
    ("policy", "at", "penalty"),
    [
        (Policy(due_at=DUE, late_penalty=0.25), BEFORE, 0.0),
        (Policy(due_at=DUE, late_penalty=0.25), AFTER, 0.25),
        (Policy(due_at=DUE, late_penalty=3.0), AFTER, 1.0),
        (Policy(late_penalty=0.5), AFTER, 0.0),
    ],
)
def test_penalty(policy, at, penalty):
    assert policy.penalty(at) == penalty


@pytest.mark.parametrize(
    ("policy", "at", "used", "passed", "shown"),
    [
        (Policy(), AFTER, 9, True, False),
        (Policy(reveal=Reveal.AFTER_PASS), BEFORE, 1, False, False),
        (Policy(reveal=Reveal.AFTER_PASS), BEFORE, 1, True, True),
        (
            Policy(reveal=Reveal.AFTER_ATTEMPTS, reveal_after_attempts=3, max_attempts=3),
            BEFORE,
            2,
            False,
            False,
        ),  # fmt: skip
        (
            Policy(reveal=Reveal.AFTER_ATTEMPTS, reveal_after_attempts=3, max_attempts=3),
            BEFORE,
            3,
            False,
            True,
        ),  # fmt: skip
        # no maximum: attempts never run out, so the solution would be shown while it pays
        (Policy(reveal=Reveal.AFTER_ATTEMPTS, reveal_after_attempts=3), BEFORE, 50, False, False),
        # a stored number below the maximum waits for the maximum
        (
            Policy(reveal=Reveal.AFTER_ATTEMPTS, reveal_after_attempts=1, max_attempts=4),
            BEFORE,
            3,
            False,
            False,
        ),  # fmt: skip
        (Policy(reveal=Reveal.AFTER_DUE, due_at=DUE), BEFORE, 0, True, False),
        (Policy(reveal=Reveal.AFTER_DUE, due_at=DUE), AFTER, 0, False, True),
    ],
)
def test_reveals(policy, at, used, passed, shown):
    assert policy.reveals(at, used, passed) is shown


LATER = DUE + timedelta(days=2)


def test_an_exceptions_later_due_date_keeps_the_lesson_open_and_on_time():
    policy = Policy(due_at=DUE).for_student(StudentException(due_at=LATER))
    assert policy.due_at == LATER
    assert policy.closed(AFTER) is None and not policy.is_late(AFTER)
    assert policy.closed(LATER + timedelta(minutes=1)).closure is Closure.PAST_DUE
    assert "2026-12-03 12:00 UTC" in str(policy.closed(LATER + timedelta(minutes=1)).message)
    # the answers shown at the due date wait for the student's own
    after_due = Policy(reveal=Reveal.AFTER_DUE, due_at=DUE)
    assert after_due.reveals(AFTER, 0, False)
    assert not after_due.for_student(StudentException(due_at=LATER)).reveals(AFTER, 0, False)


def test_an_exceptions_attempts_raise_the_maximum_and_the_reveal_after_them():
    policy = Policy(reveal=Reveal.AFTER_ATTEMPTS, reveal_after_attempts=3, max_attempts=3)
    mine = policy.for_student(StudentException(max_attempts=5))
    assert policy.closed(BEFORE, 3).closure is Closure.OUT_OF_ATTEMPTS
    assert mine.closed(BEFORE, 3) is None and mine.closed(BEFORE, 5) is not None
    assert "all 5 attempts" in str(mine.closed(BEFORE, 5).message)
    assert policy.reveals(BEFORE, 3, False) and not mine.reveals(BEFORE, 3, False)
    assert mine.reveals(BEFORE, 5, False)


def test_a_waived_penalty_takes_nothing_off_late_work():
    policy = Policy(due_at=DUE, late_penalty=0.3)
    assert policy.penalty(AFTER) == 0.3
    waived = policy.for_student(StudentException(waive_penalty=True))
    assert waived.penalty(AFTER) == 0.0 and waived.is_late(AFTER)
    assert waived.closed(AFTER) is None


@pytest.mark.parametrize(
    ("policy", "exception"),
    [
        # an exception never takes away: an earlier date, fewer attempts keep the lesson's
        (Policy(due_at=DUE, max_attempts=3), StudentException(DUE - timedelta(days=1), 1)),
        # nothing to extend: no due date, no limit
        (Policy(), StudentException(LATER, 9)),
        # a waived penalty accepts no late work the lesson refuses
        (Policy(due_at=DUE), StudentException(waive_penalty=True)),
        (Policy(due_at=DUE), None),
    ],
)
def test_an_exception_only_ever_allows_more(policy, exception):
    assert policy.for_student(exception) == policy


def test_an_empty_exception_says_so():
    assert StudentException().empty and not StudentException(waive_penalty=True).empty
