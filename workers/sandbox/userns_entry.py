"""The compose worker's entrypoint: root for a moment, then root of its own user namespace only.

The warm pool needs what an unprivileged host user lacks: to run its slots' zygotes under uids
of their own, to kill them, and to own a cgroup subtree. The container starts as its root
(capabilities CHOWN, SETUID and SETGID only, see docker-compose.yml), and this module, as the
container's pid 1:

1. cgroup v1: makes the pool's cgroup directory in each hierarchy of the host's cgroup tree
   (mounted at HOST_CGROUP) and gives it to the codeblanks user. cgroup v2: the container's own
   cgroup is the worker's delegated subtree (Docker makes a cgroup namespace rooted there, and
   with the systemd driver a scope with Delegate=yes): it mounts that cgroup, moves itself into
   a leaf of it and lays it out as hierarchy.py describes (the runs' parent beside the leaf,
   memory, pids and cpu enabled), and gives the leaf and the runs' parent to the codeblanks
   user. The host's tree is not used at all there, and whatever the runs leave goes with the
   container;
2. forks a child that makes a user namespace and a mount namespace of its own; this process
   writes the child's uid and gid maps: uid 0 inside is the codeblanks user outside, and the
   sandbox's slot uids inside are host uids shifted by CODEBLANKS_SLOT_UID_SHIFT (apart from
   any slot uid a codeblanks on the host itself uses); host uid 0 is not mapped at all;
3. the child becomes uid 0 of its namespace (with every capability over it, none over the
   host), puts the pool's cgroup directories where the sandbox looks for its own
   (/sys/fs/cgroup/<hierarchy>/codeblanks, in its mount namespace only), and execs the worker;
4. this process drops to the codeblanks user and stays as pid 1: it forwards signals (SIGTERM:
   Celery's warm shutdown), reaps orphans, and exits with the worker's status.

The pool's name comes from the lock volume shared by every worker replica of one deployment
(`pool-id` beside the slots' lock files): replicas share it, and so take distinct slot uids
and sweep each other's leftovers, while another deployment on the same host gets its own.

The shift is the settings' (service.settings, read once as the program starts, in its
`__main__` block): this module's functions take what they need as arguments.

Usage: python -m workers.sandbox.userns_entry COMMAND [ARG ...]
"""

from __future__ import annotations

import os
import pwd
import secrets
import signal
import sys
from pathlib import Path

from workers.sandbox import hierarchy, scratch, warm
from workers.sandbox.zygote import linux

HOST_CGROUP = Path("/run/codeblanks/host-cgroup")  # the host's /sys/fs/cgroup, bind-mounted
CGROUP = Path("/sys/fs/cgroup")  # where the sandbox looks, in the worker's mount namespace
STATE = Path("/run/codeblanks")
OWN_CGROUP = STATE / "cgroup"  # v2: the container's own cgroup, mounted writable
PROC = STATE / "proc"  # a procfs without Docker's masks (see mount_proc)
LOCKS = STATE / "slots"  # the shared lock volume; also mounted at STATE/warm/slots
USER = "codeblanks"
# the warm slots' uids, and the cold bwrap backend's (warm's fallback)
FIRST_SLOT_UID = min(scratch.FIRST_UID, warm.FIRST_UID)
SLOT_UIDS = max(scratch.FIRST_UID, warm.FIRST_UID) + scratch.SLOTS - FIRST_SLOT_UID
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct")  # what cgroups.py uses
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT, signal.SIGHUP, signal.SIGUSR1)
_SETUP_FAILED = 125


def id_map(outside: int, shift: int) -> str:
    """Return the uid (or gid) map: 0 -> `outside`, the slot uids -> themselves + `shift`."""
    first = FIRST_SLOT_UID + shift
    if outside <= 0 or first <= 0:
        raise ValueError("host id 0 is never mapped")
    if first <= outside < first + SLOT_UIDS:
        raise ValueError(f"host id {outside} would be mapped twice")
    return f"0 {outside} 1\n{FIRST_SLOT_UID} {FIRST_SLOT_UID + shift} {SLOT_UIDS}\n"


def pool_id(locks: Path) -> str:
    """Return the pool's name, shared through the lock volume (made by the first replica)."""
    path = locks / "pool-id"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        for _ in range(100):  # another replica is writing it right now
            text = path.read_text().strip()
            if text:
                return text
            os.sched_yield()
        raise RuntimeError(f"{path} stays empty") from None
    name = secrets.token_hex(6)
    with os.fdopen(fd, "w") as handle:
        handle.write(name + "\n")
    return name


