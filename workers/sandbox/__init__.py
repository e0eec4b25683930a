"""Sandbox backends behind one protocol: `run(request) -> RunResult` (see core.runs.Sandbox)."""

from __future__ import annotations

from pathlib import Path

from core.errors import GraderError
from core.runs import Sandbox
from workers.sandbox.runtime import Runtime

BACKENDS = ("bwrap", "docker", "warm")


def make_sandbox(
    backend: str,
    runtime_root: Path,
    runner_image: str = "codeblanks-runner:latest",
    warm_drawing: bool = False,
) -> Sandbox:
    """Build the configured backend; raise GraderError for an unknown or unusable one.

    `runner_image` is the docker backend's (Settings.runner_image); `warm_drawing` whether
    the warm pool's zygotes import matplotlib ahead (Settings.warm_drawing)."""
    if backend == "bwrap":
        from workers.sandbox.bwrap import BwrapSandbox

        return BwrapSandbox(Runtime(runtime_root))
    if backend == "docker":
        from workers.sandbox.docker import DockerSandbox

        return DockerSandbox(runner_image)  # built from the runtime tree by build-image.sh
    if backend == "warm":
        from workers.sandbox.warm import WarmSandbox

        # starts its zygotes on first use
        return WarmSandbox(Runtime(runtime_root), drawing=warm_drawing)
    raise GraderError(f"unknown sandbox backend {backend!r} (choose from {', '.join(BACKENDS)})")


def close(sandbox: Sandbox) -> None:
    """Close a backend that keeps processes between runs (warm zygotes, armed launchers).

    When this returns, their processes are gone and their cgroups removed.
    """
    closer = getattr(sandbox, "close", None)
    if closer is not None:
        closer()
