"""A docker run's accounting when the daemon uses the systemd cgroup driver (every fresh Debian 12
and Ubuntu: systemd, cgroup v2).

There `--cgroup-parent` must name a slice, which systemd makes as the container's scope starts.
The slice outlives the scope: measured in a Debian 12 guest (systemd 252, Docker 20.10), a run
of a 30 MB bytearray left `codeblanks.slice/codeblanks-t1.slice` active with `memory.peak` at
34.8 MB and its `cpu.stat`, until it was stopped. So each run gets a slice of its own, read
after the run and then stopped; the sweep stops those past their deadline.

A dash in a slice's name nests it (`a-b.slice` is under `a.slice`): the name after our prefix
has underscores only.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable
from pathlib import Path

from workers.sandbox import cgroups

PREFIX = "codeblanks-"
_ROOT = Path("/sys/fs/cgroup/codeblanks.slice")  # where systemd puts codeblanks-*.slice
_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
_STOP_TIMEOUT_S = 15.0


class RunSlice:
    """A run's slice: named now, made by systemd with the container, stopped after the run."""

    def __init__(self, name: str) -> None:
        self.name = PREFIX + name.replace("-", "_")
        self.path = f"{self.name}.slice"  # docker's --cgroup-parent
        self.directory = _ROOT / self.path

    def create(self) -> None:
        """Nothing to make: systemd makes the slice as the container's scope starts."""

    def usage(self) -> cgroups.Usage:
        """Return what the run used (zero when the slice was never made)."""
        if not self.directory.is_dir():
            return cgroups.Usage(0, False, 0.0)
        return cgroups.usage_v2(self.directory)

    def remove(self) -> bool:
        """Stop the slice (systemd removes its cgroup); say whether it is gone."""
        return stop(self.path)


def names() -> list[str]:
    """Return the run slices on this host (every codeblanks's), by unit name."""
    with contextlib.suppress(OSError):
        return sorted(p.name for p in _ROOT.glob(f"{PREFIX}*.slice") if p.is_dir())
    return []


def stop(unit: str) -> bool:
    """Stop one slice unit; say whether its cgroup is gone."""
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        subprocess.run(
            ["systemctl", "stop", unit],
            capture_output=True,
            env=_ENV,
            timeout=_STOP_TIMEOUT_S,
            check=False,
        )
    return not (_ROOT / unit).is_dir()


def stop_stale(stale: Callable[[str], bool]) -> int:
    """Stop the run slices that hold nothing and are `stale` (by name); say how many went."""
    stopped = 0
    for unit in names():
        if not stale(unit.removeprefix(PREFIX).removesuffix(".slice")):
            continue
        with contextlib.suppress(OSError):
            if (_ROOT / unit / "cgroup.procs").read_text().strip():
                continue  # a live run's container is in it
        stopped += stop(unit)
    return stopped
