"""A warm run prepared before its code exists, then run, then killed.

`ArmedRun.prepare` asks a zygote to fork the run's supervisor (see zygote/run.py). The
supervisor's first message carries its host pid in its credentials (the kernel translates
pids across namespaces); the host moves it into a fresh per-run cgroup before it may start
the program process, so everything the run ever does is charged to, limited by and killable
through that cgroup. `execute` sends the code and the limits, reads the output with a budget
and a deadline, takes the program's wait status from the supervisor, and SIGKILLs the whole
cgroup. `finish` (off the clock) waits until the cgroup is empty and removes it. The
supervisor's report carries the run's figures (zygote/figure_files.py), at most
MAX_FIGURES PNGs of MAX_FIGURE_BYTES: raw bytes, which the host re-encodes (outcomes.ended).

A run the grader lost raises RunLost: its code never reached its supervisor, or its
supervisor vanished without a report while nothing says the program reached a limit (see
warm.py, which runs it again from fresh state). A student's program cannot end its
supervisor: it is pid 1 of the run's pid namespace, which takes no signal it does not handle.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import socket
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import PurePosixPath

from core import figures
from core.errors import GraderError
from core.runs import Limits, RunRequest
from workers.sandbox import cgroups
from workers.sandbox.capture import Captured, capture
from workers.sandbox.outcomes import Drawn
from workers.sandbox.zygote import wire

_ARM_TIMEOUT_S = 10.0
_WALL_GRACE_S = 0.5  # as bwrap; a warm start costs a few ms of it, not 200
_STATUS_WAIT_S = 0.5  # after the program exits, its supervisor's report follows at once
_UCRED = struct.Struct("3i")
_REPORT_BLOBS = figures.MAX_FIGURES * figures.MAX_FIGURE_BYTES  # its figures, and no more


class RunLost(GraderError):
    """The grader lost a run before it could say how it ended; running it again is safe."""


@dataclass
class Execution:
    """What a run left: its output, its wait status (None if killed first), its usage and
    its figures as its supervisor found them (None: none were asked for, or no report)."""

    captured: Captured
    status: int | None
    usage: cgroups.Usage
    duration_ms: int
    drawn: Drawn | None = None


class ArmedRun:
    """The host's ends of one prepared run: its cgroup, its socket and its three pipes."""

    def __init__(self, uid: int, limits: Limits) -> None:
        self.limits = limits
        self._uid = uid
        self.group = cgroups.RunCgroup(
            f"{uid}-{secrets.token_hex(4)}", limits.memory_mb * 2**20, limits.processes
        )
        self.sock, self._child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self._stdin = self._stdout = self._stderr = -1
        self._cpu_before = 0.0  # the set-up's CPU time, read while the run waits for its code

    @classmethod
    def prepare(cls, control: socket.socket, uid: int, limits: Limits) -> ArmedRun:
        """Have the zygote behind `control` prepare a run; raise GraderError if it cannot."""
        armed = cls(uid, limits)
        try:
            armed._prepare(control)
        except BaseException:
            armed.finish()
            raise
        return armed

    def _prepare(self, control: socket.socket) -> None:
        self.group.create()
        stdin_r, self._stdin = os.pipe()
        self._stdout, out_w = os.pipe()
        self._stderr, err_w = os.pipe()
        sizes = json.dumps({"disk_mb": self.limits.disk_mb, "files": self.limits.files}).encode()
        fds = [self._child.fileno(), stdin_r, out_w, err_w]
        try:
            socket.send_fds(control, [sizes], fds)
        except OSError as exc:
            raise GraderError(f"the warm zygote is gone: {exc}") from exc
        finally:
            self._child.close()
            for fd in (stdin_r, out_w, err_w):
                os.close(fd)
        self.sock.settimeout(_ARM_TIMEOUT_S)
        try:
            pid = _sender_pid(self.sock)
            self.group.admit(pid, self._uid)
            self.sock.sendall(b"J")  # "joined": only now may the supervisor start the program
            frame = wire.receive(self.sock)
        except OSError as exc:
            raise GraderError(f"the warm run did not arm: {exc}") from exc
        if frame is None or not frame[0].get("armed"):
            why = frame[0].get("error") if frame else "its supervisor exited"
            raise GraderError(f"the warm run did not arm: {why}")
        self._cpu_before = self.group.usage().cpu_s

    def execute(self, request: RunRequest) -> Execution:
        """Run the request; when this returns, every process of the run is dead or dying."""
        limits = request.limits
        started = time.monotonic()
        deadline = started + limits.time_s + _WALL_GRACE_S
        try:
            if (limits.memory_mb, limits.processes) != (
                self.limits.memory_mb,
                self.limits.processes,
            ):
                self.group.relimit(limits.memory_mb * 2**20, limits.processes)
            names = list(request.files)
            for name in names:
                rel = PurePosixPath(name)
                if rel.is_absolute() or ".." in rel.parts or not rel.parts:
                    raise GraderError(f"refusing a file name outside the work dir: {name!r}")
            header = {
                "entrypoint": request.entrypoint,
                "limits": limits.describe(),
                "names": names,
                "figures": {"skip": figures.work_files(names), **figures.BOUNDS}
                if request.figures
                else None,
            }
            try:
                wire.send(self.sock, header, [request.files[n] for n in names])
            except OSError as exc:
                raise RunLost(f"the warm run vanished before it started: {exc}") from exc
            stdin, self._stdin = self._stdin, -1
            _feed(stdin, request.stdin)  # which closes it: the program must see EOF
            with (
                open(self._stdout, "rb", closefd=False) as out,
                open(self._stderr, "rb", closefd=False) as err,
            ):
                captured = capture(out, err, limits.output_kb * 1024, deadline)
            status, drawn = None, None
            if not (captured.timed_out or captured.over_budget):
                # the output can end long before the program does (it may close both pipes)
                until = max(deadline, time.monotonic() + _STATUS_WAIT_S)
                status, drawn = _status(self.sock, until)
                captured.timed_out = status is None and time.monotonic() >= deadline
            duration_ms = int((time.monotonic() - started) * 1000)
            if captured.timed_out or captured.over_budget:
                self.group.kill_all()  # still running, perhaps forking: wait until all are gone
            else:
                # the program has exited; a SIGKILL to its supervisor (pid 1 of the run's pid
                # namespace) takes everything left with it, and finish() confirms it later
                self.group.signal_all()
            usage = self.group.usage()
            cpu_s = usage.cpu_s - self._cpu_before
            usage = cgroups.Usage(usage.peak_bytes, usage.oom_killed, cpu_s)
            return Execution(captured, status, usage, duration_ms, drawn)
        finally:
            self.group.signal_all()

    def finish(self) -> None:
        """Kill whatever is left of the run, wait until it is gone, and remove its cgroup."""
        self.sock.close()
        self._child.close()
        for fd in (self._stdin, self._stdout, self._stderr):
            if fd >= 0:
                os.close(fd)
        self._stdin = self._stdout = self._stderr = -1
        gone = self.group.kill_all()
        self.group.remove()
        if not gone:
            raise GraderError(f"the warm run in cgroup {self.group.name} would not die")


