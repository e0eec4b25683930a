"""core/verdicts.grade_in_turns: a grading that has had its turn pauses between cases when
others wait, and goes on later from where it stopped, to the same verdict (issue 27)."""

from pathlib import Path

from core.lessons import load_catalog
from core.runs import RunOutcome, RunResult
from core.verdicts import Paused, Turn, Verdict, grade_in_turns, grade_source
from workers.sandbox.fake import FakeSandbox

EXERCISE = (
    load_catalog(Path(__file__).parents[2] / "lessons").lesson("expert/scaled-dot-product").exercise
)
ENDLESS = b"while True:\n    pass\n"


def timed_out(request):
    return RunResult(RunOutcome.TIMEOUT, duration_ms=1000, reason="")


def test_a_grading_pauses_once_its_turn_is_used_and_others_wait():
    sandbox = FakeSandbox(timed_out)
    paused = grade_in_turns(EXERCISE, ENDLESS, sandbox, turn=Turn(2000, lambda: True))
    assert isinstance(paused, Paused) and len(paused.done) == 2
    assert len(sandbox.requests) == 2  # nothing started that was not finished


def test_a_grading_with_nobody_waiting_runs_to_its_end():
    asked = []
    turn = Turn(2000, lambda: asked.append(1) or False)
    graded = grade_in_turns(EXERCISE, ENDLESS, FakeSandbox(timed_out), turn=turn)
    assert isinstance(graded, Verdict) and len(graded.cases) == len(EXERCISE.cases) == 6
    assert len(asked) == 4  # asked before each case after the turn was used: cheap enough


def test_turns_taken_end_in_the_verdict_one_turn_gives():
    sandbox = FakeSandbox(timed_out)
    done, turns = (), 0
    while not isinstance(graded := grade_in_turns(
            EXERCISE, ENDLESS, sandbox, done, Turn(2000, lambda: True)), Verdict):  # fmt: skip
        done, turns = graded.done, turns + 1
    assert turns == 2 and len(sandbox.requests) == 6  # each case run once, in three turns
    assert graded == grade_source(EXERCISE, ENDLESS, FakeSandbox(timed_out))


def test_parallel_runs_stop_taking_cases_but_finish_the_ones_they_took():
    sandbox = FakeSandbox(timed_out, parallel_runs=3)
    paused = grade_in_turns(EXERCISE, ENDLESS, sandbox, turn=Turn(2000, lambda: True))
    assert isinstance(paused, Paused) and 2 <= len(paused.done) < 6
    assert len(sandbox.requests) == len(paused.done)


def limited(request):
    """An endless loop: it runs for as long as its time limit allows."""
    return RunResult(RunOutcome.TIMEOUT, duration_ms=int(request.limits.time_s * 1000), reason="")


def test_while_others_wait_a_first_try_is_cut_short_and_runs_whole_next_turn():
    sandbox = FakeSandbox(limited)
    first = grade_in_turns(EXERCISE, ENDLESS, sandbox, turn=Turn(2000, lambda: True, 0.5))
    assert isinstance(first, Paused) and first.done == () and first.tried == {0}
    assert [r.limits.time_s for r in sandbox.requests] == [0.5]  # half a second, not five
    later = Turn(2000, lambda: True, 0.5, first.tried)
    second = grade_in_turns(EXERCISE, ENDLESS, sandbox, first.done, later)
    # the tried case ran whole (its verdict), which used the turn
    assert isinstance(second, Paused) and len(second.done) == 1 and second.tried == set()
    assert [r.limits.time_s for r in sandbox.requests] == [0.5, EXERCISE.limits.time_s]
    assert second.done[0].duration_ms == EXERCISE.limits.time_s * 1000
    third = grade_in_turns(EXERCISE, ENDLESS, sandbox, second.done, Turn(2000, lambda: True, 0.5))
    assert isinstance(third, Paused) and len(third.done) == 1 and third.tried == {1}


def test_cut_turns_end_in_the_verdict_one_turn_gives():
    sandbox = FakeSandbox(limited, parallel_runs=2)
    done, tried = (), frozenset()
    while True:
        graded = grade_in_turns(
            EXERCISE, ENDLESS, sandbox, done, Turn(2000, lambda: True, 0.5, tried)
        )
        if isinstance(graded, Verdict):
            break
        done, tried = graded.done, graded.tried
    assert graded == grade_source(EXERCISE, ENDLESS, FakeSandbox(limited))
    whole = [r for r in sandbox.requests if r.limits.time_s == EXERCISE.limits.time_s]
    assert len(whole) == 6  # each case's verdict comes from a whole run


def test_a_case_that_ends_within_its_first_try_is_not_run_again():
    sandbox = FakeSandbox()  # the fake's runs end at once
    graded = grade_in_turns(EXERCISE, b"print(1)\n", sandbox, turn=Turn(2000, lambda: True, 0.5))
    assert isinstance(graded, Verdict) and len(sandbox.requests) == 6


def test_nobody_waiting_at_the_turns_start_no_case_is_cut():
    sandbox = FakeSandbox(limited)
    graded = grade_in_turns(EXERCISE, ENDLESS, sandbox, turn=Turn(2000, lambda: False, 0.5))
    assert isinstance(graded, Verdict)
    assert {r.limits.time_s for r in sandbox.requests} == {EXERCISE.limits.time_s}
