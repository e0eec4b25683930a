"""From a student's source to a verdict: check, run in a sandbox, compare outside it."""

from __future__ import annotations

import signal as signals
from dataclasses import dataclass

from core.compare import LineDiff, compare
from core.lessons import Exercise
from core.runs import (
    RunOutcome,
    RunRequest,
    RunResult,
    RunStatus,
    Sandbox,
    student_message,
)
from core.sources import SourceRefused, check_source


@dataclass(frozen=True)
class Verdict:
    """The graded outcome of one submission to an exercise."""

    status: RunStatus
    score: float
    stdout: str
    stderr: str
    exit_code: int | None
    duration_ms: int
    feedback: str
    diff: LineDiff | None = None

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
        }


def grade_source(exercise: Exercise, source: bytes, sandbox: Sandbox) -> Verdict:
    """Grade a submission's bytes as the exercise's entrypoint, running it in `sandbox`."""
    try:
        text = check_source(source)
    except SourceRefused as refused:
        return judge(exercise, RunResult(outcome=RunOutcome.REJECTED, reason=refused.message))
    request = RunRequest(
        files=exercise.files_with(text),
        entrypoint=exercise.entrypoint,
        limits=exercise.limits,
    )
    return judge(exercise, sandbox.run(request))


def judge(exercise: Exercise, result: RunResult) -> Verdict:
    """Turn a run's result into a verdict, comparing its stdout with the expected output."""
    stdout = _text(result.stdout)
    stderr = _text(result.stderr)
    limits = exercise.limits

    def verdict(status: RunStatus, feedback: str, diff: LineDiff | None = None) -> Verdict:
        return Verdict(
            status=status,
            score=1.0 if status is RunStatus.PASSED else 0.0,
            stdout=stdout,
            stderr=stderr,
            exit_code=result.exit_code,
            duration_ms=result.duration_ms,
            feedback=feedback,
            diff=diff,
        )

    if result.outcome is not RunOutcome.EXITED:
        status = RunStatus(result.outcome.value)
        return verdict(status, student_message(status, limits, result.reason))
    if result.exit_code != 0:
        detail = _crash_detail(result, stderr)
        return verdict(RunStatus.ERROR, f"{student_message(RunStatus.ERROR, limits)} {detail}")
    comparison = compare(exercise.expected_output, stdout, exercise.compare, exercise.tolerance)
    if comparison.matches:
        return verdict(RunStatus.PASSED, student_message(RunStatus.PASSED, limits))
    return verdict(
        RunStatus.FAILED,
        f"{student_message(RunStatus.FAILED, limits)} {comparison.explain()}",
        comparison.diff,
    )


def _crash_detail(result: RunResult, stderr: str) -> str:
    if result.signal is not None:
        try:
            name = signals.Signals(result.signal).name
        except ValueError:
            name = f"signal {result.signal}"
        return f"It was killed by {name}."
    last = next((line for line in reversed(stderr.splitlines()) if line.strip()), "")
    if last:
        return f"Last error line: {last.strip()[:300]}"
    return f"It exited with status {result.exit_code}."


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")
