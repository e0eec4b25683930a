"""The `bwrap` backend: bubblewrap namespaces, a per-run uid, cgroup, tmpfs and rlimits.

A run, from outside in:
  sh joins the run's cgroups (memory, pids, cpu), waits for the run's entrypoint, and execs
  setpriv, which drops to the run's own uid (never root: RLIMIT_NPROC does not bind root) and
  sets no_new_privs, then
  bwrap, which reads the rest of its arguments from the same pipe: new user/pid/net/ipc/uts/
  mount/cgroup namespaces, no nested user namespaces, no capabilities, a read-only /usr from
  the runtime tree, the run's tmpfs as /work and /tmp, and the warm pool's seccomp filter
  (zygote/seccomp.py), which bwrap reads from a memfd and installs on its own init (pid 1 in
  the sandbox) and on the program.
The host sets the rlimits (CPU time, address space, file size, open files, processes, no core
files) on that one process with prlimit(2) before it sends the arguments, so bwrap and the
program inherit them. Only the run's files go in; the output comes back through two pipes,
and its figures (PNG files, core.figures) are read from its tmpfs by the host once every
process of the run is dead, never following a link the run planted (zygote/figure_files.py).

The first step is started ahead of the request ("armed"): on cgroup v1, moving a process into
a cgroup waits for an RCU grace period (10-25 ms here), so a sandbox that has run once keeps
one launcher joined and waiting. It holds nothing of any run: no code, no files, no limits
but the defaults; the program still starts as a fresh interpreter in fresh namespaces.
"""

from __future__ import annotations

import contextlib
import math
import os
import resource
import secrets
import shutil
import signal
import subprocess
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path

from core import figures
from core.errors import GraderError
from core.runs import Limits, RunRequest, RunResult
from workers.sandbox import cgroups, memfd, scratch
from workers.sandbox.capture import capture
from workers.sandbox.outcomes import Drawn, ended
from workers.sandbox.runtime import DRAWING_ENV, PYTHON, Runtime
from workers.sandbox.zygote import figure_files, seccomp

_STATE = Path("/run/codeblanks")
# $1: the control fd; then the cgroup.procs files up to "--"; then the command to exec, to
# which the entrypoint read from the control fd is appended
_LAUNCH = (
    'fd=$1; shift; while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; '
    'IFS= read -r entry < "/dev/fd/$fd" || exit 125; exec "$@" "/work/$entry"'
)
_SANDBOX_UID = 65534  # "nobody" inside the user namespace
_WALL_GRACE_S = 0.5  # start-up (interpreter, numpy) is charged to the run's wall time
_ADDRESS_SPACE_MB = 2048  # per process; the cgroup bounds the run's total resident memory
_DEFAULTS = Limits()


class _LauncherGone(GraderError):
    """The sandbox ended before the run's program began (a launcher killed, a failed set-up)."""

    def __init__(self, why: str) -> None:
        super().__init__(f"the bwrap sandbox did not start: {why}")


