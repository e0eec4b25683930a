"""One run inside a zygote: a supervisor (pid 1) and the program process it starts.

The supervisor, forked by the zygote into a new pid namespace, says hello (so the host learns
its pid and moves it into the run's cgroup), makes a new mount, ipc and network namespace
(only a loopback interface, up, as bwrap leaves it), mounts a fresh size- and inode-bounded
tmpfs as /work, /tmp and /dev/shm and a fresh /proc, waits for the host's "joined", makes a
cgroup namespace rooted at the run's cgroup, then forks the program process and reports
"armed".

The program process makes its own user namespace (uid 65534, nothing else mapped), drops
every capability, sets no_new_privs, installs the seccomp filter, takes the run's pipes as
stdin/stdout/stderr and closes everything else, then blocks until the code has arrived.

When the host sends the run, the supervisor writes the files, drops its own capabilities
under the same filter, releases the program process, waits for it and reports its status,
with the run's figures when the host asks for them: it kills what the program left running
first, so that nothing writes while it reads them (figure_files.py).
When the supervisor exits, the kernel kills whatever is left in the pid namespace.
"""

from __future__ import annotations

import json
import math
import os
import resource
import signal
import socket
from pathlib import PurePosixPath
from typing import Any

from . import figure_files, linux, program, seccomp, wire

SANDBOX_UID = 65534
_SCRATCH = "/.scratch"  # an empty dir of the read-only root, made by bwrap
_PLACES = (("work", "/work"), ("tmp", "/tmp"), ("shm", "/dev/shm"))
_ADDRESS_SPACE = 2048 * 2**20  # per process; the cgroup bounds the run's total
FILTER = seccomp.assemble()  # once, in the zygote


def supervise(arm: dict[str, Any], fds: list[int]) -> dict[str, Any]:
    """Prepare and supervise one run; return only in the program process, with its job."""
    run_fd, *stdio = fds
    # inherited from the zygote, and said again: pid 1 of the run must stay closed to the
    # program's ptrace, /proc/1/mem and /proc/1/environ even if the zygote's order changes
    linux.prctl(linux.PR_SET_DUMPABLE, 0)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the program may signal us: pid 1 ignores
    sock = socket.socket(fileno=run_fd)
    sock.sendall(b"H")  # the host reads our pid from this message's credentials
    linux.unshare(linux.CLONE_NEWNS | linux.CLONE_NEWIPC | linux.CLONE_NEWNET)
    linux.loopback_up()
    linux.mount("none", "/", None, linux.MS_REC | linux.MS_PRIVATE)
    size = _mount_scratch(int(arm["disk_mb"]), int(arm["files"]))
    _mount_proc()
    if sock.recv(1) != b"J":  # the host has moved us into the run's cgroup
        os._exit(1)
    # only now, inside the run's cgroup: a cgroup namespace rooted there, so the run's
    # /proc/self/cgroup reads "0::/" and tells nothing of the slot's uid or the worker's place
    # (bwrap's own namespace is rooted where the zygote started, in the worker's cgroup)
    linux.unshare(linux.CLONE_NEWCGROUP)
    go_read, go_write = os.pipe()
    armed_read, armed_write = os.pipe()
    child = os.fork()
    if child == 0:
        sock.close()
        os.close(go_write)
        os.close(armed_read)
        return _enter(stdio, go_read, armed_write)
    for fd in (go_read, armed_write, *stdio):
        os.close(fd)
    if os.read(armed_read, 1) != b"1":
        _, status = os.waitpid(child, 0)
        wire.send(sock, {"error": f"the program process failed to set up (status {status:#x})"})
        os._exit(1)
    wire.send(sock, {"armed": True})
    frame = wire.receive(sock)
    if frame is None:
        os._exit(0)  # disarmed: our exit takes the waiting program process with it
    header, blobs = frame
    limits = header["limits"]
    if size != (limits["disk_mb"], limits["files"]):
        _resize_scratch(limits["disk_mb"], limits["files"])
    _write_files(header["names"], blobs)
    linux.drop_capabilities(bounding=False)
    seccomp.install(FILTER)
    job = {"entrypoint": header["entrypoint"], "limits": limits}
    os.write(go_write, json.dumps(job).encode())
    os.close(go_write)
    status, maxrss = _reap(child)
    report: dict[str, Any] = {"status": status, "maxrss_kb": maxrss}
    drawn: list[bytes] = []
    bounds = header.get("figures")
    if bounds is not None:
        try:
            os.kill(-1, signal.SIGKILL)  # as pid 1: every other process of the run
        except ProcessLookupError:
            pass
        found, dropped = figure_files.collect("/", bounds["skip"], bounds)
        report.update(figures=[name for name, _ in found], dropped=dropped)
        drawn = [data for _, data in found]
    wire.send(sock, report, drawn)
    os._exit(0)


