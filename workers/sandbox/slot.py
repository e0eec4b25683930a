"""One warm slot on the host: a uid of its own, a zygote, and its next run, armed early.

The zygote is python3 with numpy imported, inside bwrap (new user/pid/net/ipc/uts/mount/cgroup
namespaces, the read-only runtime tree), running as uid 0 of that user namespace (the slot's
uid outside) with CAP_SYS_ADMIN, CAP_NET_ADMIN and CAP_SETFCAP there only. Each run is armed
from it (see armed.py and zygote/), and a run that went wrong costs the slot its zygote.

The zygote and its bwrap live in a cgroup of the slot's own (`<uid>-zygote`, beside its runs'),
joined before bwrap starts: discard() kills that cgroup and waits until it is empty, so a pool
that closes leaves no process of its slots behind, however loaded the host (killing bwrap
alone left its inner half dying, re-parented to init, for seconds).
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import hashlib
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from core.errors import GraderError
from core.runs import Limits, RunRequest
from workers.sandbox import cgroups, scratch, zygote
from workers.sandbox.armed import ArmedRun, Execution, RunLost
from workers.sandbox.runtime import DRAWING_ENV, PYTHON, Runtime

ZYGOTE_MOUNT = "/opt/codeblanks"
# runs armed ahead per slot: one waits while another runs, since arming takes longer than a
# run here (moving a process into a cgroup v1 waits for an RCU grace period per controller)
ARMED_AHEAD = 2
# and while no run of the pool is in flight, this many more: the cases of one submission
# arrive together, and a run that shares the CPU with arming takes twice as long (a 5-case
# burst on 2 slots: 86 ms with arming beside it, vs ~10 ms for one run; warm_cases5 mode)
IDLE_RESERVE = 2
MOST_ARMED = ARMED_AHEAD + IDLE_RESERVE
PREPARED = "prepared"  # in the installed zygote dir: programs it compiles ahead (see program.py)
_PROGRAM_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\.py$")
_START_TIMEOUT_S = 30.0  # bwrap, python3 and numpy: ~0.2 s idle, seconds on a loaded machine
_GONE_S = 30.0  # a killed zygote frees numpy's pages in well under a second; seconds when loaded
# root's sh joins the slot's cgroup(s), then becomes the slot's uid (setpriv) and bwrap
_ZYGOTE_TMP = 4 * 2**20  # bytes: the zygote's /tmp holds matplotlib's font list (30 KB)
_LAUNCH = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


class Slot:
    """A zygote under one uid and its armed runs.

    The keeper thread calls start, arm, finish_spent and discard; one run thread at a time
    calls execute, also while the keeper arms (never while it starts or discards).
    """

    def __init__(
        self, runtime: Runtime, uid: int, zygote_dir: Path, log: Path, drawing: bool = False
    ) -> None:
        self.runtime = runtime
        self.drawing = drawing  # the zygote imports matplotlib ahead (zygote/__main__.py)
        self.uid = uid
        self.zygote_dir = zygote_dir
        self.log = log
        self._proc: subprocess.Popen[bytes] | None = None
        self._group = cgroups.RunCgroup(zygote_group(uid))  # no limits: only to kill all
        self._control: socket.socket | None = None
        # the keeper thread arms runs while a run thread takes one: these two lists share a lock
        self._lock = threading.Lock()
        self._armed: collections.deque[ArmedRun] = collections.deque()
        self._spent: list[ArmedRun] = []  # runs that ended: sent SIGKILL, not yet seen gone

    @property
    def armed(self) -> int:
        """Return how many runs are armed and waiting for their code."""
        with self._lock:
            return len(self._armed)

    @property
    def has_spent(self) -> bool:
        """Return whether ended runs wait for finish_spent."""
        with self._lock:
            return bool(self._spent)

    @property
    def alive(self) -> bool:
        """Return whether the zygote is still running."""
        return self._proc is not None and self._proc.poll() is None

    def start(self, stop: threading.Event) -> None:
        """Discard any old zygote and start a new one; raise GraderError saying why it failed."""
        self.discard()
        cgroups.sweep_slot(f"{self.uid}-")  # a crashed worker's zygote and runs of this uid
        self._group.create()
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with open(self.log, "wb") as log:
            try:
                self._proc = subprocess.Popen(
                    self._argv(child.fileno()),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                    pass_fds=(child.fileno(),),
                    start_new_session=True,
                )
            except OSError as exc:
                parent.close()
                self._group.remove()
                raise GraderError(f"cannot start a warm zygote: {exc}") from exc
            finally:
                child.close()
        self._control = parent
        ends = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < ends and not stop.is_set():
            if select.select([parent], [], [], 0.1)[0]:
                if parent.recv(16) == b"ready":
                    return
                break
            if self._proc.poll() is not None:
                break
        self.discard()
        raise GraderError(f"the warm zygote did not start: {self.log_tail() or 'no output'}")

    def arm(self, limits: Limits) -> None:
        """Arm one more run: namespaces, tmpfs, cgroup, and a program process awaiting code."""
        if self._control is None or not self.alive:
            raise GraderError("the warm zygote is not running")
        try:
            run = ArmedRun.prepare(self._control, self.uid, limits)
        except GraderError as exc:
            raise GraderError(f"{exc}; the zygote said: {self.log_tail() or 'nothing'}") from exc
        with self._lock:
            self._armed.append(run)

    def execute(self, request: RunRequest) -> Execution:
        """Run the request in the oldest armed run (safe while the keeper arms another)."""
        if not self.alive:  # its armed runs died with it: never send code to them
            raise RunLost("the warm zygote died while its runs waited")
        with self._lock:
            if not self._armed:
                raise RunLost("the warm slot has no armed run")
            run = self._armed.popleft()
        try:
            return run.execute(request)
        finally:
            with self._lock:  # only now may the keeper's finish_spent wait for it and remove it
                self._spent.append(run)

    def finish_spent(self) -> None:
        """Wait until the processes of ended runs are gone and remove their cgroups."""
        with self._lock:
            spent, self._spent = self._spent, []
        problems = []
        for run in spent:
            try:
                run.finish()
            except GraderError as exc:
                problems.append(str(exc))
        if problems:
            raise GraderError("; ".join(problems))

    def discard(self) -> None:
        """Kill the zygote and every run of the slot, whatever state they are in."""
        with self._lock:
            runs = [*self._spent, *self._armed]
            self._spent, self._armed = [], collections.deque()
        if self._control is not None:
            self._control.close()
            self._control = None
        proc, self._proc = self._proc, None
        problems = []
        if proc is not None:
            proc.kill()
            proc.wait()
            if not self._group.kill_all(_GONE_S):  # until bwrap, its init and the zygote are gone
                problems.append(f"the zygote of warm slot {self.uid} would not die")
            _kill_uid(self.uid)  # the pool holds this uid's lock: all its processes are ours
        for run in runs:
            try:
                run.finish()
            except GraderError as exc:
                problems.append(str(exc))
        if not self._group.remove():
            problems.append(f"the cgroup of warm slot {self.uid} stays")
        if problems:
            raise GraderError("; ".join(problems))

    def zygote_pid(self) -> int | None:
        """Return the host pid of the zygote's python3 (for tests that inspect its memory)."""
        if self._proc is None:
            return None
        pid = self._proc.pid
        for _ in range(2):  # bwrap -> bwrap's init in the sandbox -> python3
            try:
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                return None
            if not children:
                return None
            pid = int(children[0])
        return pid

    def log_tail(self) -> str:
        """Return the end of the zygote's own output (its errors; runs never write there)."""
        try:
            return self.log.read_bytes()[-2000:].decode(errors="replace").strip()
        except OSError:
            return ""

    def _argv(self, control_fd: int) -> list[str]:
        root = self.runtime.root
        bwrap = shutil.which("bwrap") or "bwrap"
        setpriv = shutil.which("setpriv") or "setpriv"
        uid = str(self.uid)
        # fmt: off
        return [
            "/bin/sh", "-c", _LAUNCH, "sh", *self._group.procs_files, "--",
            setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            bwrap,
            "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session",
            # no --disable-userns: each run's program process makes its own user namespace
            # (then the seccomp filter forbids any more); uid 0 here is the slot's uid outside.
            # SYS_ADMIN makes each run's namespaces and mounts, NET_ADMIN brings up each run's
            # loopback, and SETFCAP lets the program process map uid 0 of this namespace as its
            # 65534 (the kernel's verify_root_map asks for it); each run drops all three
            "--uid", "0", "--gid", "0", "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETFCAP",
            "--cap-add", "CAP_NET_ADMIN",
            "--hostname", "sandbox",
            "--ro-bind", str(root / "usr"), "/usr",
            "--ro-bind", str(root / "etc/ld.so.cache"), "/etc/ld.so.cache",
            "--ro-bind", str(root / "etc/alternatives"), "/etc/alternatives",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
            "--ro-bind", str(self.zygote_dir), f"{ZYGOTE_MOUNT}/zygote",
            "--proc", "/proc", "--dev", "/dev",
            # the zygote's own /tmp (matplotlib's config dir, as it imports it): each run
            # mounts its own over it
            "--dir", "/work", "--size", str(_ZYGOTE_TMP), "--tmpfs", "/tmp", "--dir", "/.scratch",
            "--chdir", ZYGOTE_MOUNT, "--clearenv",
            "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/work",
            "--setenv", "TMPDIR", "/tmp", "--setenv", "LANG", "C.UTF-8",
            "--setenv", "OPENBLAS_NUM_THREADS", "1", "--setenv", "OMP_NUM_THREADS", "1",
            *(arg for name, value in DRAWING_ENV.items() for arg in ("--setenv", name, value)),
            "--remount-ro", "/dev", "--remount-ro", "/",
            PYTHON, "-E", "-s", "-B", "-m", "zygote", str(control_fd),
            *(["--drawing"] if self.drawing else []),
        ]
        # fmt: on


