"""Per-run control groups: total memory, process count and CPU of a run's whole tree.

Supports cgroup v1 (one hierarchy per controller, as on this machine) and v2 (unified); where
the run cgroups live is hierarchy.py's to say. Everything of ours that reads or writes a
cgroup goes through this module (the tests too).

A worker that is not root on its host (the compose worker: root of its own user namespace only,
see userns_entry.py) owns its cgroup subtree. cgroup v1 lets it move a process of another uid
(a warm run's supervisor) into a cgroup only through a cgroup.procs file opened with that uid
as its effective uid (the kernel checks the opener's credentials): see RunCgroup.admit.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import platform
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from core.errors import GraderError
from workers.sandbox import hierarchy

PREFIX = hierarchy.PREFIX  # every run cgroup is a child of this one, in each hierarchy


@dataclass(frozen=True)
class Usage:
    """What a run's cgroup saw: peak memory, whether it hit the OOM killer, CPU time."""

    peak_bytes: int
    oom_killed: bool
    cpu_s: float


class RunCgroup:
    """A run's cgroups: made with limits, joined by the run's first process, removed after.

    Without limits (None), a cgroup only holds processes to be killed together (a zygote's).
    """

    def __init__(
        self,
        name: str,
        memory_bytes: int | None = None,
        pids: int | None = None,
        cpu_cores: float = 1.0,
    ) -> None:
        self.name = name
        home = hierarchy.home()
        self.v2 = home.version == 2
        self.dirs = {controller: parent / name for controller, parent in home.parents.items()}
        self.path = f"{home.relative}/{name}"  # from the top of the tree (docker's cgroup parent)
        self._memory_bytes = memory_bytes
        self._pids = pids
        self._cpu_cores = cpu_cores

    def create(self) -> None:
        """Create the cgroup(s) and set their limits."""
        try:
            for directory in self.dirs.values():
                directory.parent.mkdir(exist_ok=True)
                directory.mkdir()
            self._set_limits()
        except OSError as exc:
            self.remove()
            raise GraderError(f"cannot set up the run's cgroup {self.name}: {exc}") from exc

    def _set_limits(self) -> None:
        if self._memory_bytes is None or self._pids is None:
            return
        quota = int(100_000 * self._cpu_cores)
        if self.v2:
            d = self.dirs["all"]
            _write(d / "memory.max", self._memory_bytes)
            _write(d / "memory.swap.max", 0, optional=True)
            _write(d / "pids.max", self._pids)
            _write(d / "cpu.max", f"{quota} 100000", optional=True)
            return
        memory = self.dirs["memory"]
        _write(memory / "memory.limit_in_bytes", self._memory_bytes)
        _write(memory / "memory.memsw.limit_in_bytes", self._memory_bytes, optional=True)
        _write(memory / "memory.swappiness", 0, optional=True)
        _write(self.dirs["pids"] / "pids.max", self._pids)
        cpu = self.dirs.get("cpu")
        if cpu is not None:
            _write(cpu / "cpu.cfs_period_us", 100_000, optional=True)
            _write(cpu / "cpu.cfs_quota_us", quota, optional=True)

    def relimit(self, memory_bytes: int, pids: int) -> None:
        """Change the memory and process limits of a live cgroup (a warm run's, made early)."""
        growing = self._memory_bytes is None or memory_bytes > self._memory_bytes
        self._memory_bytes, self._pids = memory_bytes, pids
        memory = self.dirs.get("all") or self.dirs["memory"]
        if not self.v2 and growing:  # v1: memory may never exceed memory+swap, so raise that first
            _write(memory / "memory.memsw.limit_in_bytes", memory_bytes, optional=True)
        self._set_limits()

    def admit(self, pid: int, uid: int) -> None:
        """Move process `pid`, whose uid is `uid`, into the run's cgroup(s)."""
        if self.v2 or _host_root():  # v2 checks the writer's access to the files only
            for procs in self.procs_files:
                Path(procs).write_text(str(pid))
            return
        for procs in self.procs_files:
            os.chown(procs, uid, -1)  # ours (the subtree's owner's) to give
        with _thread_euid(uid):
            fds = [os.open(procs, os.O_WRONLY) for procs in self.procs_files]
        try:
            for fd in fds:
                os.write(fd, str(pid).encode())
        finally:
            for fd in fds:
                os.close(fd)

    @property
    def procs_files(self) -> list[str]:
        """Return the cgroup.procs files that the run's first process must join."""
        return [str(d / "cgroup.procs") for d in self.dirs.values()]

    def usage(self) -> Usage:
        """Return what the run used; read before remove()."""
        if self.v2:
            return usage_v2(self.dirs["all"])
        memory = self.dirs["memory"]
        peak = _read_int(memory / "memory.max_usage_in_bytes")
        oom = _read_kv(memory / "memory.oom_control").get("oom_kill", 0) > 0
        if not oom:
            limit = self._memory_bytes
            oom = limit is not None and _read_int(memory / "memory.failcnt") > 0 and peak >= limit
        acct = self.dirs.get("cpuacct") or self.dirs.get("cpu")
        cpu_ns = _read_int(acct / "cpuacct.usage") if acct else 0
        return Usage(peak, oom, cpu_ns / 1e9)

    def signal_all(self) -> None:
        """SIGKILL every process now in the cgroup, once, without waiting (see kill_all)."""
        procs = self.dirs.get("all") or self.dirs["pids"]
        for pid in _read_pids(procs / "cgroup.procs"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def kill_all(self, deadline_s: float = 2.0) -> bool:
        """SIGKILL every process in the run's cgroup until none is left; return success."""
        procs = self.dirs.get("all") or self.dirs["pids"]
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            pids = _read_pids(procs / "cgroup.procs")
            if not pids:
                return True
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)
        return not _read_pids(procs / "cgroup.procs")

    def remove(self) -> bool:
        """Remove the cgroup(s), whose processes must be gone (see kill_all); say if they are."""
        gone = True
        for directory in self.dirs.values():
            for _ in range(50):
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
            else:
                gone = False
        return gone