def _sender_pid(sock: socket.socket) -> int:
    """Read the one-byte hello and return the sender's pid, as the kernel translated it."""
    data, ancillary, _, _ = sock.recvmsg(1, socket.CMSG_SPACE(_UCRED.size))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and data == b"H":
            pid = int(_UCRED.unpack(payload[: _UCRED.size])[0])
            if pid > 0:
                return pid
    raise OSError("the supervisor's hello carried no credentials")


def _feed(fd: int, data: bytes) -> None:
    """Write the run's stdin to `fd` and close it; more than PIPE_BUF goes from a thread."""
    if len(data) <= select.PIPE_BUF:  # a pipe takes this much at once, however small it is
        try:
            if data:
                os.write(fd, data)
        except BrokenPipeError:
            pass  # the program closed its stdin already: its business, not a grader fault
        finally:
            os.close(fd)
        return

    def write() -> None:
        try:
            with open(fd, "wb") as pipe:
                pipe.write(data)
        except OSError:
            pass  # the program stopped reading (or was killed); that is its business

    try:
        threading.Thread(target=write, daemon=True).start()
    except RuntimeError as exc:  # no thread to be had (a full pid table): the grader's fault
        os.close(fd)
        raise OSError(f"cannot feed the run's stdin: {exc}") from exc


def _status(sock: socket.socket, until: float) -> tuple[int | None, Drawn | None]:
    """Return the program's wait status as its supervisor reports it (None if none came),
    and the figures its report carries."""
    sock.settimeout(max(0.001, until - time.monotonic()))
    try:
        frame = wire.receive(sock, _REPORT_BLOBS)
    except OSError:
        return None, None
    if frame is None or not isinstance(frame[0].get("status"), int):
        return None, None
    header, blobs = frame
    return int(header["status"]), _drawn(header, blobs)


def _drawn(header: dict[str, object], blobs: list[bytes]) -> Drawn | None:
    """Return the figures of a report as (name, bytes) and (name, reason), if well formed."""
    names, dropped = header.get("figures"), header.get("dropped")
    if not isinstance(names, list) or not isinstance(dropped, list) or len(names) != len(blobs):
        return None
    found = [(str(name), blob) for name, blob in zip(names, blobs, strict=True)]
    lost = [
        (str(n), str(r)) for n, r in (d for d in dropped if isinstance(d, list) and len(d) == 2)
    ]
    return found, lost
