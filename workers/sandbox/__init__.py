"""Sandbox backends behind one protocol: `run(request) -> RunResult` (see core.runs.Sandbox)."""

from __future__ import annotations

from pathlib import Path

from core.errors import GraderError
from core.runs import Sandbox
from workers.sandbox.runtime import Runtime

BACKENDS = ("bwrap",)


def make_sandbox(backend: str, runtime_root: Path) -> Sandbox:
    """Build the configured backend; raise GraderError for an unknown or unusable one."""
    if backend == "bwrap":
        from workers.sandbox.bwrap import BwrapSandbox

        return BwrapSandbox(Runtime(runtime_root))
    raise GraderError(f"unknown sandbox backend {backend!r} (choose from {', '.join(BACKENDS)})")
