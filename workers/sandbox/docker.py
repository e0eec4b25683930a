"""The `docker` backend: one fresh container per run from the runner image, via the docker CLI.

A run, from outside in:
  `docker run -i` of the runner image (runtime/build-image.sh): no network, a read-only root,
  size- and inode-bounded tmpfs /work, /tmp and /dev/shm, memory = memory+swap, a pids limit,
  one CPU, rlimits, no capabilities, no-new-privileges, the warm pool's seccomp filter as the
  container's seccomp profile (in place of Docker's default), tini as pid 1, and a uid of its own
  (never a shared one: RLIMIT_NPROC counts every process of a uid on the host, so a fork bomb
  under a shared uid would stop every other run from starting);
  its first program, docker_entry.py, makes itself non-dumpable, reads the files from stdin
  into /work, says STARTED and execs the program (or, when its figures are asked for, forks
  it, and after it writes them on stdout behind a marker made for the run, which capture
  splits off). The wall clock starts at STARTED, so container start-up is not charged.
No --rm: the daemon would remove the container before its OOMKilled flag could be read, so the
container is inspected, then force-removed, whatever happened. Only this module talks to Docker.
When the daemon is local, each container goes under a cgroup of the run's (--cgroup-parent),
which outlives the container and gives the run's CPU time and peak memory: a cgroup of ours
with the cgroupfs driver, a slice of its own with the systemd driver (workers/sandbox/slices.py).
Each DockerSandbox has an instance id of its own, carried by its containers (a label, and in
their names, so also in their accounting cgroups' names): what one sandbox made can be told
from another's, even another codeblanks's on the same host.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import math
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path, PurePosixPath
from typing import IO

from core import figures
from core.errors import GraderError
from core.runs import RunRequest, RunResult
from workers.sandbox import cgroups, docker_entry, memfd, slices
from workers.sandbox.capture import Captured, capture
from workers.sandbox.outcomes import Drawn, ended
from workers.sandbox.runtime import DRAWING_ENV
from workers.sandbox.zygote import figure_files, seccomp

DEFAULT_IMAGE = "codeblanks-runner:latest"
NAME_PREFIX = "codeblanks-run-"
DEADLINE_LABEL = "org.codeblanks.deadline"  # wall-clock time after which a sweep may remove it
INSTANCE_LABEL = "org.codeblanks.sandbox"  # the instance id of the DockerSandbox that ran it
FIRST_UID = 1_000_000_000  # far above host users, bwrap's slots and the usual subuid ranges
UIDS = 1 << 20  # random per run: two concurrent runs share a uid once in ~a million
_ENTRY = Path(docker_entry.__file__).read_text()
_COLLECTOR = Path(figure_files.__file__).read_text()  # the entry runs it in the container
_TRAILER_BUDGET = figures.MAX_FIGURES * (figures.MAX_FIGURE_BYTES + 256) + 65536
# the CLI reads the profile from a path and sends its text to the daemon, so a memfd of ours
# (no file to write or clean up) serves a local daemon and a remote one alike
_PROFILE = json.dumps(seccomp.profile()).encode()
_START_TIMEOUT_S = 30.0  # a busy daemon can take seconds to start a container
_WALL_GRACE_S = 0.5  # as bwrap: interpreter and numpy start-up count against the run
_CLI_TIMEOUT_S = 30.0
_DATA_LIMIT = 2048 * 2**20  # per process, like bwrap's address-space limit (no "as" ulimit)
# the accounting cgroups, beside bwrap's and the warm pool's: docker-DEADLINE-CONTAINER
_GROUP_PREFIX = "docker-"
_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin"}  # the CLI gets nothing of the worker's env
Accounting = cgroups.RunCgroup | slices.RunSlice


class DockerSandbox:
    """Runs each request in a new container of the runner image."""

    def __init__(self, image: str = DEFAULT_IMAGE) -> None:
        self.image = image
        self._docker = shutil.which("docker", path=_ENV["PATH"])
        self._checked = False
        self.parallel_runs = os.cpu_count() or 1  # each container is given one CPU
        self._driver = ""  # the daemon's cgroup driver, when runs get a parent of ours (check)
        self.instance = secrets.token_hex(6)  # in its containers' label and names

    def check(self) -> None:
        """Raise GraderError saying what is missing when the daemon or the image is not there."""
        if self._checked:
            return
        if self._docker is None:
            raise GraderError("the docker sandbox needs the docker CLI (apt-get install docker.io)")
        probe = self._cli("image", "inspect", "--format", "{{.Id}}", self.image, check=False)
        if probe.returncode != 0:
            why = probe.stderr.decode(errors="replace").strip()[:300]
            raise GraderError(
                f"the docker sandbox cannot use image {self.image}: {why} (is dockerd running? "
                "build the image with runtime/build-image.sh)"
            )
        self.sweep()
        if cgroups.available() is None:  # we are root on a host whose cgroups we can write
            driver = self._cli("info", "--format", "{{.CgroupDriver}}", check=False)
            found = driver.stdout.decode(errors="replace").strip()
            if found == "cgroupfs" or (found == "systemd" and shutil.which("systemctl")):
                self._driver = found
        self._checked = True

    def sweep(self) -> int:
        """Force-remove run containers past their deadline, and dead runs' accounting cgroups.

        Only what is past its deadline goes, whoever made it: a live run's container and its
        cgroup (empty until the container starts in it) may be another codeblanks's.
        """
        listing = self._cli(
            "ps", "-a", "--filter", f"label={DEADLINE_LABEL}",
            "--format", f'{{{{.Names}}}} {{{{.Label "{DEADLINE_LABEL}"}}}}',
        )  # fmt: skip
        stale = []
        for line in listing.stdout.decode().splitlines():
            name, _, deadline = line.partition(" ")
            if name.startswith(NAME_PREFIX) and float(deadline or 0) < time.time():
                stale.append(name)
        if stale:
            self._cli("rm", "-f", *stale, check=False)
        removed = cgroups.remove_empty(_GROUP_PREFIX, _expired)
        return len(stale) + removed + slices.stop_stale(_expired)

    def run(self, request: RunRequest) -> RunResult:
        """Run the request in a new container and return its output and how it ended."""
        self.check()
        marker = f"\0codeblanks-figures-{secrets.token_hex(16)}\0" if request.figures else ""
        payload = _payload(request, marker)
        name = f"{NAME_PREFIX}{self.instance}-{secrets.token_hex(6)}"
        uid = FIRST_UID + secrets.randbelow(UIDS)
        group = self._accounting_group(request, name)
        try:
            return self._run(request, name, uid, payload, group, marker.encode())
        finally:
            if group is not None:
                group.remove()

    def _accounting_group(self, request: RunRequest, name: str) -> Accounting | None:
        """Make the cgroup the container goes under; its limits are looser than the container's
        (a slice's are the container's own)."""
        if not self._driver:
            return None
        limits = request.limits
        deadline = time.time() + _lifetime_s(limits.time_s)
        named = f"{_GROUP_PREFIX}{deadline:.0f}-{name}"
        if self._driver == "systemd":
            return slices.RunSlice(named)
        group = cgroups.RunCgroup(
            named,
            (2 * limits.memory_mb + 64) * 2**20,
            2 * limits.processes + 8,
        )
        try:
            group.create()
        except GraderError:
            return None  # the run goes on, without figures
        return group

    def _run(
        self,
        request: RunRequest,
        name: str,
        uid: int,
        payload: bytes,
        group: Accounting | None,
        marker: bytes,
    ) -> RunResult:
        try:
            proc = self._start(request, name, uid, group)
        except OSError as exc:
            raise GraderError(f"cannot start docker: {exc}") from exc
        # a program that never reads its stdin must not block the capture of its output
        writer = threading.Thread(target=_feed, args=(proc.stdin, payload), daemon=True)
        writer.start()
        try:
            result = self._follow(request, name, proc, marker)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            writer.join(timeout=_CLI_TIMEOUT_S)
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
            self._cli("rm", "-f", name, check=False)
        if group is None:
            return result
        usage = group.usage()
        if usage.cpu_s <= 0:  # the daemon put the container elsewhere: no figures
            return result
        return dataclasses.replace(
            result, cpu_ms=int(usage.cpu_s * 1000), peak_memory_kb=usage.peak_bytes // 1024
        )

    def _start(
        self, request: RunRequest, name: str, uid: int, group: Accounting | None = None
    ) -> subprocess.Popen[bytes]:
        """Start `docker run` for the request, the container's seccomp profile on a memfd."""
        profile = memfd.holding(_PROFILE, "codeblanks-seccomp.json")
        try:
            argv = self._argv(request, name, uid, profile)
            if group is not None:
                argv[2:2] = ["--cgroup-parent", group.path]
            return subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=_ENV,
                close_fds=True,
                pass_fds=(profile,),
                start_new_session=True,
            )
        finally:
            os.close(profile)

    def _follow(
        self, request: RunRequest, name: str, proc: subprocess.Popen[bytes], marker: bytes
    ) -> RunResult:
        assert proc.stdout is not None and proc.stderr is not None
        limits = request.limits
        if not _await_start(proc.stdout, time.monotonic() + _START_TIMEOUT_S):
            self._stop(name, proc)
            why = proc.stderr.read().decode(errors="replace").strip()[:500]
            raise GraderError(f"the docker sandbox did not start: {why or proc.returncode}")
        started = time.monotonic()
        deadline = started + limits.time_s + _WALL_GRACE_S
        budget = limits.output_kb * 1024
        out = capture(proc.stdout, proc.stderr, budget, deadline, marker, _TRAILER_BUDGET)
        if out.timed_out or out.over_budget:
            self._stop(name, proc)
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()) + 0.2)
        except subprocess.TimeoutExpired:
            out.timed_out = True  # it closed its output but kept running
            self._stop(name, proc)
        duration_ms = int((time.monotonic() - started) * 1000)
        oom_killed, code = self._state(name)
        signalled = code - 128 if code > 128 else None  # tini reports a signal as 128 + number
        return ended(
            limits,
            out,
            code=code,
            signal=signalled,
            duration_ms=duration_ms,
            oom_killed=oom_killed,
            drawn=_drawn(out) if marker else None,
        )

    def _stop(self, name: str, proc: subprocess.Popen[bytes]) -> None:
        """Kill the container; the CLI goes first, or its unread output would stall the kill."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        # the daemon records OOMKilled only when the container stops, so stop it before
        # reading its state (run() removes it afterwards)
        self._cli("kill", name, check=False)

    def _state(self, name: str) -> tuple[bool, int]:
        """Return the stopped container's OOMKilled flag and exit code, as the daemon saw them."""
        shown = self._cli(
            "inspect", "--type", "container",
            "--format", "{{json .State.OOMKilled}} {{json .State.ExitCode}}", name,
        )  # fmt: skip
        oom, _, code = shown.stdout.decode().strip().partition(" ")
        return oom == "true", int(code)

    def _argv(self, request: RunRequest, name: str, uid: int, profile_fd: int) -> list[str]:
        limits = request.limits
        assert self._docker is not None
        cpu = math.ceil(limits.time_s)
        tmpfs = f"size={limits.disk_mb}m,nr_inodes={limits.files},mode=0700,uid={uid},gid={uid}"
        memory = f"{limits.memory_mb}m"
        fsize = limits.file_mb * 2**20
        # fmt: off
        return [
            self._docker, "run", "-i", "--name", name, "--pull", "never",
            "--label", f"{DEADLINE_LABEL}={time.time() + _lifetime_s(limits.time_s):.0f}",
            "--label", f"{INSTANCE_LABEL}={self.instance}",
            "--log-driver", "none",  # output reaches us through the attach stream only
            "--network", "none", "--read-only", "--init", "--hostname", "sandbox",
            # a cgroup namespace of its own (the default on cgroup v2, not on v1): the run's
            # /proc/self/cgroup reads "/", not the container's id or our cgroup parent
            "--ipc", "private", "--cgroupns", "private",
            "--user", f"{uid}:{uid}", "--workdir", "/work",
            "--tmpfs", f"/work:{tmpfs}", "--tmpfs", f"/tmp:{tmpfs}",
            "--tmpfs", f"/dev/shm:{tmpfs}",
            "--memory", memory, "--memory-swap", memory,
            "--pids-limit", str(limits.processes), "--cpus", "1",
            "--ulimit", f"cpu={cpu}:{cpu + 1}", "--ulimit", f"fsize={fsize}:{fsize}",
            "--ulimit", "nofile=64:64", "--ulimit", f"nproc={limits.processes}:{limits.processes}",
            "--ulimit", "core=0:0", "--ulimit", f"data={_DATA_LIMIT}:{_DATA_LIMIT}",
            "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
            "--security-opt", f"seccomp=/proc/self/fd/{profile_fd}",
            "--env", "PATH=/usr/bin:/bin", "--env", "HOME=/work", "--env", "TMPDIR=/tmp",
            "--env", "LANG=C.UTF-8", "--env", "OPENBLAS_NUM_THREADS=1",
            "--env", "OMP_NUM_THREADS=1",
            *(arg for item in DRAWING_ENV.items() for arg in ("--env", "=".join(item))),
            self.image, docker_entry.PYTHON, "-I", "-S", "-c", _ENTRY,
        ]
        # fmt: on

    def _cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        assert self._docker is not None
        try:
            done = subprocess.run(
                [self._docker, *args], capture_output=True, env=_ENV, timeout=_CLI_TIMEOUT_S
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GraderError(f"docker {args[0]} failed: {exc}") from exc
        if check and done.returncode != 0:
            why = done.stderr.decode(errors="replace").strip()[:300]
            raise GraderError(f"docker {args[0]} failed: {why}")
        return done


def _lifetime_s(time_s: float) -> float:
    """Return how long a run's container and cgroup can live, from start-up to removal."""
    return _START_TIMEOUT_S + time_s + _WALL_GRACE_S + 2 * _CLI_TIMEOUT_S


def _expired(group: str) -> bool:
    """Say whether an accounting cgroup (docker-DEADLINE-CONTAINER) is past its deadline; a
    slice's name has underscores for its dashes."""
    deadline = group.replace("_", "-").removeprefix(_GROUP_PREFIX).split("-")[0]
    return not deadline.isdigit() or int(deadline) < time.time()  # no deadline: an old version's


def _payload(request: RunRequest, marker: str = "") -> bytes:
    """Encode the files and the entrypoint as docker_entry.py reads them, then the stdin;
    with a `marker`, what the entry needs to send the figures back after it."""
    for name in request.files:
        rel = PurePosixPath(name)
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            raise GraderError(f"refusing a file name outside the work dir: {name!r}")
    files = {name: base64.b64encode(data).decode() for name, data in request.files.items()}
    wanted = None
    if marker:
        skip = figures.work_files(request.files)
        wanted = {"marker": marker, "skip": skip, "collector": _COLLECTOR, **figures.BOUNDS}
    header = json.dumps(
        {"files": files, "entrypoint": request.entrypoint, "figures": wanted}
    ).encode()
    return b"%d\n" % len(header) + header + request.stdin


def _feed(pipe: IO[bytes], payload: bytes) -> None:
    """Write the payload to the CLI's stdin and close it; a program may exit without reading."""
    try:
        pipe.write(payload)
        pipe.close()
    except (ValueError, OSError):  # a broken pipe: the program ended without reading
        pass


def _await_start(stdout: IO[bytes], deadline: float) -> bool:
    """Read exactly the STARTED marker from the container's stdout; False if it never came."""
    fd = stdout.fileno()
    os.set_blocking(fd, False)
    seen = b""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while len(seen) < len(docker_entry.STARTED):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(timeout=remaining):
                return False
            try:
                chunk = os.read(fd, len(docker_entry.STARTED) - len(seen))
            except BlockingIOError:
                continue
            if not chunk:
                return False
            seen += chunk
    if seen != docker_entry.STARTED:
        raise GraderError("the docker sandbox's entry did not say it started")
    return True


def _drawn(out: Captured) -> Drawn | None:
    """Return the figures the entry wrote after the marker, if they came whole."""
    if out.trailer is None or out.trailer_over:
        return None
    return figure_files.unpack(bytes(out.trailer), _TRAILER_BUDGET)
