"""Helpers of the case tests: lessons with cases written into tmp dirs, and a sandbox wrapper
that keeps the requests it was given (the backends are conftest.py's `sandbox` fixture)."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from core.lessons import Exercise, load_lesson
from core.runs import RunRequest, RunResult, Sandbox
from testkit import slowness
from tests.conftest import SEED


def write_lesson(
    root: Path,
    cases: Sequence[dict[str, Any]] | None,
    *,
    slug: str = "case-lesson",
    limits: dict[str, Any] | None = None,
    compare: str = "exact",
    tolerance: dict[str, float] | None = None,
) -> Exercise:
    """Write a copy of the seed lesson whose exercise has these cases; return its exercise."""
    lesson_dir = root / "expert" / slug
    shutil.copytree(SEED, lesson_dir)
    data: dict[str, Any] = {
        "title": "Cases under test",
        "prompt": "Whatever the cases ask.",
        "entrypoint": "model.py",
        "compare": compare,
        "limits": limits or {"time_s": 5, "memory_mb": 256},
    }
    if tolerance is not None:
        data["tolerance"] = tolerance
    if cases is not None:
        data["cases"] = list(cases)
    (lesson_dir / "exercise.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    exercise = load_lesson(lesson_dir).exercise
    assert exercise is not None
    return slowness.stretch_exercise(exercise)


class Recording:
    """A sandbox that hands every request to the real one and keeps a copy of it."""

    def __init__(self, inner: Sandbox) -> None:
        self.inner = inner
        self.requests: list[RunRequest] = []
        self._lock = threading.Lock()

    @property
    def parallel_runs(self) -> int:
        """Return the real sandbox's."""
        return self.inner.parallel_runs

    def run(self, request: RunRequest) -> RunResult:
        """Keep the request, then run it for real."""
        with self._lock:
            self.requests.append(request)
        return self.inner.run(request)
