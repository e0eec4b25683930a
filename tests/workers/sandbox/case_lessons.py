"""Helpers of the case tests: every sandbox backend, lessons with cases written into tmp dirs,
and a sandbox wrapper that keeps the requests it was given."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.errors import GraderError
from core.lessons import Exercise, load_lesson
from core.runs import RunRequest, RunResult, Sandbox
from service.settings import Settings
from tests.conftest import SEED
from workers.sandbox import make_sandbox

BACKENDS = ["bwrap", "docker", "warm"]
SETUP = {"docker": "docker_daemon"}
MARKS = {"bwrap": [pytest.mark.bwrap], "docker": [pytest.mark.docker], "warm": [pytest.mark.bwrap]}


# the params of each test module's backend fixture (a fixture is not imported across modules)
BACKEND_PARAMS = [pytest.param(b, marks=MARKS.get(b, [])) for b in BACKENDS]


def open_backend(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """Build the backend under test as the worker builds it; fail if it cannot run here."""
    name = request.param
    if name in SETUP:
        request.getfixturevalue(SETUP[name])
    try:
        box = make_sandbox(name, Settings.from_env().runtime_dir)
        getattr(box, "check", lambda: None)()
    except GraderError as exc:
        pytest.fail(f"the {name} sandbox backend is not available: {exc}")
    yield box
    getattr(box, "close", lambda: None)()


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
    return exercise


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
