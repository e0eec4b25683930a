"""What the test's own sandboxes left on the host, and nothing of another codeblanks's.

Another codeblanks may run sandboxes on this machine at the same time (`codeblanks dev`, a
benchmark), under the same uid ranges, cgroup parent and state dir. So every check here looks
only at what this process's sandboxes made:
- bwrap and warm runs: a run's uid is taken with an flock on its slot's lock file (under
  /run/codeblanks) before anything of the run is made, and given back only once its processes,
  cgroups and tmpfs are gone. What lives under a uid that another process holds is that
  process's runs in flight, never our leftovers; what lives under a uid that nobody holds is
  a leftover (ours, unless another codeblanks was killed), and what lives under a uid the
  sandbox under test holds must be what it keeps between runs.
- docker runs: each container carries its sandbox's instance id, as a label and in its name,
  and so does its accounting cgroup (named after the container).
cgroups are read only through the sandbox's own cgroup code (workers.sandbox.cgroups), which
knows where they live on cgroup v1 and v2 alike.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass
from pathlib import Path

from testkit import slowness
from workers.sandbox import cgroups, scratch, slices
from workers.sandbox import docker as docker_backend
from workers.sandbox.bwrap import BwrapSandbox
from workers.sandbox.docker import DockerSandbox
from workers.sandbox.slot import MOST_ARMED, zygote_group
from workers.sandbox.warm import FIRST_UID as WARM_FIRST_UID
from workers.sandbox.warm import WarmSandbox

BWRAP_LOCKS = Path("/run/codeblanks/slots")  # BwrapSandbox().locks_dir
WARM_LOCKS = Path("/run/codeblanks/warm/slots")  # WarmSandbox().state_dir / "slots"
BWRAP_UIDS = range(scratch.FIRST_UID, scratch.FIRST_UID + scratch.SLOTS)
WARM_UIDS = range(WARM_FIRST_UID, WARM_FIRST_UID + scratch.SLOTS)
_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Process:
    """A live process as /proc shows it."""

    pid: int
    ppid: int
    uid: int  # real uid
    state: str  # e.g. "S (sleeping)"
    started: float  # seconds since boot (CLOCK_BOOTTIME)
    args: str

    def __str__(self) -> str:
        return f"{self.uid} {self.pid} {self.ppid} {self.state.split()[0]} {self.args}"


def processes(uids: Container[int]) -> list[Process]:
    """Return the live (not zombie, not dead) processes whose real uid is in `uids`."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            status = Path(entry.path, "status").read_text()
            stat = Path(entry.path, "stat").read_text()
            args = Path(entry.path, "cmdline").read_bytes()
        except OSError:
            continue  # gone meanwhile
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        uid, state = int(fields["Uid"].split()[0]), fields["State"].strip()
        if uid not in uids or state.startswith(("Z", "X")):
            continue  # a zombie holds nothing and runs nothing; its parent or init reaps it
        started = int(stat.rsplit(")", 1)[1].split()[19]) / _TICKS
        shown = args.replace(b"\0", b" ").decode(errors="replace").strip()
        found.append(Process(int(entry.name), int(fields["PPid"]), uid, state, started, shown))
    return found


def lock_holders(lock_dir: Path) -> dict[int, set[int]]:
    """Map each uid whose slot lock is held now to the pids that hold it (from /proc/locks)."""
    files = {}
    for path in lock_dir.glob("*.lock") if lock_dir.is_dir() else []:
        try:
            st = path.stat()
        except OSError:
            continue
        files[(os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)] = int(path.stem)
    held: dict[int, set[int]] = {}
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()  # 1: FLOCK  ADVISORY  WRITE 1234 00:1a:5678 0 EOF
        if len(fields) < 6 or fields[1] != "FLOCK":
            continue  # a POSIX lock, or a waiter ("1: -> FLOCK ..."), which holds nothing
        major, minor, inode = fields[5].split(":")
        uid = files.get((int(major, 16), int(minor, 16), int(inode)))
        if uid is not None:
            held.setdefault(uid, set()).add(int(fields[4]))
    return held


