import signal

import pytest

from core.runs import Limits, RunOutcome
from workers.sandbox.outcomes import Ending, classify, memory_error

LIMITS = Limits(time_s=2.0)
MEMORY_ERROR = b"Traceback (most recent call last):\n  ...\nMemoryError\n"
NUMPY_MEMORY = b"numpy.core._exceptions._ArrayMemoryError: Unable to allocate 8.00 GiB\n"
XCPU = 128 + signal.SIGXCPU


@pytest.mark.parametrize(
    ("ending", "outcome"),
    [
        (Ending(exit_code=0), RunOutcome.EXITED),
        (Ending(exit_code=1, stderr=b"ValueError: no\n"), RunOutcome.EXITED),
        (Ending(exit_code=137, signal=9), RunOutcome.EXITED),  # killed by itself: an error
        (Ending(exit_code=None), RunOutcome.EXITED),  # no report: the backend decides
        (Ending(over_output=True, exit_code=0), RunOutcome.OUTPUT_LIMIT),
        (Ending(oom_killed=True, exit_code=137, signal=9), RunOutcome.MEMORY_LIMIT),
        (Ending(exit_code=1, stderr=MEMORY_ERROR), RunOutcome.MEMORY_LIMIT),
        (Ending(exit_code=1, stderr=NUMPY_MEMORY), RunOutcome.MEMORY_LIMIT),
        (Ending(exit_code=0, stderr=MEMORY_ERROR), RunOutcome.EXITED),  # caught, and went on
        (Ending(exit_code=None, stderr=MEMORY_ERROR), RunOutcome.EXITED),
        (Ending(timed_out=True, exit_code=137, signal=9), RunOutcome.TIMEOUT),
        (Ending(cpu_s=2.0, exit_code=0), RunOutcome.TIMEOUT),
        (Ending(cpu_s=1.99, exit_code=0), RunOutcome.EXITED),
        (Ending(exit_code=XCPU, signal=signal.SIGXCPU), RunOutcome.TIMEOUT),
        # the order: output, then memory, then time
        (Ending(over_output=True, oom_killed=True, timed_out=True), RunOutcome.OUTPUT_LIMIT),
        (Ending(over_output=True, exit_code=1, stderr=MEMORY_ERROR), RunOutcome.OUTPUT_LIMIT),
        (Ending(oom_killed=True, timed_out=True, cpu_s=9.0), RunOutcome.MEMORY_LIMIT),
        (Ending(timed_out=True, exit_code=1, stderr=MEMORY_ERROR), RunOutcome.MEMORY_LIMIT),
        (Ending(timed_out=True, cpu_s=9.0, exit_code=XCPU, signal=24), RunOutcome.TIMEOUT),
    ],
    ids=[
        "exit-0",
        "exit-1",
        "killed-by-signal",
        "no-status",
        "output",
        "oom-kill",
        "memory-error",
        "numpy-memory-error",
        "memory-error-caught",
        "memory-error-without-status",
        "wall-clock",
        "cpu-time-at-limit",
        "cpu-time-under-limit",
        "sigxcpu",
        "output-before-all",
        "output-before-memory-error",
        "memory-before-time",
        "memory-error-before-time",
        "time-all-signs",
    ],
)
def test_classify_decides_in_one_order(ending, outcome):
    assert classify(ending, LIMITS) is outcome


@pytest.mark.parametrize(
    ("code", "stderr", "expected"),
    [
        (1, MEMORY_ERROR, True),
        (1, NUMPY_MEMORY, True),
        (0, MEMORY_ERROR, False),
        (1, b"MemoryError\nprint('after')\nValueError: x\n", False),  # not the last line
        (1, b"", False),
    ],
    ids=["python", "numpy", "exit-0", "not-last", "empty"],
)
def test_memory_error_reads_the_last_stderr_line(code, stderr, expected):
    assert memory_error(code, stderr) is expected
