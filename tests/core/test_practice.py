"""core/practice: a practice run runs the student's input and the visible cases, never a
hidden one, judges the cases as a verdict does and words them without points (issue 30)."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from core.lessons import load_catalog
from core.practice import (
    ON_INPUT,
    InputRun,
    Practice,
    input_from,
    plan,
    practice_in_turns,
    visible,
)
from core.runs import RunOutcome, RunResult, RunStatus
from core.verdicts import Paused, Turn
from workers.sandbox.fake import FakeSandbox

CATALOG = load_catalog(Path(__file__).parents[2] / "lessons")
POSITIONAL = CATALOG.lesson("expert/positional-encoding").exercise
SCALED = CATALOG.lesson("expert/scaled-dot-product").exercise
SEED = CATALOG.lesson("expert/what-is-attention").exercise


def hidden_traces(exercise):
    """Return what of each hidden case could travel: its name, stdin, expression, output."""
    found = []
    for case in exercise.cases:
        if case.hidden:
            found += [case.name, case.expr or "", case.stdin, case.output]
    return [trace for trace in found if trace]


def everything_sent(sandbox):
    """Return every byte of every request the sandbox was given, as text."""
    parts = []
    for request in sandbox.requests:
        parts += [request.stdin.decode(), request.entrypoint]
        parts += [name + content.decode() for name, content in request.files.items()]
    return "\n".join(parts)


@pytest.mark.parametrize("exercise", [POSITIONAL, SCALED], ids=["positional", "scaled"])
@pytest.mark.parametrize("stdin", [None, "2 2\n"], ids=["no-input", "input"])
def test_a_hidden_case_is_never_run_nor_named(exercise, stdin):
    sandbox = FakeSandbox(lambda r: RunResult(RunOutcome.EXITED, b"1\n", exit_code=0))
    practice = practice_in_turns(exercise, b"print(1)\n", stdin, sandbox)
    assert isinstance(practice, Practice)
    shown = [case.name for case in exercise.cases if not case.hidden]
    assert [case.name for case in practice.verdict.cases] == shown
    assert len(sandbox.requests) == len(shown) + (stdin is not None)
    traces = hidden_traces(exercise)
    assert traces  # the lesson has hidden cases: the test means something
    words = (
        everything_sent(sandbox)
        + json.dumps([case.record() for case in practice.verdict.cases])
        + str(practice.verdict.message)
    )
    assert [trace for trace in traces if trace in words] == []


def test_the_input_run_comes_first_and_is_shown_unjudged():
    def program(request):
        if request.stdin == b"3 4\n" and request.entrypoint == "model.py":
            return RunResult(RunOutcome.EXITED, b"a table\n", b"a warning\n", 0, duration_ms=4)
        return RunResult(RunOutcome.EXITED, b"", exit_code=0, duration_ms=2)

    sandbox = FakeSandbox(program)
    practice = practice_in_turns(POSITIONAL, b"print(1)\n", "3 4\n", sandbox)
    assert plan(POSITIONAL, "3 4\n")[0] == ON_INPUT
    assert sandbox.requests[0].files["model.py"] == b"print(1)\n"  # no harness: the program
    assert practice.on_input == InputRun(RunOutcome.EXITED, "a table\n", "a warning\n", 0, 4)
    assert practice.on_input.feedback == ""  # nothing to judge it against
    assert practice.verdict.status is RunStatus.FAILED  # the cases are judged, as a verdict's
    assert practice.duration_ms == 4 + practice.verdict.duration_ms
    assert input_from(practice.on_input.record()) == practice.on_input


@pytest.mark.parametrize(
    ("result", "words"),
    [
        (
            RunResult(RunOutcome.EXITED, stderr=b"Traceback\nValueError: bad\n", exit_code=1),
            "Last error line: ValueError: bad",
        ),
        (RunResult(RunOutcome.TIMEOUT, duration_ms=5000), "ran out of time (5 s)"),
        (RunResult(RunOutcome.OUTPUT_LIMIT), "printed more than allowed"),
    ],
    ids=["crash", "timeout", "output"],
)
def test_an_input_run_that_fails_says_why(result, words):
    sandbox = FakeSandbox(lambda request: result)
    practice = practice_in_turns(POSITIONAL, b"x\n", "1 2\n", sandbox)
    assert words in practice.on_input.feedback


def test_the_cases_are_worded_without_points():
    expected = SEED.expected_output.encode()
    sandbox = FakeSandbox(lambda r: RunResult(RunOutcome.EXITED, expected, exit_code=0))
    seed = practice_in_turns(SEED, b"print(1)\n", None, sandbox)
    assert seed.on_input is None  # no input given: the one visible case alone
    assert str(seed.verdict.message) == "Your program's output matches the expected output."
    wrong = FakeSandbox(lambda r: RunResult(RunOutcome.EXITED, b"1\n", exit_code=0))
    scaled = practice_in_turns(SCALED, b"print(1)\n", None, wrong)
    shown = len(visible(SCALED).cases)
    assert str(scaled.verdict.message).startswith(f"0 of {shown} cases passed.")
    assert "points" not in str(scaled.verdict.message)


def test_with_no_visible_case_the_program_runs_once_on_an_empty_input():
    hidden = replace(SCALED, cases=tuple(replace(c, hidden=True) for c in SCALED.cases))
    sandbox = FakeSandbox(lambda r: RunResult(RunOutcome.EXITED, b"hi\n", exit_code=0))
    practice = practice_in_turns(hidden, b"print('hi')\n", None, sandbox)
    assert practice.verdict is None and practice.on_input.stdout == "hi\n"
    assert [request.stdin for request in sandbox.requests] == [b""]


def test_a_source_that_may_not_run_is_refused_in_every_run():
    sandbox = FakeSandbox()
    practice = practice_in_turns(POSITIONAL, b"\x00", "1 2\n", sandbox)
    assert sandbox.requests == []
    assert practice.on_input.outcome is RunOutcome.REJECTED
    assert "NUL" in practice.on_input.feedback
    assert {case.status for case in practice.verdict.cases} == {RunStatus.REJECTED}


def test_a_practice_run_takes_turns_and_ends_as_one_turn_would():
    def endless(request):
        return RunResult(RunOutcome.TIMEOUT, duration_ms=int(request.limits.time_s * 1000))

    sandbox = FakeSandbox(endless)
    done, turns = (), 0
    while isinstance(
        ran := practice_in_turns(SCALED, b"x", "1", sandbox, done, Turn(2000, lambda: True)),
        Paused,
    ):
        done, turns = ran.done, turns + 1
    runs = len(plan(SCALED, "1"))
    assert turns == runs - 1 and len(sandbox.requests) == runs  # a run a turn: 5 s each
    assert ran == practice_in_turns(SCALED, b"x", "1", FakeSandbox(endless))