def usage_v2(directory: Path) -> Usage:
    """Return what a cgroup v2 directory saw: its peak memory, OOM kills and CPU time."""
    peak = _read_int(directory / "memory.peak")
    events = _read_kv(directory / "memory.events")
    cpu_us = _read_kv(directory / "cpu.stat").get("usage_usec", 0)
    return Usage(peak, events.get("oom_kill", 0) > 0, cpu_us / 1e6)


def sweep_slot(prefix: str, deadline_s: float = 10.0) -> int:
    """Kill and remove run cgroups whose names start with `prefix` (a crashed run's leftovers)."""
    removed = 0
    for name in names(prefix):
        group = RunCgroup(name)
        group.kill_all(deadline_s)
        removed += group.remove()
    return removed


def remove_empty(prefix: str, stale: Callable[[str], bool] = lambda name: True) -> int:
    """Remove run cgroups named `prefix`... that hold nothing and are `stale`; say how many."""
    removed = 0
    for parent in _parents():
        for child in parent.glob(f"{prefix}*"):
            if not stale(child.name):
                continue  # perhaps a live run's, made but not yet joined
            with contextlib.suppress(OSError):  # busy: a live run's (or its container's)
                child.rmdir()
                removed += 1
    return removed


def names(prefix: str = "") -> list[str]:
    """Return the names of the run cgroups (of every sandbox on this host) under `prefix`."""
    found: set[str] = set()
    for parent in _parents():
        with contextlib.suppress(OSError):
            found.update(p.name for p in parent.glob(f"{prefix}*") if p.is_dir())
    return sorted(found)


def members(name: str) -> list[int] | None:
    """Return the processes in the run cgroup `name`, or None when there is no such cgroup."""
    home = hierarchy.home()
    parent = home.parents.get("all") or home.parents["pids"]
    try:
        return [int(p) for p in (parent / name / "cgroup.procs").read_text().split()]
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return []


def group_of(pid: int) -> str | None:
    """Return the name of the run cgroup that process `pid` is in, None if in none (or gone)."""
    parent, _, name = (path_of(pid) or "").rpartition("/")
    return name if name and parent == hierarchy.home().relative else None


def path_of(pid: int) -> str | None:
    """Return process `pid`'s cgroup from the top of its tree (v1: in the pids hierarchy), as
    this process's cgroup namespace sees it; None once the process is gone."""
    wanted = "" if hierarchy.home().version == 2 else "pids"  # v2's line is "0::PATH"
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if wanted in controllers.split(","):
            return path
    return None


def _parents() -> list[Path]:
    """Return the directories that hold the run cgroups: one, or one per v1 hierarchy."""
    return list(hierarchy.home().parents.values())


def available() -> str | None:
    """Return why per-run cgroups cannot be used here, or None when they can."""
    if os.geteuid() != 0:
        return "per-run cgroups need root (run the worker as root, or use the docker backend)"
    return hierarchy.home().problem


@functools.cache
def _host_root() -> bool:
    """Return whether this process's uid 0 is the host's (the initial user namespace's)."""
    try:
        return Path("/proc/self/uid_map").read_text().split() == ["0", "0", "4294967295"]
    except OSError:
        return True


_SYS_SETRESUID = {"x86_64": 117, "aarch64": 147, "ppc64le": 164, "s390x": 208}
_libc = ctypes.CDLL(None, use_errno=True)


@contextlib.contextmanager
def _thread_euid(uid: int) -> Iterator[None]:
    """Run the block with this thread's effective (and file system) uid set to `uid`.

    The raw system call changes the calling thread only; glibc's setresuid would change every
    thread of the worker. The real and saved uids stay 0, so switching back restores the
    effective capabilities.
    """
    number = _SYS_SETRESUID.get(platform.machine())
    if number is None:
        raise GraderError(f"no setresuid system call number known for {platform.machine()}")
    if _libc.syscall(number, -1, uid, -1) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setresuid(-1, {uid}, -1): {os.strerror(err)}")
    try:
        yield
    finally:
        if _libc.syscall(number, -1, 0, -1) != 0:  # never go on as the run's uid
            os.abort()


def _write(path: Path, value: object, optional: bool = False) -> None:
    try:
        path.write_text(str(value))
    except OSError:
        if not optional:
            raise


def _read_int(path: Path) -> int:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _read_kv(path: Path) -> dict[str, int]:
    values: dict[str, int] = {}
    try:
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if value.strip().isdigit():
                values[key] = int(value)
    except OSError:
        pass
    return values


def _read_pids(path: Path) -> list[int]:
    try:
        return [int(p) for p in path.read_text().split()]
    except (OSError, ValueError):
        return []