def v1_hierarchies(host: Path) -> dict[str, str]:
    """Map each controller cgroups.py uses to the name of its hierarchy's directory."""
    found: dict[str, str] = {}
    for controller in V1_CONTROLLERS:
        base = host / controller
        if base.is_dir():
            found[controller] = base.resolve().name  # "cpu" -> "cpu,cpuacct"
    return found


def prepare_cgroups(host: Path, pool: str, uid: int, gid: int) -> None:
    """Make the worker's cgroup directories and give them to uid:gid (as root; see the doc)."""
    if (host / "cgroup.controllers").exists():
        prepare_v2(OWN_CGROUP, uid, gid)
        return
    for name in sorted(set(v1_hierarchies(host).values())):
        directory = host / name / pool
        directory.mkdir(exist_ok=True)
        os.chown(directory, uid, gid)  # its children and their files inherit the owner


def prepare_v2(mountpoint: Path, uid: int, gid: int) -> None:
    """Mount our cgroup namespace's root (the container's cgroup), settle in it, give it away.

    Only the leaf (where the worker's processes are), the runs' parent, and the container
    cgroup's cgroup.procs (which a move between the two writes to as well: the kernel's rule
    for their common ancestor) become the worker's; the container's limits stay root's.
    """
    mountpoint.mkdir(exist_ok=True)
    linux.mount("cgroup2", str(mountpoint), "cgroup2", linux.MS_NOSUID | linux.MS_NODEV)
    base = hierarchy.own(mountpoint)
    if base is None:
        raise RuntimeError("cannot find the container's own cgroup in /proc/self/cgroup")
    hierarchy.settle(base)
    (base / hierarchy.PREFIX).mkdir(exist_ok=True)
    home = hierarchy.find(mountpoint)
    if home.problem is not None or not home.delegated:
        raise RuntimeError(home.problem or f"cannot lay out the container's cgroup {base}")
    hierarchy.prepare(home)
    given = [base / "cgroup.procs"]
    for directory in (base / hierarchy.LEAF, base / hierarchy.PREFIX):
        given.append(directory)
        given += [
            directory / n for n in ("cgroup.procs", "cgroup.subtree_control", "cgroup.threads")
        ]
    for path in given:
        os.chown(path, uid, gid)


