"""How a sandboxed run ended, decided once for every backend from the facts each one knows.

The order is the rule: a run that printed past its limit ended by output, whatever else
happened while it was being killed; then memory (the kernel's OOM kill, or Python's
MemoryError under the address-space limit); then time (the wall-clock deadline, the CPU
time spent, or the CPU rlimit's SIGXCPU); else it exited on its own.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

from core.figures import Dropped, Figure
from core.runs import Limits, RunOutcome, RunResult
from workers.sandbox import reencoding
from workers.sandbox.capture import Captured
from workers.sandbox.cgroups import Usage

# what the sandbox said of a run's figures: (name, PNG bytes) found, (name, reason) dropped
Drawn = tuple[list[tuple[str, bytes]], list[tuple[str, str]]]


@dataclass(frozen=True)
class Ending:
    """What a backend knows of how a run ended."""

    over_output: bool = False  # it printed past the output limit
    oom_killed: bool = False  # the cgroup (or Docker) killed it for memory
    timed_out: bool = False  # it was still running at its wall-clock deadline
    cpu_s: float | None = None  # the CPU time it used, where the backend measures it
    exit_code: int | None = None  # None when no status was reported (it was killed first)
    signal: int | None = None  # the signal that ended it
    stderr: bytes = b""


def classify(ending: Ending, limits: Limits) -> RunOutcome:
    """Return how the run ended, in the one order every backend follows."""
    if ending.over_output:
        return RunOutcome.OUTPUT_LIMIT
    code = ending.exit_code
    if ending.oom_killed or (code is not None and memory_error(code, ending.stderr)):
        return RunOutcome.MEMORY_LIMIT
    cpu_out = ending.cpu_s is not None and ending.cpu_s >= limits.time_s
    if ending.timed_out or cpu_out or ending.signal == signal.SIGXCPU:
        return RunOutcome.TIMEOUT
    return RunOutcome.EXITED


def memory_error(code: int, stderr: bytes) -> bool:
    """Return whether a failed run's last stderr line is Python's or numpy's MemoryError."""
    if code == 0:
        return False
    tail = stderr.rstrip().rsplit(b"\n", 1)[-1]
    return tail.startswith(b"MemoryError") or b"numpy.core._exceptions._ArrayMemoryError" in tail


def ended(
    limits: Limits,
    out: Captured,
    *,
    code: int | None,
    signal: int | None,
    duration_ms: int,
    oom_killed: bool,
    usage: Usage | None = None,
    drawn: Drawn | None = None,
) -> RunResult:
    """Return a run's result: its output cut to the limit, how it ended decided by classify.

    `usage` is the run's cgroup's (CPU time, peak memory), where the backend reads one;
    `drawn` its figures as the sandbox handed them over, checked and re-encoded here (only a
    run that exited on its own keeps any: a killed one's may be half written).
    """
    budget = limits.output_kb * 1024
    stdout, stderr = bytes(out.stdout[:budget]), bytes(out.stderr[:budget])
    ending = Ending(
        over_output=out.over_budget,
        oom_killed=oom_killed,
        timed_out=out.timed_out,
        cpu_s=None if usage is None else usage.cpu_s,
        exit_code=code,
        signal=signal,
        stderr=stderr,
    )
    outcome = classify(ending, limits)
    figures: tuple[Figure, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    if drawn is not None and outcome is RunOutcome.EXITED:
        figures, dropped = reencoding.checked(*drawn)
    return RunResult(
        outcome,
        stdout,
        stderr,
        exit_code=code if outcome is RunOutcome.EXITED else None,
        signal=signal,
        duration_ms=duration_ms,
        cpu_ms=0 if usage is None else int(usage.cpu_s * 1000),
        peak_memory_kb=0 if usage is None else usage.peak_bytes // 1024,
        figures=figures,
        dropped=dropped,
    )
