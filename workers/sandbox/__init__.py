"""Sandbox backends behind one protocol: `run(request) -> RunResult` (see core.runs.Sandbox)."""

from __future__ import annotations

from pathlib import Path

from core.errors import GraderError
from core.runs import Sandbox
from workers.sandbox.runtime import Runtime

BACKENDS = ("bwrap", "docker", "warm")


def make_sandbox(
    backend: str, runtime_root: Path, runner_image: str = "codeblanks-runner:latest"
) -> Sandbox:
    """Build the configured backend; raise GraderError for an unknown or unusable one.

    `runner_image` is the docker backend's (Settings.runner_image)."""
    if backend == "bwrap":
        from workers.sandbox.bwrap import BwrapSandbox

        return BwrapSandbox(Runtime(runtime_root))
    if backend == "docker":
        from workers.sandbox.docker import DockerSandbox

        return DockerSandbox(runner_image)  # built from the runtime tree by build-image.sh
    if backend == "warm":
        from workers.sandbox.warm import WarmSandbox

        return WarmSandbox(Runtime(runtime_root))  # starts its zygotes on first use
    raise GraderError(f"unknown sandbox backend {backend!r} (choose from {', '.join(BACKENDS)})")


def close(sandbox: Sandbox) -> None:
    """Close a backend that keeps processes between runs (warm zygotes, armed launchers).

    When this returns, their processes are gone and their cgroups removed.
    """
    closer = getattr(sandbox, "close", None)
    if closer is not None:
        closer()
