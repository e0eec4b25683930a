"""How much slower this host runs than the one the timed tests' bounds were set on.

The sandbox tests bound how long a run may take ("a 2 s limit ends within 3.5 s"), measured on
the 2-core development hosts. On a loaded host, or in a VM under software emulation (issue 26's
Debian 12 guest: TCG, no KVM), everything takes longer, and those bounds would fail although
nothing is wrong. So they are not skipped there but multiplied by `factor()`: a short
calibration (about 0.1 s here) of the two costs a sandboxed run is made of (Python running,
processes starting), over what it takes on the reference host. It is taken again when the
last one is older than REFRESH_S, since the load of a shared host comes and goes within a
session. Never below 1: a fast host keeps the bounds as they were set.
CODEBLANKS_TEST_SLOWNESS=N forces the factor.
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import subprocess
import time

from core.lessons import Catalog, Exercise
from core.runs import Limits

# the calibration's median on the reference host (2 cores, idle: 25-27 ms, measured with
# `python -c "from testkit import slowness; print(slowness.calibrate())"`)
REFERENCE_S = 0.026
REFRESH_S = 30.0
_ROUNDS = 3
_last: list[tuple[float, float]] = []  # (when, factor): the latest calibration


def calibrate() -> float:
    """Return the median seconds of a few rounds of a Python loop and five process starts."""
    times = []
    for _ in range(_ROUNDS):
        started = time.perf_counter()
        total = 0
        for i in range(200_000):
            total += i % 7
        for _ in range(5):
            subprocess.run(["/bin/true"], check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def factor() -> float:
    """Return how many times slower this host is now than the reference (at least 1)."""
    forced = os.environ.get("CODEBLANKS_TEST_SLOWNESS")
    if forced:
        return max(1.0, float(forced))
    now = time.monotonic()
    if not _last or now - _last[0][0] > REFRESH_S:
        _last[:] = [(now, max(1.0, round(calibrate() / REFERENCE_S, 1)))]
    return _last[0][1]


def scaled(seconds: float) -> float:
    """Return a time bound of the reference host, stretched to this host's slowness."""
    return seconds * factor()


def stretch(limits: Limits) -> Limits:
    """Return a run's limits with the time limit stretched to this host's slowness.

    A run's start-up (bwrap, python3, numpy: 0.2 s on the reference host, 6 s under
    emulation) counts against its time limit, so a run that must finish gets more time where
    everything is slower; one that must time out then does so later, within a bound that is
    stretched alike.
    """
    stretched = round(limits.time_s * factor(), 1)
    return limits if stretched == limits.time_s else dataclasses.replace(limits, time_s=stretched)


def stretch_exercise(exercise: Exercise) -> Exercise:
    """Return the exercise with its runs' time limit stretched (see stretch)."""
    return dataclasses.replace(exercise, limits=stretch(exercise.limits))


def stretch_catalog(catalog: Catalog) -> Catalog:
    """Return the catalog with every exercise's time limit stretched (see stretch)."""
    lessons = {
        lesson_id: dataclasses.replace(lesson, exercise=stretch_exercise(lesson.exercise))
        if lesson.exercise is not None
        else lesson
        for lesson_id, lesson in catalog.lessons.items()
    }
    return dataclasses.replace(catalog, lessons=lessons)