def zygote_group(uid: int) -> str:
    """Return the name of the cgroup of the slot's zygote (beside its runs', `<uid>-<hex>`)."""
    return f"{uid}-zygote"


def _kill_uid(uid: int, deadline_s: float = 2.0) -> None:
    """SIGKILL every live process whose real uid is `uid` until none is left."""
    ends = time.monotonic() + deadline_s
    while time.monotonic() < ends:
        found = False
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                status = Path(entry.path, "status").read_text()
            except OSError:
                continue
            fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            if fields["Uid"].split()[0] == str(uid) and not fields["State"].strip().startswith("Z"):
                found = True
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(entry.name), signal.SIGKILL)
        if not found:
            return
        time.sleep(0.01)


def install_zygote(state_dir: Path, prepared: Mapping[str, bytes] | None = None) -> Path:
    """Copy the zygote package to a root-owned, world-readable dir named by its content.

    `prepared` maps a work dir file name to a program the zygote compiles once, ahead of
    every run (core.cases' harness): a run whose entrypoint holds exactly that text skips
    its compilation, about 2 ms of a 10 ms run.
    """
    source = Path(zygote.__path__[0])
    files = sorted(source.glob("*.py"))
    programs = sorted((prepared or {}).items())
    for name, _ in programs:
        if not _PROGRAM_NAME.match(name):
            raise GraderError(f"refusing a prepared program named {name!r}")
    digest = hashlib.sha256(b"".join(f.name.encode() + f.read_bytes() for f in files))
    for name, text in programs:
        digest.update(b"prepared/" + name.encode() + b"\0" + text)
    target = state_dir / f"zygote-{digest.hexdigest()[:16]}"
    if not target.is_dir():
        building = state_dir / f".{target.name}.{os.getpid()}"
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir(mode=0o755)
        for file in files:
            shutil.copyfile(file, building / file.name)
            (building / file.name).chmod(0o644)
        (building / PREPARED).mkdir(mode=0o755)
        for name, text in programs:
            (building / PREPARED / name).write_bytes(text)
            (building / PREPARED / name).chmod(0o644)
        with contextlib.suppress(OSError):  # another pool may have installed it meanwhile
            building.rename(target)
        shutil.rmtree(building, ignore_errors=True)
    return target


def sweep_orphans(locks: Path, first_uid: int) -> None:
    """Remove the run cgroups of warm uids that no live pool holds (a killed worker's)."""
    locks.mkdir(parents=True, exist_ok=True, mode=0o700)
    for uid in range(first_uid, first_uid + scratch.SLOTS):
        fd = os.open(locks / f"{uid}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # a live pool's slot (perhaps ours): its cgroups are in use
        else:
            cgroups.sweep_slot(f"{uid}-")
        finally:
            os.close(fd)
