"""A practice run (the page's Run button): the student's code on the exercise's visible cases,
and once on an input of their own, judged as a verdict's cases are but worth nothing.

A practice run is no submission: it counts as no attempt, changes no score and reaches no
LMS (service/store/practice_runs.py keeps it apart). It never runs a hidden case: the
request of one is never built, so nothing of it (its name, input, count or time) can come
back. It runs in the same sandbox, with the exercise's limits, and in turns (core.verdicts
Turn) like a grading, so that an endless loop lets other students' work go first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from core.cases import CaseVerdict, crash_message
from core.figures import Figure, distinct, drop_note
from core.lessons import Exercise
from core.messages import Message, Text, from_json, join, say, say_n, to_json, verbatim
from core.runs import RunOutcome, RunRequest, RunResult, RunStatus, Sandbox, student_text
from core.sources import SourceRefused, check_source
from core.verdicts import Paused, Turn, Verdict, judge, run_in_turns

ON_INPUT = ""  # the run on the student's input, among a plan's runs (a case has a name)


@dataclass(frozen=True)
class InputRun:
    """The program run once on the student's own input: what it printed, unjudged.

    `message` says why it stopped, when it did not end by itself with status 0.
    """

    outcome: RunOutcome
    stdout: str
    stderr: str
    exit_code: int | None
    duration_ms: int
    message: Text | None = None
    figures: tuple[Figure, ...] = ()  # what it drew, re-encoded; kept apart from its record

    @property
    def feedback(self) -> str:
        """Return the message in English ("" for a clean exit)."""
        return "" if self.message is None else str(self.message)

    def record(self) -> dict[str, Any]:
        """Return the run as plain JSON data, to keep (the message as core.messages keeps it)."""
        return {
            "outcome": self.outcome.value,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "exit_code": self.exit_code,
            "duration_ms": self.duration_ms,
            "feedback": self.feedback,
            "message": None if self.message is None else to_json(self.message),
        }


def input_from(record: Any) -> InputRun | None:
    """Return the run kept by InputRun.record (None for none, or one that does not read)."""
    if not isinstance(record, dict):
        return None
    try:
        outcome = RunOutcome(str(record.get("outcome")))
    except ValueError:
        return None
    code = record.get("exit_code")
    return InputRun(
        outcome=outcome,
        stdout=str(record.get("stdout") or ""),
        stderr=str(record.get("stderr") or ""),
        exit_code=code if isinstance(code, int) else None,
        duration_ms=int(record.get("duration_ms") or 0),
        message=from_json(record.get("message")),
    )


@dataclass(frozen=True)
class Practice:
    """What a practice run found: the run on the student's input (None without one) and the
    verdict of the visible cases (None when the exercise shows none)."""

    on_input: InputRun | None
    verdict: Verdict | None

    @property
    def duration_ms(self) -> int:
        """Return the time of every run it made."""
        own = self.on_input.duration_ms if self.on_input else 0
        return own + (self.verdict.duration_ms if self.verdict else 0)

    def figures(self) -> list[tuple[str | None, Figure]]:
        """Return what it drew, by case name (None: on the student's input), each picture
        once, at most core.figures.MAX_FIGURES: the student's input's first."""
        own = [(None, f) for f in self.on_input.figures] if self.on_input else []
        shown = self.verdict.figures() if self.verdict else []
        return distinct([*own, *shown])


def visible(exercise: Exercise) -> Exercise:
    """Return the exercise with its visible cases alone: all a practice run may run."""
    return replace(exercise, cases=tuple(case for case in exercise.cases if not case.hidden))


def plan(exercise: Exercise, stdin: str | None) -> tuple[str, ...]:
    """Return the runs of a practice run, in order: ON_INPUT for the one on the student's
    input (when they give one, or when no case is visible: then on an empty input), then
    each visible case by name."""
    names = tuple(case.name for case in visible(exercise).cases)
    return ((ON_INPUT,) if stdin is not None or not names else ()) + names


def practice_in_turns(
    exercise: Exercise,
    source: bytes,
    stdin: str | None,
    sandbox: Sandbox,
    done: Sequence[RunResult] = (),
    turn: Turn | None = None,
) -> Practice | Paused:
    """Run the source on the student's input and the visible cases, from where an earlier
    turn left it (`done`: the results of plan()'s first runs); pause as a grading does."""
    shown = visible(exercise)
    own = plan(exercise, stdin)[:1] == (ON_INPUT,)
    try:
        text = check_source(source)
    except SourceRefused as refused:
        rejected = RunResult(outcome=RunOutcome.REJECTED, reason=str(refused))
        return _judged(shown, own, [rejected] * (own + len(shown.cases)), refused.words)
    files = exercise.files_with(text)
    requests = [case.request(files, exercise.entrypoint, exercise.limits) for case in shown.cases]
    if own:
        given = (stdin or "").encode()
        requests.insert(0, RunRequest(files, exercise.entrypoint, exercise.limits, given))
    results = run_in_turns(sandbox, requests, done, turn)
    return results if isinstance(results, Paused) else _judged(shown, own, results)


def _judged(
    shown: Exercise, own: bool, results: Sequence[RunResult], refusal: Message | None = None
) -> Practice:
    on_input = _input_run(results[0], shown, refusal) if own else None
    cases = results[1:] if own else results
    if not shown.cases:
        return Practice(on_input, None)
    verdict = judge(shown, cases, refusal)
    if shown.has_cases:  # worded without points: a practice run earns none
        verdict = replace(verdict, message=cases_feedback(verdict.cases))
    return Practice(on_input, verdict)


def _input_run(result: RunResult, exercise: Exercise, refusal: Message | None) -> InputRun:
    limits, outcome = exercise.limits, result.outcome
    message: Text | None = None
    if outcome is RunOutcome.REJECTED:
        message = student_text(RunStatus.REJECTED, limits, refusal or result.reason)
    elif outcome is not RunOutcome.EXITED:
        message = student_text(RunStatus(outcome.value), limits)
    elif result.exit_code != 0:
        message = join(student_text(RunStatus.ERROR, limits), crash_message(result))
    notes = [drop_note(dropped) for dropped in result.dropped]
    if notes:  # as a case says which of its figures it could not keep
        message = join(*notes) if message is None else join(message, *notes)
    return InputRun(
        outcome=outcome,
        stdout=result.stdout.decode("utf-8", errors="replace"),
        stderr=result.stderr.decode("utf-8", errors="replace"),
        exit_code=result.exit_code,
        duration_ms=result.duration_ms,
        message=message,
        figures=result.figures,
    )


def cases_feedback(cases: Sequence[CaseVerdict]) -> Text:
    """Word a practice run's cases: how many passed, then the line of each failing one."""
    failing = [case for case in cases if not case.passed]
    head = say_n(
        "{passed} of {num} case passed.",
        "{passed} of {num} cases passed.",
        num=len(cases),
        passed=len(cases) - len(failing),
    )
    return join(head, *(_line(case) for case in failing))


def _line(case: CaseVerdict) -> Text:
    message = case.summary_message()
    return message if message is not None else verbatim(case.summary())


def lost(tries: int) -> Text:
    """Word a practice run the grader could not finish (its workers died on it)."""
    return say(
        "The grader lost your run ({tries} tries). This is our fault, not yours: run it again.",
        tries=tries,
    )
