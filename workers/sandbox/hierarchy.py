"""Where this process's run cgroups live: the cgroup version, and the home of its runs.

cgroup v1 (one hierarchy per controller): a `codeblanks` directory at the top of each
hierarchy the sandbox uses (memory, pids, cpu, cpuacct).

cgroup v2 (one tree, as systemd hosts boot: Debian 12, Ubuntu 22.04 and later): the runs belong
in a subtree delegated to the worker, not at the top of a tree that systemd manages. systemd
marks a delegated unit's cgroup (`Delegate=yes`: a service, or `systemd-run --scope -p
Delegate=yes`) with the extended attribute trusted.delegate (systemd 251 and later;
user.delegate too for a user's units). cgroup v2 lets a cgroup whose children have controllers
hold no process itself ("no internal processes"), so the first worker in the subtree moves
every process of it into a leaf, and the runs go beside that leaf:

    <delegated cgroup>/          memory, pids and cpu enabled for its children
        codeblanks-worker/       the worker and whatever else the unit runs
        codeblanks/              the runs' parent, the same controllers enabled
            62001-1a2b3c4d/      a run (a warm slot's zygote: 62001-zygote)

The compose worker's entrypoint lays out its container's own cgroup so (userns_entry.py).
Without delegation (a login session, a service without Delegate=yes) a root worker keeps its
runs at the top of the tree, /sys/fs/cgroup/codeblanks, as before: that works (the root cgroup
is exempt from the rule) but sits outside every unit, so `codeblanks doctor` warns.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
PREFIX = "codeblanks"  # every run cgroup is a child of this one, in each hierarchy
LEAF = "codeblanks-worker"  # v2, delegated: where the subtree's own processes live
CONTROLLERS = ("memory", "pids", "cpu")  # v2: what runs are limited by (cpu is optional)
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct")
_DELEGATE_XATTRS = ("trusted.delegate", "user.delegate")


@dataclass(frozen=True)
class Home:
    """Where run cgroups go: one parent per v1 hierarchy, or one in the v2 tree."""

    version: int  # 1 or 2
    parents: dict[str, Path]  # each hierarchy (v2: "all") -> the directory of the run cgroups
    relative: str  # the parents' path from the top of their tree, e.g. "/codeblanks"
    delegated: bool = False  # v2: inside a delegated subtree, not at the top of the tree
    settled: bool = True  # v2 delegated: the subtree's processes are in their leaf already
    problem: str | None = None  # why no run cgroup can be made here, or None
    controllers: frozenset[str] = field(default_factory=frozenset)  # v2: enabled for runs

    @property
    def base(self) -> Path:
        """Return the cgroup that holds the runs' parent (v2; v1: the pids hierarchy's)."""
        return next(iter(self.parents.values())).parent


def find(root: Path = ROOT, self_cgroup: str | None = None) -> Home:
    """Say where run cgroups go under the tree mounted at `root`, without changing anything.

    `self_cgroup` is the text of /proc/self/cgroup (read when not given).
    """
    if not (root / "cgroup.controllers").exists():
        roots = v1_roots(root)
        problem = None
        for controller in ("memory", "pids"):
            if controller not in roots:
                problem = f"the cgroup v1 {controller} controller is not mounted"
        parents = {c: base / PREFIX for c, base in roots.items()}
        return Home(1, parents or {"pids": root / "pids" / PREFIX}, f"/{PREFIX}", problem=problem)
    mine = own(root, self_cgroup)
    if mine is not None and mine.name == LEAF and (
        (mine.parent / PREFIX).is_dir() or delegated(mine.parent)
    ):  # settled: by an earlier worker, or by this one just now (before its runs' parent)
        return _v2_home(root, mine.parent, delegated=True, settled=True)
    if mine is not None and mine != root and delegated(mine):
        return _v2_home(root, mine, delegated=True, settled=False)
    return _v2_home(root, root, delegated=False, settled=True)


def _v2_home(root: Path, base: Path, delegated: bool, settled: bool) -> Home:
    relative = "/" + str((base / PREFIX).relative_to(root))
    have = set(_read(base / "cgroup.controllers").split())
    enabled = frozenset(c for c in CONTROLLERS if c in have)
    missing = [c for c in ("memory", "pids") if c not in have]
    problem = None
    if missing:
        problem = f"the cgroup v2 tree gives {base} no {' and no '.join(missing)} controller"
    return Home(2, {"all": base / PREFIX}, relative, delegated, settled, problem, enabled)


def delegated(cgroup: Path) -> bool:
    """Return whether systemd marked the cgroup as delegated (trusted.delegate or user.delegate)."""
    for name in _DELEGATE_XATTRS:
        with contextlib.suppress(OSError):
            if os.getxattr(cgroup, name).strip(b"\0") in (b"1", b"yes", b"true"):
                return True
    return False


@functools.cache
def home() -> Home:
    """Return this process's home of run cgroups, settling a delegated subtree on first use."""
    found = find()
    if found.problem is None and found.version == 2:
        try:
            if not found.settled:
                settle(found.base)
                found = find()
            prepare(found)
        except OSError as exc:
            return Home(2, found.parents, found.relative, found.delegated, False,
                        f"cannot prepare the cgroup subtree {found.base}: {exc}",
                        found.controllers)  # fmt: skip
    return found


def settle(base: Path) -> None:
    """Move every process of the delegated cgroup `base` into its leaf (v2's rule)."""
    leaf = base / LEAF
    leaf.mkdir(exist_ok=True)
    for _ in range(100):  # a process may fork while we move its parent
        pids = _read(base / "cgroup.procs").split()
        if not pids:
            return
        for pid in pids:
            try:
                (leaf / "cgroup.procs").write_text(pid)
            except OSError as exc:
                if exc.errno != errno.ESRCH:  # it exited meanwhile
                    raise
    raise OSError(errno.EBUSY, f"processes keep appearing in {base}")


def prepare(found: Home) -> None:
    """Make the runs' parent (v2: with the controllers enabled for its children and its own)."""
    parent = found.parents["all"]
    _enable(found.base, found.controllers)
    parent.mkdir(exist_ok=True)
    _enable(parent, found.controllers)


def _enable(cgroup: Path, controllers: frozenset[str]) -> None:
    """Enable the controllers for the cgroup's children, unless they are already."""
    if not controllers <= set(_read(cgroup / "cgroup.subtree_control").split()):
        (cgroup / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in controllers))


def v1_roots(root: Path = ROOT) -> dict[str, Path]:
    """Map each v1 controller the sandbox uses to its hierarchy, once per real hierarchy."""
    roots: dict[str, Path] = {}
    for controller in V1_CONTROLLERS:
        base = root / controller
        if base.is_dir():
            real = base.resolve()  # "cpu" and "cpuacct" are often links to one "cpu,cpuacct"
            if real not in roots.values():
                roots[controller] = real
    return roots


def own(root: Path = ROOT, self_cgroup: str | None = None) -> Path | None:
    """Return this process's cgroup v2 directory under `root`, None if outside our view.

    `self_cgroup` is the text of /proc/self/cgroup (read when not given).
    """
    if self_cgroup is None:
        self_cgroup = _read(Path("/proc/self/cgroup"))
    for line in self_cgroup.splitlines():
        if line.startswith("0::"):
            path = line[3:].strip()
            return None if path.startswith("/..") else root / path.lstrip("/")
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