def _mount_scratch(disk_mb: int, files: int) -> tuple[int, int]:
    options = f"size={disk_mb}m,nr_inodes={files},mode=0700"
    linux.mount("tmpfs", _SCRATCH, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, options)
    for name, target in _PLACES:
        os.mkdir(f"{_SCRATCH}/{name}", 0o700)
        linux.mount(f"{_SCRATCH}/{name}", target, None, linux.MS_BIND)
    linux.umount(_SCRATCH)  # one filesystem, one budget, seen only through its three binds
    return disk_mb, files


def _resize_scratch(disk_mb: int, files: int) -> None:
    flags = linux.MS_REMOUNT | linux.MS_NOSUID | linux.MS_NODEV
    linux.mount("tmpfs", "/work", None, flags, f"size={disk_mb}m,nr_inodes={files}")


def _mount_proc() -> None:
    # our own /proc: this pid namespace only, so the zygote is out of sight and reach
    linux.mount("proc", "/proc", "proc", linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC)
    # the run's uid is root of the zygote's namespaces; without this, net sysctls are writable
    linux.mount("/proc/sys", "/proc/sys", None, linux.MS_BIND | linux.MS_REC)
    flags = linux.MS_BIND | linux.MS_REMOUNT | linux.MS_RDONLY
    linux.mount("none", "/proc/sys", None, flags | linux.MS_NOSUID | linux.MS_NODEV)


def _write_files(names: list[str], blobs: list[bytes]) -> None:
    for name, data in zip(names, blobs, strict=True):
        rel = PurePosixPath(name)
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            raise ValueError(f"refusing a file name outside the work dir: {name!r}")
        target = PurePosixPath("/work", *rel.parts)
        os.makedirs(target.parent, mode=0o700, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        fd = os.open(target, flags, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)


def _enter(stdio: list[int], go: int, armed: int) -> dict[str, Any]:
    # the zygote is not dumpable, which would leave our own /proc/self/uid_map root's
    linux.prctl(linux.PR_SET_DUMPABLE, 1)
    linux.unshare(linux.CLONE_NEWUSER)
    linux.map_user(SANDBOX_UID)
    linux.drop_capabilities(bounding=True)
    seccomp.install(FILTER)
    program.prepare()
    for target, fd in enumerate(stdio):
        os.dup2(fd, target)
    _close_all_but({0, 1, 2, go, armed})
    os.write(armed, b"1")
    os.close(armed)
    chunks = []
    while chunk := os.read(go, 65536):
        chunks.append(chunk)
    os.close(go)
    if not chunks:
        os._exit(0)  # the supervisor was told to stand down
    job: dict[str, Any] = json.loads(b"".join(chunks))
    _limit(job["limits"])
    os.chdir("/work")
    return job


def _close_all_but(keep: set[int]) -> None:
    start = 0
    for fd in sorted(keep):
        if start < fd:  # never an empty range: closerange(0, 0) becomes close_range(0, ~0)
            os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, 1 << 20)


def _limit(limits: dict[str, Any]) -> None:
    cpu = math.ceil(limits["time_s"])
    for name, soft, hard in (
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_AS, _ADDRESS_SPACE, _ADDRESS_SPACE),
        (resource.RLIMIT_FSIZE, limits["file_mb"] * 2**20, limits["file_mb"] * 2**20),
        (resource.RLIMIT_NOFILE, 64, 64),
        (resource.RLIMIT_NPROC, limits["processes"], limits["processes"]),
        (resource.RLIMIT_CORE, 0, 0),
    ):
        resource.setrlimit(name, (soft, hard))


def _reap(child: int) -> tuple[int, int]:
    while True:  # as pid 1 we also reap the program's orphans
        pid, status, usage = os.wait4(-1, 0)
        if pid == child:
            return status, usage.ru_maxrss
