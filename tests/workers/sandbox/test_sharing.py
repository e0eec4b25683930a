"""Sandbox tests share the machine: another codeblanks's runs are not their leftovers, and
nothing the tests' sandboxes do (runs, sweeps, closing) kills or removes any of it.

The other codeblanks is foreign.py in a process of its own, running runs in a loop on the same
backend (same uid ranges, cgroup parent, state dir and docker daemon).
"""

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from core.runs import RunRequest, Sandbox
from service.settings import Settings
from testkit import slowness
from tests.conftest import REPO
from tests.workers.sandbox.leftovers import (
    BWRAP_LOCKS,
    BWRAP_UIDS,
    WARM_LOCKS,
    WARM_UIDS,
    bwrap_leftovers,
    docker_leftovers,
    lock_holders,
    processes,
    run_cgroups,
    settled,
    warm_leftovers,
)
from workers.sandbox import cgroups, make_sandbox, slices
from workers.sandbox.bwrap import BwrapSandbox
from workers.sandbox.warm import WarmSandbox

CHECK_S = 8.0  # how long the checks run beside the other codeblanks's runs


@dataclass
class Foreign:
    """The other codeblanks: its process, who it is, and its runs as they are reported."""

    proc: subprocess.Popen[str]
    pid: int
    instance: str | None
    ok: int = 0
    bad: list[str] = field(default_factory=list)
    done: str = ""

    def follow(self) -> None:
        """Count the runs it reports, until it ends."""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("ok "):
                self.ok += 1
            elif line.startswith("done "):
                self.done = line.strip()
            else:
                self.bad.append(line.strip())

    def wait_runs(self, count: int, timeout_s: float = 120) -> None:
        """Wait until it has reported `count` more good runs (`timeout_s` on the reference
        host: the emulated guest at 75x took 120 s for two docker runs)."""
        target, ends = self.ok + count, time.monotonic() + slowness.scaled(timeout_s)
        while self.ok < target:
            assert self.proc.poll() is None and not self.bad, (self.bad, self.proc.returncode)
            assert time.monotonic() < ends, f"the other codeblanks made no progress: {self.ok}"
            time.sleep(0.05)


@pytest.fixture
def foreign(request: pytest.FixtureRequest) -> Iterator[Foreign]:
    """Another codeblanks on the backend under test, running runs in a loop."""
    backend = request.node.callspec.params["backend"]
    if backend == "docker":
        request.getfixturevalue("docker_daemon")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.workers.sandbox.foreign", backend],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None and proc.stdin is not None
    first = proc.stdout.readline()
    try:
        who = json.loads(first)
    except ValueError:
        proc.kill()
        pytest.fail(f"the other codeblanks did not start: {first}{proc.communicate()[0]}")
    other = Foreign(proc, who["pid"], who["instance"])
    follower = threading.Thread(target=other.follow, daemon=True)
    follower.start()
    try:
        other.wait_runs(3)
        yield other
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        follower.join(timeout=10)
        proc.stdout.close()


def _theirs(backend: str, other: Foreign) -> list[str]:
    """Return what the other codeblanks has on the host now: what unscoped checks would see."""
    if backend == "docker":
        listed = subprocess.run(
            ["docker", "ps", "-a", "--filter", f"name={other.instance}", "--format", "{{.Names}}"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        groups = [name for name in cgroups.names("docker-") if other.instance in name]
        groups += [name for name in slices.names() if other.instance in name]
        return listed.stdout.split() + groups
    locks, uids = (WARM_LOCKS, WARM_UIDS) if backend == "warm" else (BWRAP_LOCKS, BWRAP_UIDS)
    held = {uid for uid, pids in lock_holders(locks).items() if other.pid in pids and uid in uids}
    return [str(p) for p in processes(held)] + [str(g) for u, g in run_cgroups(uids) if u in held]


def _leftovers(sandbox: Sandbox) -> list[str]:
    if isinstance(sandbox, WarmSandbox):
        return warm_leftovers(sandbox) + warm_leftovers()
    if isinstance(sandbox, BwrapSandbox):
        return bwrap_leftovers(sandbox)
    return docker_leftovers(sandbox)  # type: ignore[arg-type]


def _sweep(sandbox: Sandbox) -> None:
    """Sweep as a starting worker does: what killed workers left, in slots nobody holds."""
    if isinstance(sandbox, WarmSandbox):
        with WarmSandbox(sandbox.runtime, slots=1) as fresh:  # its first slot sweeps the rest
            fresh.start()
            assert fresh.run(RunRequest({"m.py": b"print(2)"}, "m.py")).stdout == b"2\n"
        return
    sandbox.sweep()


BACKENDS = [
    pytest.param("bwrap", marks=pytest.mark.bwrap),
    pytest.param("warm", marks=pytest.mark.bwrap),
    pytest.param("docker", marks=pytest.mark.docker),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_leftover_checks_see_only_the_tests_own_runs(backend, foreign):
    source = b"import subprocess\nsubprocess.run(['true'])\nprint(1)\n"
    request = RunRequest({"main.py": source}, "main.py")
    sandbox = make_sandbox(
        backend, Settings.from_env().runtime_dir, Settings.from_env().runner_image
    )
    # another sandbox of this process, as a session fixture is: its armed runs are its own
    neighbour = make_sandbox(
        backend, Settings.from_env().runtime_dir, Settings.from_env().runner_image
    )
    for _ in range(2):
        assert neighbour.run(request).stdout == b"1\n"
    runs_before, checks, seen = foreign.ok, 0, 0
    try:
        ends = time.monotonic() + CHECK_S
        while time.monotonic() < ends or checks < 3:
            assert sandbox.run(request).stdout == b"1\n"
            seen += bool(_theirs(backend, foreign))
            assert settled(lambda: _leftovers(sandbox)) == [], f"other's runs: {foreign.ok}"
            checks += 1
        _sweep(sandbox)
        assert settled(lambda: _leftovers(sandbox)) == []
    finally:
        getattr(sandbox, "close", lambda: None)()
        getattr(neighbour, "close", lambda: None)()
    foreign.wait_runs(3)  # it goes on after our sweep and close
    assert seen >= 1, (checks, seen)  # its runs were there as we looked
    assert foreign.ok > runs_before + 3 and foreign.bad == [], foreign.bad
