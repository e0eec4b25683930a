import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from core.lessons import Catalog, load_catalog
from service.settings import Settings
from workers.sandbox.bwrap import BwrapSandbox
from workers.sandbox.runtime import Runtime

REPO = Path(__file__).resolve().parent.parent
LESSONS = REPO / "lessons"
SEED = LESSONS / "expert" / "what-is-attention"


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog(LESSONS)


@pytest.fixture
def seed_copy(tmp_path: Path) -> Path:
    """A writable copy of the seed lesson, at tmp/expert/what-is-attention."""
    target = tmp_path / "expert" / "what-is-attention"
    shutil.copytree(SEED, target)
    return target


@pytest.fixture(scope="session")
def bwrap() -> BwrapSandbox:
    """The real bwrap backend on the configured runtime tree; fails loudly if unusable."""
    sandbox = BwrapSandbox(Runtime(Settings.from_env().runtime_dir))
    sandbox.check()
    return sandbox


def sandbox_leftovers(sandbox: BwrapSandbox) -> list[str]:
    """Return anything a finished run left on the host: processes, cgroups, mounts, dirs."""
    found = []
    ps = subprocess.run(["ps", "-eo", "uid=,pid=,stat=,args="], capture_output=True, text=True)
    for line in ps.stdout.splitlines():
        uid, _, stat = line.split()[:3]
        # a zombie holds nothing and runs nothing; the host's init reaps it when it gets to it
        if 61000 <= int(uid) < 61256 and not stat.startswith("Z"):
            found.append(f"process {line.strip()}")
    for controller in ("memory", "pids"):
        base = Path("/sys/fs/cgroup") / controller / "codeblanks"
        if base.is_dir():
            found += [f"cgroup {p}" for p in base.iterdir() if p.is_dir()]
    mounts = Path("/proc/self/mounts").read_text()
    found += [f"mount {m}" for m in re.findall(r"\S*/run/codeblanks/runs/\S+", mounts)]
    if sandbox.runs_dir.is_dir():
        found += [f"dir {p}" for p in sandbox.runs_dir.iterdir()]
    return found


@pytest.fixture
def clean_host(bwrap: BwrapSandbox):
    """Assert that the test's runs left nothing behind."""
    yield
    for _ in range(20):  # killed processes take a moment to be gone from the table
        if not sandbox_leftovers(bwrap):
            break
        time.sleep(0.1)
    assert sandbox_leftovers(bwrap) == []
    assert os.path.exists("/etc/hostname")