@dataclass
class _Launcher:
    """A run's first process, started ahead: in its cgroups, waiting on the control pipe."""

    uid: int
    lock: int  # the uid slot's lock: closing it gives the uid back
    group: cgroups.RunCgroup
    proc: subprocess.Popen[bytes]
    control: int  # write end: the entrypoint's line, then bwrap's arguments
    info: int  # read end of bwrap's --info-fd
    info_fd_number: int  # the write end's number in the launcher
    filter_fd_number: int  # the seccomp filter's memfd in the launcher; bwrap reads and closes it

    @property
    def name(self) -> str:
        return self.group.name

    def discard(self) -> None:
        """Kill what is left of the launcher and give back its cgroup, pipes and uid."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.group.kill_all()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        for fd in (self.control, self.info):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.group.remove()
        os.close(self.lock)


class BwrapSandbox:
    """Runs each request in a fresh bubblewrap sandbox on this machine."""

    def __init__(self, runtime: Runtime, state_dir: Path = _STATE) -> None:
        self.runtime = runtime
        self.runs_dir = state_dir / "runs"
        self.locks_dir = state_dir / "slots"
        self._bwrap = shutil.which("bwrap")
        self._setpriv = shutil.which("setpriv")
        self._swept = False
        # launchers armed for the next runs, at most one per core; armed from the second run on
        # (a one-shot caller such as `codeblanks grade` never pays for a spare it won't use)
        self._max_spares = os.cpu_count() or 1
        self.parallel_runs = os.cpu_count() or 1  # each run is its own process tree
        self._spares: list[_Launcher] = []
        self._lock = threading.Lock()
        self._runs = 0
        self._finalizer = weakref.finalize(self, _discard_all, self._spares)
        self._filter = seccomp.assemble()

    def check(self) -> None:
        """Raise GraderError saying what is missing when this backend cannot run here."""
        self.runtime.check()
        missing = [n for n, p in (("bwrap", self._bwrap), ("setpriv", self._setpriv)) if p is None]
        if missing:
            raise GraderError(
                f"the bwrap sandbox needs {', '.join(missing)} (apt-get install "
                "bubblewrap util-linux)"
            )
        problem = cgroups.available()
        if problem:
            raise GraderError(f"the bwrap sandbox cannot run here: {problem}")

    def sweep(self) -> int:
        """Remove what killed workers left (tmpfs, cgroups) in slots nobody holds; say how many."""
        removed = 0
        for uid in scratch.free_slots(self.locks_dir):
            removed += scratch.sweep_slot(self.runs_dir, uid) + cgroups.sweep_slot(f"{uid}-")
        return removed

    def armed(self) -> list[str]:
        """Return the cgroup names of the launchers armed now (each holds one waiting sh)."""
        with self._lock:
            return [spare.name for spare in self._spares]

    def close(self) -> None:
        """Discard the armed launchers (also done when the sandbox is collected, or at exit)."""
        self._finalizer()

    def run(self, request: RunRequest) -> RunResult:
        """Run the request in a fresh sandbox and return its output and how it ended."""
        self.check()
        if "\n" in request.entrypoint or "\0" in request.entrypoint:
            raise GraderError(f"refusing an entrypoint with a line break: {request.entrypoint!r}")
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.runs_dir, 0o711)  # the run's uid must reach its own dir, and list none
        with self._lock:
            if not self._swept:
                self._swept = True
                self.sweep()
            self._runs += 1
            arm_after = self._runs > 1
            launcher = self._spares.pop() if self._spares else None
        if launcher is not None and launcher.proc.poll() is not None:
            launcher.discard()  # it died waiting (killed from outside): never trust it
            launcher = None
        try:
            return self._run_in(launcher or self._arm(), request)
        except _LauncherGone:
            return self._run_in(self._arm(), request)  # it died as the run began: once more
        finally:
            if arm_after:
                self._arm_spare()

    def _run_in(self, launcher: _Launcher, request: RunRequest) -> RunResult:
        try:
            limits = request.limits
            launcher.group.relimit(limits.memory_mb * 2**20, limits.processes)
            space = scratch.Scratch(
                self.runs_dir / launcher.name, launcher.uid, limits.disk_mb, limits.files
            )
            try:
                space.write(request.files)
                return self._execute(request, launcher, space)
            finally:
                launcher.group.kill_all()
                space.remove()
        finally:
            launcher.discard()

    def _arm_spare(self) -> None:
        with self._lock:
            if len(self._spares) >= self._max_spares:
                return
        try:
            launcher = self._arm()
        except GraderError:
            return  # the next run arms its own, and says what is wrong
        with self._lock:
            if self._finalizer.alive and len(self._spares) < self._max_spares:
                self._spares.append(launcher)
                return
        launcher.discard()

    def _arm(self) -> _Launcher:
        """Start a launcher: a fresh uid slot and cgroup, joined, waiting for its run."""
        assert self._bwrap and self._setpriv
        uid, lock = scratch.take_slot(self.locks_dir)
        try:
            scratch.sweep_slot(self.runs_dir, uid)
            cgroups.sweep_slot(f"{uid}-")
            group = cgroups.RunCgroup(
                f"{uid}-{secrets.token_hex(4)}", _DEFAULTS.memory_mb * 2**20, _DEFAULTS.processes
            )
            group.create()
        except BaseException:
            os.close(lock)
            raise
        control_read, control = os.pipe()
        info, info_write = os.pipe()
        filter_fd = -1
        # fmt: off
        argv = [
            "/bin/sh", "-c", _LAUNCH, "sh", str(control_read), *group.procs_files, "--",
            self._setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--no-new-privs",
            self._bwrap, "--args", str(control_read), PYTHON, "-E", "-s", "-B",
        ]
        # fmt: on
        try:
            filter_fd = memfd.holding(self._filter, "codeblanks-seccomp")
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                close_fds=True,
                pass_fds=(control_read, info_write, filter_fd),
                start_new_session=True,
                cwd="/",  # the shell exports PWD, which the run can read in /proc/1/environ
            )
        except OSError as exc:
            for fd in (control, info, lock):
                os.close(fd)
            group.remove()
            raise GraderError(f"cannot start bwrap: {exc}") from exc
        finally:
            for fd in (control_read, info_write, filter_fd):
                if fd >= 0:
                    os.close(fd)
        return _Launcher(uid, lock, group, proc, control, info, info_write, filter_fd)

    def _execute(
        self, request: RunRequest, launcher: _Launcher, space: scratch.Scratch
    ) -> RunResult:
        limits = request.limits
        proc, group = launcher.proc, launcher.group
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        cpu = math.ceil(limits.time_s)
        try:
            for kind, value in (
                (resource.RLIMIT_CPU, (cpu, cpu + 1)),
                (resource.RLIMIT_AS, (_ADDRESS_SPACE_MB * 2**20,) * 2),
                (resource.RLIMIT_FSIZE, (limits.file_mb * 2**20,) * 2),
                (resource.RLIMIT_NOFILE, (64, 64)),
                (resource.RLIMIT_NPROC, (limits.processes,) * 2),
                (resource.RLIMIT_CORE, (0, 0)),
            ):
                resource.prlimit(proc.pid, kind, value)
        except ProcessLookupError as exc:
            raise _LauncherGone(_reason(proc)) from exc
        message = f"{request.entrypoint}\n".encode() + b"\0".join(
            arg.encode() for arg in self._args(space, launcher)
        )
        started = time.monotonic()
        deadline = started + limits.time_s + _WALL_GRACE_S
        try:
            _write_all(launcher.control, message)
        except BrokenPipeError as exc:
            raise _LauncherGone(_reason(proc)) from exc
        finally:
            os.close(launcher.control)
            launcher.control = -1
        try:
            if request.stdin:
                proc.stdin.write(request.stdin)
            proc.stdin.close()
        except BrokenPipeError:
            pass
        out = capture(proc.stdout, proc.stderr, limits.output_kb * 1024, deadline)
        if out.timed_out or out.over_budget:
            _kill(proc, group)
        try:
            code = proc.wait(timeout=max(0.0, deadline - time.monotonic()) + 0.2)
        except subprocess.TimeoutExpired:
            out.timed_out = True
            _kill(proc, group)
            code = proc.wait()
        duration_ms = int((time.monotonic() - started) * 1000)
        with os.fdopen(os.dup(launcher.info), "rb") as info:
            started_ok = bool(info.read())
        usage = group.usage()
        if not started_ok and not out.timed_out:  # so no code of the run's ever ran
            stderr = bytes(out.stderr[: limits.output_kb * 1024])
            raise _LauncherGone(stderr.decode(errors="replace").strip()[:500] or f"status {code}")
        drawn: Drawn | None = None
        if request.figures:
            group.kill_all()  # nothing of the run may write while its files are read
            skip = figures.work_files(request.files)
            drawn = figure_files.collect(str(space.path), skip, figures.BOUNDS)
        return ended(
            limits,
            out,
            code=code,
            signal=_signal_of(code),
            duration_ms=duration_ms,
            oom_killed=usage.oom_killed,
            usage=usage,
            drawn=drawn,
        )

    def _args(self, space: scratch.Scratch, launcher: _Launcher) -> list[str]:
        """Return bwrap's options, which it reads from the control pipe (the command follows)."""
        root = self.runtime.root
        # fmt: off
        return [
            "--unshare-all", "--unshare-user", "--disable-userns",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--info-fd", str(launcher.info_fd_number),
            "--seccomp", str(launcher.filter_fd_number),
            "--uid", str(_SANDBOX_UID), "--gid", str(_SANDBOX_UID), "--hostname", "sandbox",
            "--ro-bind", str(root / "usr"), "/usr",
            "--ro-bind", str(root / "etc/ld.so.cache"), "/etc/ld.so.cache",
            "--ro-bind", str(root / "etc/alternatives"), "/etc/alternatives",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
            "--proc", "/proc", "--dev", "/dev",
            "--bind", str(space.path / "work"), "/work",
            "--bind", str(space.path / "tmp"), "/tmp",
            "--bind", str(space.path / "shm"), "/dev/shm",
            "--remount-ro", "/dev",  # else /dev is a tmpfs outside the run's disk and inode limits
            "--chdir", "/work", "--clearenv",
            "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/work",
            "--setenv", "TMPDIR", "/tmp", "--setenv", "LANG", "C.UTF-8",
            "--setenv", "OPENBLAS_NUM_THREADS", "1", "--setenv", "OMP_NUM_THREADS", "1",
            *(arg for name, value in DRAWING_ENV.items() for arg in ("--setenv", name, value)),
            "--remount-ro", "/",
        ]
        # fmt: on


def _discard_all(spares: list[_Launcher]) -> None:
    while spares:
        spares.pop().discard()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _reason(proc: subprocess.Popen[bytes]) -> str:
    """Say why a launcher ended before its run: its stderr, or its exit status."""
    try:
        code = proc.wait(timeout=1)
    except subprocess.TimeoutExpired:
        return "the launcher does not answer"
    assert proc.stderr is not None
    os.set_blocking(proc.stderr.fileno(), False)
    err = (proc.stderr.read() or b"").decode(errors="replace").strip()[:500]
    return err or f"the launcher ended with status {code} (could it join its cgroups?)"


def _kill(proc: subprocess.Popen[bytes], group: cgroups.RunCgroup) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    group.kill_all()


def _signal_of(code: int | None) -> int | None:
    """Return the signal that ended the program, from bwrap's 128 + N convention."""
    if code is not None and 128 < code <= 128 + signal.SIGRTMAX:
        return code - 128
    return None
