"""From a student's source to a verdict: check, run each case in a sandbox, compare outside it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from core.cases import CaseVerdict, judge_case
from core.compare import LineDiff
from core.figures import Figure, distinct
from core.lessons import Exercise
from core.messages import Message, Percent, Text, join, say, verbatim
from core.runs import (
    RunOutcome,
    RunRequest,
    RunResult,
    RunStatus,
    Sandbox,
    student_text,
)
from core.sources import SourceRefused, check_source


@dataclass(frozen=True)
class Verdict:
    """The graded outcome of one submission to an exercise: its status, time, feedback
    (`message`, to be translated) and cases; everything else is derived from the cases.

    `stdout`, `stderr` and `exit_code` are the first visible case's (none when every case is
    hidden: a hidden case's output shows what its input was); `score` is the passed cases'
    weight over all the weight (0 with no case: the grader failed); `feedback` and `diff`
    never show what a hidden case holds.
    """

    status: RunStatus
    duration_ms: int
    message: Text
    cases: tuple[CaseVerdict, ...] = ()

    @property
    def feedback(self) -> str:
        """Return the feedback in English."""
        return str(self.message)

    @property
    def score(self) -> float:
        """Return the passed cases' weight over all the weight."""
        return score_of(self.cases)

    @property
    def stdout(self) -> str:
        """Return the first visible case's output."""
        shown = self._shown()
        return shown.stdout if shown else ""

    @property
    def stderr(self) -> str:
        """Return the first visible case's errors."""
        shown = self._shown()
        return shown.stderr if shown else ""

    @property
    def exit_code(self) -> int | None:
        """Return the first visible case's exit status."""
        shown = self._shown()
        return shown.exit_code if shown else None

    @property
    def diff(self) -> LineDiff | None:
        """Return the first failing case's difference, unless that case is hidden."""
        failing = next((case for case in self.cases if not case.passed), None)
        return None if failing is None or failing.hidden else failing.diff

    def figures(self) -> list[tuple[str, Figure]]:
        """Return the figures its visible cases drew, by case name: each picture once, at
        most MAX_FIGURES (core.figures.distinct). A hidden case has none."""
        return distinct(
            (case.name, f) for case in self.cases if not case.hidden for f in case.figures
        )

    def _shown(self) -> CaseVerdict | None:
        return next((case for case in self.cases if not case.hidden), None)

    def as_json(self, lesson_id: str) -> dict[str, object]:
        """Return the verdict as the JSON object of the CLI contract."""
        return {
            "lesson": lesson_id,
            "status": self.status.value,
            "score": self.score,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "exit_code": self.exit_code,
            "duration_ms": self.duration_ms,
            "feedback": self.feedback,
            "cases": [case.as_json() for case in self.cases],
        }


@dataclass(frozen=True)
class Turn:
    """A submission's share of the sandbox: once its runs of this turn have taken `slice_ms`
    and `others_wait()` says another student's work is waiting, it lets that go first.

    While others wait as the turn begins, a case's first try runs under `first_try_s` at most
    (0: whole): one that times out there is only noted as tried, and runs whole in a later
    turn, so that an endless loop holds the sandbox for a moment, not a whole time limit, at
    the head of a rush. `tried`: the cases (by index) an earlier turn cut short.
    """

    slice_ms: int
    others_wait: Callable[[], bool]
    first_try_s: float = 0.0
    tried: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Paused:
    """A grading that let others go first: the results of its cases run so far, in order,
    and the cases after them that were cut short (by index), to run whole next time."""

    done: tuple[RunResult, ...]
    tried: frozenset[int] = frozenset()


@dataclass(frozen=True)
class _Ran:
    results: list[RunResult]  # of the cases from `start` on, in order, each run whole
    tried: frozenset[int]  # cases cut short, not in `results`


def grade_source(exercise: Exercise, source: bytes, sandbox: Sandbox) -> Verdict:
    """Grade a submission's bytes as the exercise's entrypoint, running it in `sandbox`."""
    graded = grade_in_turns(exercise, source, sandbox)
    assert isinstance(graded, Verdict)  # noqa: S101  without a turn, nothing pauses
    return graded


def grade_in_turns(
    exercise: Exercise,
    source: bytes,
    sandbox: Sandbox,
    done: Sequence[RunResult] = (),
    turn: Turn | None = None,
) -> Verdict | Paused:
    """Grade the submission from where an earlier turn left it (`done`: its first cases'
    results); pause between batches of cases once the turn is used up and others wait."""
    try:
        text = check_source(source)
    except SourceRefused as refused:
        rejected = RunResult(outcome=RunOutcome.REJECTED, reason=str(refused))
        return judge(exercise, [rejected] * len(exercise.cases), refusal=refused.words)
    files = exercise.files_with(text)
    requests = [
        case.request(files, exercise.entrypoint, exercise.limits) for case in exercise.cases
    ]
    results = run_in_turns(sandbox, requests, done, turn)
    return results if isinstance(results, Paused) else judge(exercise, results)


