"""Where run cgroups live on this host, found by hierarchy.py (issue 26.1, 26.2).

On cgroup v2 a process in a delegated cgroup (systemd's Delegate=yes marks it with the
trusted.delegate xattr) moves every process of it into a leaf, and its runs go beside that
leaf: a test makes such a cgroup itself (root, at the top of the tree, marked as systemd
marks one), starts a child in it that runs a real warm pool, and reads where everything went.
On cgroup v1 the runs go under codeblanks/ in each hierarchy. The test checks whichever this
host runs: this development host is v1, the Debian 12 guest v2.
"""

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from workers.sandbox import hierarchy

pytestmark = pytest.mark.bwrap

CHILD = """
import json, os, sys
from core.runs import RunRequest
from service.settings import Settings
from workers.sandbox import cgroups, hierarchy
from workers.sandbox.runtime import Runtime
from workers.sandbox.warm import WarmSandbox

sys.stdin.read(1)  # the test has moved us into the delegated cgroup
probe = RunRequest({"main.py": b"print(open('/proc/self/cgroup').read())"}, "main.py")
with WarmSandbox(Runtime(Settings.from_env().runtime_dir), slots=1) as pool:
    result = pool.run(probe)
    home = hierarchy.home()
    uid = pool.slots()[0].uid
    report = {
        "run": result.stdout.decode(),
        "parents": [str(p) for p in home.parents.values()],
        "delegated": home.delegated,
        "me": cgroups.path_of(os.getpid()),
        "zygote": [cgroups.path_of(p) for p in cgroups.members(f"{uid}-zygote") or []],
    }
report["left"] = cgroups.names(f"{uid}-")  # the pool has closed
print(json.dumps(report))
"""


def _child_in(cgroup: Path | None) -> dict:
    """Run CHILD, moved into `cgroup` first (v2), and return its report."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    if cgroup is not None:
        (cgroup / "cgroup.procs").write_text(str(proc.pid))
    out, err = proc.communicate("go", timeout=600)
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def test_runs_go_where_this_hosts_cgroup_version_puts_them():
    root = hierarchy.ROOT
    if not (root / "cgroup.controllers").exists():
        report = _child_in(None)
        assert report["delegated"] is False
        assert {Path(p).parent.name for p in report["parents"]} >= {"memory", "pids"}
        assert all(Path(p).name == hierarchy.PREFIX for p in report["parents"])
        assert report["zygote"] and all("/codeblanks/" in p for p in report["zygote"]), report
        assert all(line.endswith(":/") for line in report["run"].split()), report["run"]
        assert report["left"] == [], report
        return
    unit = root / f"codeblanks-test-{secrets.token_hex(4)}.scope"
    unit.mkdir()
    try:
        os.setxattr(unit, "trusted.delegate", b"1")  # what systemd sets for Delegate=yes
        (root / "cgroup.subtree_control").write_text("+memory +pids +cpu")
        report = _child_in(unit)
        relative = "/" + unit.name
        assert report["delegated"] is True, report
        assert report["parents"] == [str(unit / hierarchy.PREFIX)]
        assert report["me"] == f"{relative}/{hierarchy.LEAF}"  # it moved itself into the leaf
        assert report["zygote"], report
        assert {p.rsplit("/", 1)[0] for p in report["zygote"]} == {f"{relative}/codeblanks"}
        assert report["run"].split() == ["0::/"]
        assert report["left"] == [], report  # the pool closed: nothing of it is left
    finally:
        for cgroup in sorted(unit.rglob("*"), key=lambda p: -len(p.parts)) + [unit]:
            if cgroup.is_dir():
                for pid in (cgroup / "cgroup.procs").read_text().split():
                    (root / "cgroup.procs").write_text(pid)
                cgroup.rmdir()
