"""The `bwrap` backend: bubblewrap namespaces, a per-run uid, cgroup, tmpfs and rlimits.

A run, from outside in:
  sh joins the run's cgroups (memory, pids, cpu) and execs
  setpriv, which drops to the run's own uid (never root: RLIMIT_NPROC does not bind root) and
  sets no_new_privs, then
  prlimit (CPU time, address space, file size, open files, processes, no core files), then
  bwrap: new user/pid/net/ipc/uts/mount/cgroup namespaces, no nested user namespaces, no
  capabilities, a read-only /usr from the runtime tree, and the run's tmpfs as /work and /tmp.
Only the run's files go in; its output comes back as bytes through two pipes.
"""

from __future__ import annotations

import math
import os
import secrets
import shutil
import signal
import subprocess
import time
from pathlib import Path

from core.errors import GraderError
from core.runs import RunOutcome, RunRequest, RunResult
from workers.sandbox import cgroups, scratch
from workers.sandbox.capture import capture
from workers.sandbox.outcomes import memory_error
from workers.sandbox.runtime import PYTHON, Runtime

_STATE = Path("/run/codeblanks")
_JOIN_CGROUPS = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
_SANDBOX_UID = 65534  # "nobody" inside the user namespace
_WALL_GRACE_S = 0.5  # start-up (interpreter, numpy) is charged to the run's wall time
_ADDRESS_SPACE_MB = 2048  # per process; the cgroup bounds the run's total resident memory


class BwrapSandbox:
    """Runs each request in a fresh bubblewrap sandbox on this machine."""

    def __init__(self, runtime: Runtime, state_dir: Path = _STATE) -> None:
        self.runtime = runtime
        self.runs_dir = state_dir / "runs"
        self.locks_dir = state_dir / "slots"
        self._bwrap = shutil.which("bwrap")
        self._setpriv = shutil.which("setpriv")
        self._prlimit = shutil.which("prlimit")
        self._swept = False

    def check(self) -> None:
        """Raise GraderError saying what is missing when this backend cannot run here."""
        self.runtime.check()
        missing = [
            n
            for n, p in (
                ("bwrap", self._bwrap),
                ("setpriv", self._setpriv),
                ("prlimit", self._prlimit),
            )
            if p is None
        ]
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

    def run(self, request: RunRequest) -> RunResult:
        """Run the request in a fresh sandbox and return its output and how it ended."""
        self.check()
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.runs_dir, 0o711)  # the run's uid must reach its own dir, and list none
        if not self._swept:
            self._swept = True
            self.sweep()
        with scratch.uid_slot(self.locks_dir) as uid:
            scratch.sweep_slot(self.runs_dir, uid)
            cgroups.sweep_slot(f"{uid}-")
            name = f"{uid}-{secrets.token_hex(4)}"
            limits = request.limits
            group = cgroups.RunCgroup(name, limits.memory_mb * 2**20, limits.processes)
            group.create()
            try:
                space = scratch.Scratch(self.runs_dir / name, uid, limits.disk_mb, limits.files)
                try:
                    space.write(request.files)
                    return self._execute(request, uid, space, group)
                finally:
                    group.kill_all()
                    space.remove()
            finally:
                group.kill_all()
                group.remove()

    def _execute(
        self, request: RunRequest, uid: int, space: scratch.Scratch, group: cgroups.RunCgroup
    ) -> RunResult:
        limits = request.limits
        info_read, info_write = os.pipe()
        argv = self._argv(request, uid, space, group, info_write)
        started = time.monotonic()
        deadline = started + limits.time_s + _WALL_GRACE_S
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if request.stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                close_fds=True,
                pass_fds=(info_write,),
                start_new_session=True,
                cwd="/",  # the shell exports PWD, which the run can read in /proc/1/environ
            )
        except OSError as exc:
            os.close(info_read)
            raise GraderError(f"cannot start bwrap: {exc}") from exc
        finally:
            os.close(info_write)
        assert proc.stdout is not None and proc.stderr is not None
        if request.stdin and proc.stdin is not None:
            try:
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
        proc.stdout.close()
        proc.stderr.close()
        with os.fdopen(info_read, "rb") as info:
            started_ok = bool(info.read())
        usage = group.usage()
        stdout = bytes(out.stdout[: limits.output_kb * 1024])
        stderr = bytes(out.stderr[: limits.output_kb * 1024])
        if not started_ok and not out.timed_out:
            why = stderr.decode(errors="replace").strip()[:500] or f"exit status {code}"
            raise GraderError(f"the bwrap sandbox did not start: {why}")

        def result(outcome: RunOutcome, reason: str = "") -> RunResult:
            exit_code = None if outcome is not RunOutcome.EXITED else code
            sig = _signal_of(code)
            return RunResult(
                outcome,
                stdout,
                stderr,
                exit_code,
                sig,
                duration_ms,
                reason,
                cpu_ms=int(usage.cpu_s * 1000),
                peak_memory_kb=usage.peak_bytes // 1024,
            )

        if out.over_budget:
            return result(RunOutcome.OUTPUT_LIMIT)
        signalled = _signal_of(code)
        if usage.oom_killed or memory_error(code, stderr):
            return result(RunOutcome.MEMORY_LIMIT)
        cpu_out = usage.cpu_s >= limits.time_s or signalled == signal.SIGXCPU
        if out.timed_out or cpu_out:
            return result(RunOutcome.TIMEOUT)
        return result(RunOutcome.EXITED)

    def _argv(
        self,
        request: RunRequest,
        uid: int,
        space: scratch.Scratch,
        group: cgroups.RunCgroup,
        info_fd: int,
    ) -> list[str]:
        limits = request.limits
        root = self.runtime.root
        cpu = math.ceil(limits.time_s)
        assert self._bwrap and self._setpriv and self._prlimit
        # fmt: off
        return [
            "/bin/sh", "-c", _JOIN_CGROUPS, "sh",
            *group.procs_files, "--",
            self._setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--no-new-privs",
            self._prlimit, f"--cpu={cpu}:{cpu + 1}", f"--as={_ADDRESS_SPACE_MB * 2**20}",
            f"--fsize={limits.file_mb * 2**20}", "--nofile=64:64",
            f"--nproc={limits.processes}", "--core=0", "--",
            self._bwrap,
            "--unshare-all", "--unshare-user", "--disable-userns",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--info-fd", str(info_fd),
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
            "--remount-ro", "/",
            PYTHON, "-E", "-s", "-B", f"/work/{request.entrypoint}",
        ]
        # fmt: on


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