def run_in_turns(
    sandbox: Sandbox,
    requests: Sequence[RunRequest],
    done: Sequence[RunResult] = (),
    turn: Turn | None = None,
) -> tuple[RunResult, ...] | Paused:
    """Run the requests from where an earlier turn left them (`done`: the first ones'
    results), in order; Paused once the turn is used up and others wait."""
    results = list(done[: len(requests)])
    ran = _run_from(sandbox, requests, len(results), turn)
    results += ran.results
    if len(results) < len(requests):
        return Paused(tuple(results), ran.tried)
    return tuple(results)


def _run_from(
    sandbox: Sandbox, requests: Sequence[RunRequest], start: int, turn: Turn | None
) -> _Ran:
    """Run requests[start:] in order, as many at a time as the sandbox takes. With a turn, no
    run starts once the turn is used up and others wait, nor once a first try was cut short;
    the results are those of the first cases, each run whole."""
    lock = threading.Lock()
    results: dict[int, RunResult] = {}
    cut: set[int] = set()
    taken, spent_ms, stopped = start, 0, False
    tried = turn.tried if turn is not None else frozenset()
    short = turn is not None and turn.first_try_s > 0 and turn.others_wait()

    def take() -> int | None:
        nonlocal taken, stopped
        with lock:
            if stopped or taken >= len(requests):
                return None
            if turn is not None and spent_ms >= turn.slice_ms and turn.others_wait():
                stopped = True
                return None
            taken += 1
            return taken - 1

    def runs() -> None:
        nonlocal spent_ms, stopped
        while (index := take()) is not None:
            request = requests[index]
            cutting = short and index not in tried
            if cutting and turn is not None and request.limits.time_s > turn.first_try_s:
                request = replace(request, limits=replace(request.limits, time_s=turn.first_try_s))
            else:
                cutting = False
            result = sandbox.run(request)
            with lock:
                spent_ms += result.duration_ms
                if cutting and result.outcome is RunOutcome.TIMEOUT:
                    cut.add(index)
                    stopped = True
                else:
                    results[index] = result

    width = min(len(requests) - start, max(sandbox.parallel_runs, 1))
    if width <= 1:
        runs()
    else:
        with ThreadPoolExecutor(width, thread_name_prefix="case") as pool:
            for ran in [pool.submit(runs) for _ in range(width)]:
                ran.result()
    prefix = []
    for index in range(start, taken):
        if index not in results:
            break  # a case after one cut short runs again with it: results stay in order
        prefix.append(results[index])
    done_until = start + len(prefix)
    return _Ran(prefix, frozenset(i for i in {*tried, *cut} if i >= done_until))


def judge(
    exercise: Exercise, results: Sequence[RunResult], refusal: Message | None = None
) -> Verdict:
    """Turn the cases' results (in case order) into the exercise's verdict.

    `refusal` is why a rejected submission was not run, to be translated.
    """
    limits = exercise.limits
    cases = tuple(
        judge_case(case, result, limits, refusal)
        for case, result in zip(exercise.cases, results, strict=True)
    )
    failing = next((case for case in cases if not case.passed), None)
    if not exercise.has_cases:
        message = _single_feedback(cases[0], results[0], exercise)
    else:
        failed = [_summary(case) for case in cases if not case.passed]
        message = cases_feedback(len(cases) - len(failed), len(cases), score_of(cases), failed)
    return Verdict(
        status=RunStatus.PASSED if failing is None else failing.status,
        duration_ms=sum(case.duration_ms for case in cases),
        message=message,
        cases=cases,
    )


def _single_feedback(case: CaseVerdict, result: RunResult, exercise: Exercise) -> Text:
    """Word the one implicit case's verdict as the exercise's, as before cases existed."""
    limits, status = exercise.limits, case.status
    if status is RunStatus.PASSED:  # its detail, if any, says which figures were not kept
        head = student_text(status, limits)
        return head if case.message is None else join(head, case.message)
    if status in (RunStatus.FAILED, RunStatus.ERROR):
        return join(student_text(status, limits), _detail(case))
    return _detail(case)


def _detail(case: CaseVerdict) -> Text:
    return case.message if case.message is not None else verbatim(case.feedback)


def score_of(cases: Sequence[CaseVerdict]) -> float:
    """Return the passed cases' weight over all the weight (0 with no case)."""
    total = sum(case.weight for case in cases)
    return sum(case.weight for case in cases if case.passed) / total if total else 0.0


def cases_feedback(passed: int, count: int, score: float, failed: Sequence[Text]) -> Text:
    """Word a verdict of cases: how many passed, then the line of each failing case."""
    if passed == count:
        return say("All {count} cases passed.", count=count)
    head = say(
        "{passed} of {count} cases passed ({percent} of the points).",
        passed=passed,
        count=count,
        percent=Percent(score),
    )
    return join(head, *failed)


def _summary(case: CaseVerdict) -> Text:
    message = case.summary_message()
    return message if message is not None else verbatim(case.summary())