def _listed(
    lock_dir: Path, listing: Callable[[], list[tuple[int, str]]]
) -> tuple[list[tuple[int, str]], set[int], set[int]]:
    """Return what `listing` finds (uid, description), the uids other processes hold, and ours.

    The locks are read before and after the listing: a uid another process took or gave back
    while we looked is theirs (a whole run, from lock to unlock, outlasts a listing).
    """
    me = os.getpid()
    before = lock_holders(lock_dir)
    found = listing()
    after = lock_holders(lock_dir)
    held = [(uid, pids) for snapshot in (before, after) for uid, pids in snapshot.items()]
    return found, {u for u, pids in held if pids - {me}}, {u for u, pids in held if me in pids}


def settled(check: Callable[[], list[str]], tries: int = 30) -> list[str]:
    """Return what `check` finds once it finds nothing, or what it still finds after 3 s
    (stretched to the host's slowness).

    Killed processes take a moment to leave the process table, and a slot being re-armed is
    briefly between states.
    """
    for _ in range(int(slowness.scaled(tries)) - 1):
        found = check()
        if not found:
            return found
        time.sleep(0.1)
    return check()


def run_cgroups(uids: range) -> list[tuple[int, str]]:
    """Return the run cgroups (and warm zygotes' cgroups) named after a uid in `uids`."""
    found = []
    for name in cgroups.names():
        head = name.split("-")[0]
        if head.isdigit() and int(head) in uids:
            found.append((int(head), name))
    return found


def _pids(group: str) -> list[str]:
    return [str(pid) for pid in cgroups.members(group) or []]  # [] once removed


def bwrap_leftovers(sandbox: BwrapSandbox) -> list[str]:
    """Return what this process's bwrap runs left: processes, cgroups, tmpfs mounts, dirs.

    A launcher armed by `sandbox` for its next run (one waiting sh in its cgroup) is no
    leftover. A uid held by another process, or by another sandbox of ours (its armed
    launchers), is not looked at: a run gives its uid back only once all of it is gone, so
    anything of `sandbox`'s runs left is under a uid that nobody holds.
    """
    armed = set(sandbox.armed())
    armed_uids = {_uid_of(name) for name in armed}
    runs = str(sandbox.runs_dir)

    def listing() -> list[tuple[int, str]]:
        found = [(p.uid, f"process {p}") for p in processes(BWRAP_UIDS)]
        found += [
            (uid, f"cgroup {group}")
            for uid, group in run_cgroups(BWRAP_UIDS)
            if group not in armed or len(_pids(group)) > 1
        ]
        mounts = Path("/proc/self/mounts").read_text()
        for path in re.findall(rf"\S*{re.escape(runs)}/\S+", mounts):
            found.append((_uid_of(path.split(runs + "/", 1)[1]), f"mount {path}"))
        if sandbox.runs_dir.is_dir():
            found += [(_uid_of(p.name), f"dir {p}") for p in sandbox.runs_dir.iterdir()]
        return found

    found, theirs, ours = _listed(sandbox.locks_dir, listing)
    others = theirs | (ours - armed_uids)
    return [what for uid, what in found if uid not in others]


def _uid_of(name: str) -> int:
    """Return the uid a run's dir or cgroup is named after (`61042-9f3a...`), -1 if none."""
    head = name.split("/")[0].split("-")[0]
    return int(head) if head.isdigit() else -1


def own_warm_uids() -> set[int]:
    """Return the warm slot uids whose lock this process holds (other pools are not ours)."""
    me = os.getpid()
    return {uid for uid, pids in lock_holders(WARM_LOCKS).items() if me in pids}