def mount_cgroup_view(host: Path, pool: str) -> None:
    """In our own mount namespace, show the pool's directories where cgroups.py looks."""
    linux.mount("none", "/", None, linux.MS_REC | linux.MS_PRIVATE)
    if (host / "cgroup.controllers").exists():  # v2: the container's cgroup, laid out
        linux.mount(str(OWN_CGROUP), str(CGROUP), None, linux.MS_BIND)
    else:
        hierarchies = v1_hierarchies(host)
        linux.mount("tmpfs", str(CGROUP), "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, "mode=0755")
        for name in sorted(set(hierarchies.values())):
            (CGROUP / name / "codeblanks").mkdir(parents=True)
            linux.mount(
                str(host / name / pool), str(CGROUP / name / "codeblanks"), None, linux.MS_BIND
            )
        for controller, name in hierarchies.items():
            if controller != name:
                (CGROUP / controller).symlink_to(name)
        remount = (
            linux.MS_REMOUNT | linux.MS_BIND | linux.MS_RDONLY | linux.MS_NOSUID | linux.MS_NODEV
        )
        linux.mount("none", str(CGROUP), None, remount)
    # the rest of the host's tree is no business of the worker's (it could only read it)
    linux.mount(
        "tmpfs", str(host), "tmpfs", linux.MS_RDONLY | linux.MS_NOSUID | linux.MS_NODEV, "mode=0755"
    )


def mount_proc(target: Path) -> None:
    """Mount a procfs with nothing mounted over it at `target` (as root with CAP_SYS_ADMIN).

    Docker masks parts of the container's /proc (/proc/kcore, /proc/sys read-only, ...), and
    the kernel lets a user namespace mount a new procfs (bwrap's --proc, each sandbox's own)
    only where a procfs is fully visible already (mount_too_revealing). This one is; the
    worker, never host root, can write nothing of it that is root's.
    """
    target.mkdir(exist_ok=True)
    linux.mount("proc", str(target), "proc", linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC)


def _child(argv: list[str], ready: int, mapped: int, pool: str) -> None:
    """In the forked child: new namespaces, wait for the maps, become their root, exec."""
    try:
        linux.unshare(linux.CLONE_NEWUSER | linux.CLONE_NEWNS)
        os.write(ready, b"u")
        if os.read(mapped, 1) != b"m":
            os._exit(_SETUP_FAILED)  # the parent failed to map us: it says why
        os.setgroups([])
        os.setresgid(0, 0, 0)
        os.setresuid(0, 0, 0)
        mount_cgroup_view(HOST_CGROUP, pool)
        # and that procfs as the worker's /proc: bwrap's --disable-userns (the cold backend)
        # writes its own namespace's /proc/sys/user/max_user_namespaces, read-only in Docker's
        linux.mount(str(PROC), "/proc", None, linux.MS_BIND | linux.MS_REC)
        os.execvp(argv[0], argv)
    except BaseException as exc:  # a forked child must never return
        print(f"userns_entry: cannot start {argv[0]}: {exc}", file=sys.stderr, flush=True)
    os._exit(_SETUP_FAILED)


def main(argv: list[str], shift: int) -> int:
    """Set up, start the command in its user namespace, and wait for it (see the module doc);
    slot uid u inside runs as host uid u + `shift`."""
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("userns_entry: must start as root (the container's)", file=sys.stderr)
        return _SETUP_FAILED
    user = pwd.getpwnam(USER)
    uid, gid = user.pw_uid, user.pw_gid
    made = (STATE, STATE / "warm", LOCKS, STATE / "warm" / "slots")
    for directory in made:  # all before any is given away: root has no DAC_OVERRIDE here
        directory.mkdir(parents=True, exist_ok=True)
    for directory in made:
        os.chown(directory, uid, gid)
    os.setresgid(-1, gid, -1)  # the lock volume is the codeblanks user's: read it as that user
    os.setresuid(-1, uid, -1)
    try:
        pool = f"codeblanks-pool-{pool_id(LOCKS)}"
    finally:
        os.setresuid(-1, 0, -1)
        os.setresgid(-1, 0, -1)
    try:
        prepare_cgroups(HOST_CGROUP, pool, uid, gid)
    except (OSError, RuntimeError) as exc:
        print(f"userns_entry: cannot set up the worker's cgroups: {exc} (docs/operations.md, "
              "'cgroup v2 hosts')", file=sys.stderr)  # fmt: skip
        return _SETUP_FAILED
    mount_proc(PROC)

    ready_r, ready_w = os.pipe()
    mapped_r, mapped_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(ready_r)
        os.close(mapped_w)
        _child(argv, ready_w, mapped_r, pool)
    os.close(ready_w)
    os.close(mapped_r)
    if os.read(ready_r, 1) != b"u":
        os.waitpid(child, 0)
        return _SETUP_FAILED
    try:
        Path(f"/proc/{child}/uid_map").write_text(id_map(uid, shift))
        Path(f"/proc/{child}/gid_map").write_text(id_map(gid, shift))
    except OSError as exc:
        print(f"userns_entry: cannot map the worker's user namespace: {exc}", file=sys.stderr)
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        return _SETUP_FAILED
    os.write(mapped_w, b"m")
    os.close(mapped_w)
    # nothing in the container stays host root: from here on this process is the codeblanks
    # user too, and needs no more than to signal and reap its own
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    return _forward_and_reap(child)


def _forward_and_reap(child: int) -> int:
    """Forward signals to the child, reap every orphan, return the child's exit status."""

    def forward(signum: int, _frame: object) -> None:
        try:
            os.kill(child, signum)
        except ProcessLookupError:
            pass

    for signum in FORWARDED:
        signal.signal(signum, forward)
    while True:
        pid, status = os.wait()
        if pid == child:
            if os.WIFSIGNALED(status):
                return 128 + os.WTERMSIG(status)
            return os.WEXITSTATUS(status)


if __name__ == "__main__":
    from service.settings import Settings  # two small modules: os, dataclasses, pathlib only

    try:
        settings = Settings.from_env()
    except ValueError as exc:  # a setting that is no number: say which, before anything
        print(f"userns_entry: {exc}", file=sys.stderr)
        sys.exit(_SETUP_FAILED)
    sys.exit(main(sys.argv[1:], settings.slot_uid_shift))
