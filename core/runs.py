"""What crosses the sandbox boundary: the run request, the run result, and their limits."""

from __future__ import annotations

import base64
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.figures import Dropped, DropReason, Figure
from core.messages import Arg, Message, say


class RunStatus(enum.StrEnum):
    """How a run ended, from the grader's point of view."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    TIMEOUT = "timeout"
    MEMORY_LIMIT = "memory_limit"
    OUTPUT_LIMIT = "output_limit"
    REJECTED = "rejected"


MAX_SOURCE_BYTES = 64 * 1024


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run."""

    time_s: float = 5.0
    memory_mb: int = 256
    output_kb: int = 64
    processes: int = 64
    file_mb: int = 16
    disk_mb: int = 32
    files: int = 2048

    def describe(self) -> dict[str, object]:
        """Return the limits as a plain dict, for messages and JSON."""
        return {
            "time_s": self.time_s,
            "memory_mb": self.memory_mb,
            "output_kb": self.output_kb,
            "processes": self.processes,
            "file_mb": self.file_mb,
            "disk_mb": self.disk_mb,
            "files": self.files,
        }


@dataclass(frozen=True)
class RunRequest:
    """Everything a sandbox needs: the files of the work dir, what to run, and the limits.

    `files` maps relative paths to their bytes; `entrypoint` is one of them. Nothing else of
    the lesson (reference solution, expected output) belongs here. `figures`: whether the
    run's figures come back (core.figures); a hidden case's never leave the sandbox.
    """

    files: Mapping[str, bytes]
    entrypoint: str
    limits: Limits = field(default_factory=Limits)
    stdin: bytes = b""
    figures: bool = True


class RunOutcome(enum.StrEnum):
    """How the process ended, before any comparison of its output."""

    EXITED = "exited"  # exited on its own (exit_code says how)
    TIMEOUT = "timeout"
    MEMORY_LIMIT = "memory_limit"
    OUTPUT_LIMIT = "output_limit"
    REJECTED = "rejected"


@dataclass(frozen=True)
class RunResult:
    """What came out of a run: raw bytes, an exit code, and how it ended.

    `figures` are the PNGs it drew, as the host re-encoded them, and `dropped` those it could
    not keep (core.figures); only a run that exited on its own has any.
    """

    outcome: RunOutcome
    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: int | None = None
    signal: int | None = None
    duration_ms: int = 0
    reason: str = ""
    cpu_ms: int = 0
    peak_memory_kb: int = 0
    figures: tuple[Figure, ...] = ()
    dropped: tuple[Dropped, ...] = ()


def result_record(result: RunResult) -> dict[str, Any]:
    """Return the run's result as plain JSON data (its output in base64), to keep it."""
    return {
        "outcome": result.outcome.value,
        "stdout": base64.b64encode(result.stdout).decode(),
        "stderr": base64.b64encode(result.stderr).decode(),
        "exit_code": result.exit_code,
        "signal": result.signal,
        "duration_ms": result.duration_ms,
        "reason": result.reason,
        "cpu_ms": result.cpu_ms,
        "peak_memory_kb": result.peak_memory_kb,
        "figures": [
            {
                "png": base64.b64encode(figure.png).decode(),
                "width": figure.width,
                "height": figure.height,
                "alt": figure.alt,
            }
            for figure in result.figures
        ],
        "dropped": [[dropped.name, dropped.reason.value] for dropped in result.dropped],
    }


def result_from(record: dict[str, Any]) -> RunResult:
    """Return the result kept by result_record."""
    return RunResult(
        outcome=RunOutcome(record["outcome"]),
        stdout=base64.b64decode(record["stdout"]),
        stderr=base64.b64decode(record["stderr"]),
        exit_code=record["exit_code"],
        signal=record["signal"],
        duration_ms=int(record["duration_ms"]),
        reason=str(record["reason"]),
        cpu_ms=int(record["cpu_ms"]),
        peak_memory_kb=int(record["peak_memory_kb"]),
        figures=tuple(
            Figure(base64.b64decode(f["png"]), int(f["width"]), int(f["height"]), str(f["alt"]))
            for f in record.get("figures", [])
        ),
        dropped=tuple(Dropped(str(n), DropReason(r)) for n, r in record.get("dropped", [])),
    )


class Sandbox(Protocol):
    """Runs untrusted code in isolation. Every backend implements this one method.

    `parallel_runs` says how many runs it takes at once with profit (the cases of one
    submission run that many at a time); `run` is safe to call from that many threads.
    """

    @property
    def parallel_runs(self) -> int:
        """Return how many runs this sandbox takes at once with profit."""
        ...

    def run(self, request: RunRequest) -> RunResult:
        """Run the request's entrypoint with its files and limits, and return what happened."""
        ...


def student_message(status: RunStatus, limits: Limits, reason: Arg = "") -> str:
    """Return the student-facing sentence for a run status."""
    return str(student_text(status, limits, reason))


def student_text(status: RunStatus, limits: Limits, reason: Arg = "") -> Message:
    """Return the student-facing sentence for a run status, to be translated."""
    if status is RunStatus.PASSED:
        return say("Your program's output matches the expected output.")
    if status is RunStatus.FAILED:
        return say("Your program ran, but its output differs from the expected output.")
    if status is RunStatus.ERROR:
        return say("Your program stopped with an error. Read the error output below.")
    if status is RunStatus.TIMEOUT:
        return say(
            "Your program ran out of time ({time_s} s). Look for an endless loop.",
            time_s=float(limits.time_s),
        )
    if status is RunStatus.MEMORY_LIMIT:
        return say(
            "Your program used more memory than allowed ({memory_mb} MB).",
            memory_mb=limits.memory_mb,
        )
    if status is RunStatus.OUTPUT_LIMIT:
        return say(
            "Your program printed more than allowed ({output_kb} KB).", output_kb=limits.output_kb
        )
    return say("Your submission was not run. {reason}", reason=reason)