def warm_leftovers(pool: WarmSandbox | None = None) -> list[str]:
    """Return what warm runs left: anything beyond each slot's zygote and its armed runs.

    Only the slots of `pool` (by default, every pool of this process) are looked at.
    A live slot has, under its uid, bwrap, bwrap's init and the zygote (outside any run
    cgroup), and its armed runs: each a cgroup holding a supervisor and a program process.
    Dead and dying processes (killed, not yet reaped) are no leftovers; their cgroups go soon.
    """
    ours = {slot.uid for slot in pool.slots()} if pool is not None else own_warm_uids()
    found: list[str] = []
    groups: dict[int, list[str]] = {}
    for uid, group in run_cgroups(WARM_UIDS):
        if uid in ours and group != zygote_group(uid):
            groups.setdefault(uid, []).append(group)
    for uid, names in groups.items():
        dead = ("State: Z", "State: X", "gone")
        live = {n: [p for p in _pids(n) if not _state(p).startswith(dead)] for n in names}
        # an ended run's cgroup, its processes killed, lingers until its keeper removes it
        armed = [n for n, pids in live.items() if pids]
        if len(armed) > MOST_ARMED:
            found.append(f"uid {uid} has {len(armed)} live run cgroups: {sorted(armed)}")
        found += [f"cgroup {n} holds {len(pids)} live processes" for n, pids in live.items()
                  if len(pids) > 2]  # fmt: skip
    zygote_cgroup: dict[int, list[Process]] = {}
    for process in processes(ours):
        group = cgroups.group_of(process.pid)
        if group is None:  # every process of a slot is in its zygote's cgroup or a run's
            found.append(
                f"process {process} outside its slot's cgroups ({_state(str(process.pid))})"
            )
        elif group == zygote_group(process.uid):
            zygote_cgroup.setdefault(process.uid, []).append(process)
    for found_here in zygote_cgroup.values():
        # bwrap, bwrap's init, the zygote, and while a run is being armed, its supervisor:
        # a child of the zygote that the host has yet to move into the run's cgroup
        zygotes = {p.pid for p in found_here if "-m zygote" in p.args and "bwrap" not in p.args}
        arming = [p for p in found_here if p.ppid in zygotes]
        if len(found_here) > 3 + min(len(arming), 1):
            found += [f"process {p} ({_state(str(p.pid))})" for p in found_here]
    return found


def _state(pid: str) -> str:
    """Return a process's state, namespace pids and kernel wait channel, for messages."""
    try:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
        wchan = Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return "gone"
    keep = [line for line in status if line.startswith(("State", "NSpid", "PPid"))]
    return f"{' '.join(' '.join(line.split()) for line in keep)} wchan {wchan}"


def boot_clock() -> float:
    """Return the seconds since boot, on the clock of a process's start time in /proc."""
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def released_leftovers(uids: Iterable[int], released_at: float) -> list[str]:
    """Return what is left under warm uids a closed pool of ours gave back at `released_at`.

    Another pool may take such a uid at once: then only processes started before the
    release are ours (the cgroups of that uid are its pool's), else everything under the uid.
    """
    mine = set(uids)

    def listing() -> list[tuple[int, str]]:
        found = [(p.uid, f"process {p}") for p in processes(mine)]
        return found + [(uid, f"cgroup {g}") for uid, g in run_cgroups(WARM_UIDS) if uid in mine]

    found, taken, _ = _listed(WARM_LOCKS, listing)
    left = [what for uid, what in found if uid not in taken]
    tick = int(released_at * _TICKS)  # a process started in the tick of the release is theirs
    older = [p for p in processes(taken & mine) if int(p.started * _TICKS) < tick]
    return left + [f"process {p}" for p in older]


def docker_leftovers(sandbox: DockerSandbox) -> list[str]:
    """Return what `sandbox`'s runs left: its containers, accounting cgroups and processes.

    A process is found by its accounting cgroup (or, with the systemd cgroup driver, its run's
    slice: workers/sandbox/slices.py), named after its container.
    """
    instance = sandbox.instance
    listed = subprocess.run(
        ["docker", "ps", "-a", "--filter", f"label={docker_backend.INSTANCE_LABEL}={instance}",
         "--format", "{{.Names}}"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    found = [f"container {name}" for name in listed.stdout.split()]
    found += [f"cgroup {name}" for name in cgroups.names("docker-") if instance in name]
    found += [f"slice {name}" for name in slices.names() if instance in name]
    uids = range(docker_backend.FIRST_UID, docker_backend.FIRST_UID + docker_backend.UIDS)
    for process in processes(uids):
        try:
            cgroup = Path(f"/proc/{process.pid}/cgroup").read_text()
        except OSError:
            continue
        if instance in cgroup:  # under its run's accounting cgroup, named after the container
            found.append(f"process {process}")
    return found
