import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from core.lessons import Catalog, load_catalog
from service.settings import Settings
from tests.servers import postgres_cluster, redis_server  # noqa: F401  (fixtures)
from workers.sandbox.bwrap import BwrapSandbox
from workers.sandbox.runtime import Runtime
from workers.sandbox.slot import MOST_ARMED
from workers.sandbox.warm import FIRST_UID as WARM_FIRST_UID
from workers.sandbox.warm import WarmSandbox

REPO = Path(__file__).resolve().parent.parent
LESSONS = REPO / "lessons"
SEED = LESSONS / "expert" / "what-is-attention"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--screenshots",
        metavar="DIR",
        help="where the browser tests save their screenshots (docs/screenshots refreshes the "
        "README's); by default a temporary directory, so that tests leave the tree clean",
    )


@pytest.fixture(scope="session")
def screenshots(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory the browser tests' screenshots go to."""
    chosen = request.config.getoption("--screenshots")
    found = Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")
    found.mkdir(parents=True, exist_ok=True)
    return found


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
    armed = set(sandbox.armed())  # a launcher waiting for the next run: one root sh, no files
    for controller in ("memory", "pids"):
        base = Path("/sys/fs/cgroup") / controller / "codeblanks"
        if base.is_dir():
            found += [
                f"cgroup {p}"
                for p in base.iterdir()
                if p.is_dir() and not _warm(p.name) and (p.name not in armed or len(_pids(p)) > 1)
            ]
    mounts = Path("/proc/self/mounts").read_text()
    found += [f"mount {m}" for m in re.findall(r"\S*/run/codeblanks/runs/\S+", mounts)]
    if sandbox.runs_dir.is_dir():
        found += [f"dir {p}" for p in sandbox.runs_dir.iterdir()]
    return found


def _warm(name: str) -> bool:
    """Return whether a run cgroup belongs to a warm slot (warm_leftovers checks those)."""
    return name.split("-")[0].isdigit() and WARM_FIRST_UID <= int(name.split("-")[0]) < 62256


def warm_leftovers() -> list[str]:
    """Return what warm runs left: anything beyond each slot's zygote and its one armed run.

    A live slot has, under its uid, bwrap, bwrap's init and the zygote (outside any run
    cgroup), and its armed runs: each a cgroup holding a supervisor and a program process.
    Dead and dying processes (killed, not yet reaped) are no leftovers; their cgroups go soon.
    """
    found: list[str] = []
    ours = _own_warm_uids()
    base = Path("/sys/fs/cgroup/pids/codeblanks")
    groups: dict[int, list[Path]] = {}
    for group in base.iterdir() if base.is_dir() else []:
        if group.is_dir() and _warm(group.name) and int(group.name.split("-")[0]) in ours:
            groups.setdefault(int(group.name.split("-")[0]), []).append(group)
    for uid, dirs in groups.items():
        dead = ("State: Z", "State: X", "gone")
        live = {d: [p for p in _pids(d) if not _state(p).startswith(dead)] for d in dirs}
        # an ended run's cgroup, its processes killed, lingers until its keeper removes it
        armed = [d for d, pids in live.items() if pids]
        if len(armed) > MOST_ARMED:
            found.append(f"uid {uid} has {len(armed)} live run cgroups: {sorted(map(str, armed))}")
        found += [f"cgroup {d} holds {len(pids)} live processes" for d, pids in live.items()
                  if len(pids) > 2]  # fmt: skip
    ps = subprocess.run(
        ["ps", "-eo", "uid=,pid=,ppid=,stat=,args="], capture_output=True, text=True
    )
    outside: dict[int, list[list[str]]] = {}
    for line in ps.stdout.splitlines():
        fields = line.split(None, 4)
        if int(fields[0]) in ours and not fields[3].startswith("Z"):
            try:
                cgroup = Path(f"/proc/{fields[1]}/cgroup").read_text()
            except OSError:
                continue
            if ":/codeblanks/" not in cgroup:
                outside.setdefault(int(fields[0]), []).append(fields)
    for processes in outside.values():
        # bwrap, bwrap's init, the zygote, and while a run is being armed, its supervisor:
        # a child of the zygote that the host has yet to move into the run's cgroup
        zygotes = {p[1] for p in processes if "-m zygote" in p[4] and "bwrap" not in p[4]}
        arming = [p for p in processes if p[2] in zygotes]
        if len(processes) > 3 + min(len(arming), 1):
            found += [f"process {' '.join(p)} ({_state(p[1])})" for p in processes]
    return found


def _pids(group: Path) -> list[str]:
    try:
        return (group / "cgroup.procs").read_text().split()
    except OSError:
        return []  # removed meanwhile


def _state(pid: str) -> str:
    """Return a process's state, namespace pids and kernel wait channel, for messages."""
    try:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
        wchan = Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return "gone"
    keep = [line for line in status if line.startswith(("State", "NSpid", "PPid"))]
    return f"{' '.join(' '.join(line.split()) for line in keep)} wchan {wchan}"


def _own_warm_uids() -> set[int]:
    """Return the warm slot uids whose lock this process holds (other pools are not ours)."""
    held = set()
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()  # 1: FLOCK  ADVISORY  WRITE 1234 00:1a:5678 0 EOF
        if len(fields) > 5 and fields[1] == "FLOCK" and fields[4] == str(os.getpid()):
            held.add(int(fields[5].rsplit(":", 1)[1]))
    locks = Path("/run/codeblanks/warm/slots")
    return {int(p.stem) for p in locks.glob("*.lock") if p.stat().st_ino in held}


@pytest.fixture(scope="session")
def warm() -> Iterator[WarmSandbox]:
    """The real warm pool on the configured runtime tree, started; closed after the session."""
    sandbox = WarmSandbox(Runtime(Settings.from_env().runtime_dir))
    sandbox.check()
    sandbox.start()
    yield sandbox
    sandbox.close()


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


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    """The store: SQLite in the test's temp dir (tests/service/store runs on PostgreSQL too)."""
    return f"sqlite:///{tmp_path / 'codeblanks.db'}"


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    """Settings for one test: its own instance dir and database; Redis refuses connections."""
    return replace(
        Settings.from_env(),
        instance_dir=tmp_path / "instance",
        database_url=database_url,
        redis_url="redis://127.0.0.1:9/0",
    )


@pytest.fixture
def app(settings: Settings):
    """The Flask app on a fresh, migrated database."""
    from service.web import create_app

    app = create_app({"TESTING": True, "SETTINGS": settings})
    yield app
    app.extensions["store"].dispose()


@pytest.fixture
def client(app):
    """A test client of the app."""
    return app.test_client()


@pytest.fixture(scope="session")
def docker_daemon(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A Docker daemon (started if none answers, and left running) and the runner image."""
    from tests import dockerd

    try:
        dockerd.start(tmp_path_factory.mktemp("dockerd") / "dockerd.log")
        dockerd.build_image()
    except RuntimeError as exc:
        pytest.fail(str(exc))
