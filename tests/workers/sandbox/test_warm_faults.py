"""Grader faults in the warm pool: a lost run runs again on a fresh slot or cold, and only the
student's program ever decides a verdict.

Each test makes its own pool, so that the faults it injects (zygotes and supervisors killed,
zygotes that cannot start, cgroups that cannot be made) touch no other test's sandboxes, and
finds what it kills through that pool's own slots and uids, never by scanning the host.
"""

import os
import random
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from types import SimpleNamespace

import pytest

from core.errors import GraderError
from core.runs import Limits, RunOutcome, RunRequest, RunStatus
from core.verdicts import grade_source
from service.settings import Settings
from testkit import slowness
from testkit.waits import wait_for
from tests.workers.sandbox.leftovers import boot_clock, released_leftovers, settled
from workers.sandbox import armed, cgroups
from workers.sandbox.bwrap import BwrapSandbox
from workers.sandbox.runtime import Runtime
from workers.sandbox.slot import MOST_ARMED, Slot, zygote_group
from workers.sandbox.warm import WarmSandbox

pytestmark = pytest.mark.bwrap
RUNTIME = Runtime(Settings.from_env().runtime_dir)
SEED_STDOUT = "[0.787 0.107 0.107]\n[0.893 0.213]\nTrue\n"


def request(source: str, **limits) -> RunRequest:
    return RunRequest({"main.py": source.encode()}, "main.py", slowness.stretch(Limits(**limits)))


def run_groups(uid: int) -> list[str]:
    """Return the run cgroups of one warm uid (each holds an armed run's processes)."""
    return [name for name in cgroups.names(f"{uid}-") if name != zygote_group(uid)]


def pids_in(group: str) -> list[int]:
    return cgroups.members(group) or []


def assert_nothing_left(uids: list[int]) -> None:
    """After close(): no process and no run cgroup of the pool's uids is left."""
    released_at = boot_clock()
    assert settled(lambda: released_leftovers(uids, released_at)) == []


def kill_zygote(sandbox: WarmSandbox, index: int = 0) -> bool:
    """SIGKILL the python3 of one slot's zygote, found through the pool; say if one was there."""
    pid = sandbox.slots()[index].zygote_pid()
    if pid is None:
        return False
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def solo():
    """A pool of one slot, started and idle with its reserve of armed runs."""
    sandbox = WarmSandbox(RUNTIME, slots=1)
    sandbox.start()
    assert sandbox.run(request("print(1)")).stdout == b"1\n"
    wait_for(
        lambda: sandbox.slots()[0].armed >= MOST_ARMED,
        "arming the reserve",
        slowness.scaled(30),
        0.02,
    )
    uid = sandbox.slots()[0].uid
    yield sandbox
    sandbox.close()
    assert_nothing_left([uid])


def test_a_run_whose_armed_supervisor_died_runs_again_on_a_fresh_zygote(solo):
    """The issue's `vanished before it started: Broken pipe`: the armed runs' processes die
    (the zygote lives on), so the code cannot be sent; the run goes to a restarted zygote."""
    uid = solo.slots()[0].uid
    groups = run_groups(uid)
    assert len(groups) >= MOST_ARMED
    for group in groups:
        for pid in pids_in(group):
            os.kill(pid, signal.SIGKILL)
    wait_for(
        lambda: not any(pids_in(g) for g in groups),
        "the armed runs' deaths",
        slowness.scaled(30),
        0.02,
    )
    assert solo.slots()[0].alive
    result = solo.run(request("print('after', 6 * 7)"))
    assert (result.outcome, result.exit_code, result.stdout) == (
        RunOutcome.EXITED,
        0,
        b"after 42\n",
    )
    assert (solo.retries, solo.fallbacks) == (1, 0)


def test_a_run_whose_zygote_was_killed_before_it_runs_again(solo, seed):
    zygote = solo.slots()[0]
    assert kill_zygote(solo)
    wait_for(lambda: not zygote.alive, "the zygote's death", slowness.scaled(30), 0.02)
    verdict = grade_source(seed, seed.solution["model.py"].encode(), solo)
    assert (verdict.status, verdict.score, verdict.stdout) == (RunStatus.PASSED, 1.0, SEED_STDOUT)
    assert (solo.retries, solo.fallbacks) == (1, 0)


def test_a_run_whose_zygote_dies_while_it_runs_runs_again_from_the_start(solo):
    source = "import time\nprint('begun', flush=True)\ntime.sleep(1.5)\nprint('ended')\n"
    result: list = []
    running = threading.Thread(target=lambda: result.append(solo.run(request(source))))
    running.start()
    time.sleep(0.5)  # the run is under way (or, on a busy machine, about to start)
    assert kill_zygote(solo)
    running.join()
    assert (result[0].outcome, result[0].exit_code, result[0].stdout) == (
        RunOutcome.EXITED,
        0,
        b"begun\nended\n",  # the lost try's "begun" is dropped, not doubled
    )
    assert (solo.retries, solo.fallbacks) == (1, 0)


@pytest.mark.parametrize(
    ("program", "outcome", "exit_code", "stdout"),
    [
        (
            "import os, signal\nprint('x', flush=True)\nos.kill(os.getpid(), 9)\n",
            "exited",
            137,
            b"x\n",
        ),
        ("import os\nos.close(0)\nraise SystemExit(3)\n", "exited", 3, b""),
        ("while True: pass\n", "timeout", None, b""),
        ("x = []\nwhile True: x.append(bytearray(2**24))\n", "memory_limit", None, b""),
    ],
    ids=["own SIGKILL", "own exit", "own loop", "own memory"],
)
def test_a_program_that_ends_itself_or_hits_a_limit_is_never_run_again(
    solo, program, outcome, exit_code, stdout
):
    result = solo.run(request(program, time_s=2, memory_mb=64))
    assert (result.outcome, result.exit_code, result.stdout) == (outcome, exit_code, stdout)
    assert (solo.retries, solo.fallbacks) == (0, 0)


def _assert_graded_cold(sandbox: WarmSandbox, seed) -> None:
    """The seed's solution passes and its starter fails, both on the cold fallback."""
    with sandbox:
        passed = grade_source(seed, seed.solution["model.py"].encode(), sandbox)
        failed = grade_source(seed, seed.starter_code.encode(), sandbox)
        uids = [s.uid for s in sandbox.slots()]
    assert (passed.status, passed.score, passed.stdout) == (RunStatus.PASSED, 1.0, SEED_STDOUT)
    assert (failed.status, failed.score) == (RunStatus.FAILED, 0.0)
    assert (sandbox.retries, sandbox.fallbacks) == (0, 2)
    assert_nothing_left(uids)


def test_a_pool_whose_zygotes_cannot_start_grades_on_the_cold_fallback(tmp_path, seed):
    python = tmp_path / "usr" / "bin" / "python3"  # passes check(); no zygote starts from it
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\nexit 1\n")
    _assert_graded_cold(
        WarmSandbox(Runtime(tmp_path), slots=1, fallback=BwrapSandbox(RUNTIME)), seed
    )


def test_a_pool_whose_runs_get_no_cgroup_grades_on_the_cold_fallback(monkeypatch, seed):
    sandbox = WarmSandbox(RUNTIME, slots=1)

    class NoCgroup(cgroups.RunCgroup):
        """A run cgroup of this pool's that the hierarchy refuses (others' are made)."""

        def create(self) -> None:
            if int(self.name.split("-")[0]) in {s.uid for s in sandbox.slots()}:
                raise GraderError(f"cannot set up the run's cgroup {self.name}: no space")
            super().create()

    monkeypatch.setattr(armed, "cgroups", SimpleNamespace(RunCgroup=NoCgroup, Usage=cgroups.Usage))
    _assert_graded_cold(sandbox, seed)


def test_a_keeper_that_meets_an_unexpected_error_lives_on(monkeypatch):
    sandbox, arm, failures = WarmSandbox(RUNTIME, slots=1), Slot.arm, []

    def arm_once_wrong(self, limits):
        if not failures and self in sandbox.slots():
            failures.append(self.uid)
            raise RuntimeError("an error no one foresaw")
        arm(self, limits)

    monkeypatch.setattr(Slot, "arm", arm_once_wrong)
    with sandbox:
        result = sandbox.run(request("print('still here')"))
    assert (result.stdout, failures) == (b"still here\n", [sandbox.slots()[0].uid])
    assert (sandbox.retries, sandbox.fallbacks) == (0, 0)


def _burst(seed) -> list[tuple[str, str]]:
    """Return the 500 submissions, (kind, model.py), in a fixed shuffled order."""
    solution, starter = seed.solution["model.py"], seed.starter_code
    wrong = solution.replace("print(np.allclose", "print(not np.allclose")
    assert wrong != solution
    sources = {
        "solution": solution,
        "starter": starter,
        "wrong answer": wrong,
        "raises": solution + "raise ValueError('boom')\n",
        "exits 3": "print('before exit')\nraise SystemExit(3)\n",
        "own SIGKILL": "import os\nprint('x', flush=True)\nos.kill(os.getpid(), 9)\n",
        "loops": "while True: pass\n",
    }
    counts = {"starter": 100, "wrong answer": 76, "raises": 60, "exits 3": 40, "own SIGKILL": 20}
    counts["loops"] = 4
    counts["solution"] = 500 - sum(counts.values())
    names = [name for name, n in counts.items() for _ in range(n)]
    random.Random(16).shuffle(names)
    return [(name, sources[name]) for name in names]


def _key(verdict):
    return (verdict.status, verdict.score, verdict.stdout, verdict.exit_code, verdict.feedback)


KILL_EVERY = 5  # submissions graded between two zygote kills in the burst (about 100 chances)


@pytest.mark.slow
def test_zygotes_killed_during_a_burst_change_no_verdict(warm, seed):
    """Issue 16's fault test: 500 submissions graded while zygotes die at random; each verdict
    is the one its code gets on a quiet pool."""
    # the loops end sooner
    seed = replace(seed, limits=slowness.stretch(replace(seed.limits, time_s=3.0)))
    burst = _burst(seed)
    quiet = {name: _key(grade_source(seed, source.encode(), warm)) for name, source in set(burst)}
    statuses = {key[0] for key in quiet.values()}
    assert {RunStatus.PASSED, RunStatus.FAILED, RunStatus.ERROR, RunStatus.TIMEOUT} <= statuses

    sandbox = WarmSandbox(RUNTIME, slots=2)
    sandbox.start()
    stop, kills, done = threading.Event(), [], [0]

    def killer() -> None:
        # paced by the burst's progress, not the clock: one kill per EVERY submissions
        # graded, however fast this machine is today (a clock-paced killer made too few)
        chance = random.Random(1616)
        killed_at = 0
        while not stop.wait(chance.uniform(0.01, 0.05)):
            if done[0] - killed_at < KILL_EVERY:
                continue
            index = chance.randrange(len(sandbox.slots()))
            if sandbox.slots()[index].armed and kill_zygote(sandbox, index):
                kills.append(index)  # only a zygote that serves: one starting is left alone
                killed_at = done[0]

    def grade(item: tuple[str, str]) -> tuple[str, tuple]:
        name, source = item
        key = _key(grade_source(seed, source.encode(), sandbox))
        done[0] += 1  # one writer at a time is not needed: a missed count only delays a kill
        return name, key

    killing = threading.Thread(target=killer, name="zygote-killer")
    try:
        killing.start()
        with ThreadPoolExecutor(2 * sandbox.parallel_runs) as pool:
            graded = list(pool.map(grade, burst))
    finally:
        stop.set()
        killing.join()
        uids = [s.uid for s in sandbox.slots()]
        sandbox.close()
    differing = [(name, got, quiet[name]) for name, got in graded if got != quiet[name]]
    print(
        f"\n{len(burst)} submissions, {len(kills)} zygotes killed, {sandbox.retries} runs "
        f"retried warm, {sandbox.fallbacks} run cold; "
        f"{len(burst) - len(differing)}/{len(burst)} verdicts equal the quiet pool's"
    )
    assert differing == []
    # a killed slot serves again only once its new zygote is up: kills come at that pace
    assert len(kills) >= 10, "too few faults to prove anything"
    assert sandbox.retries + sandbox.fallbacks > 0, "no run met a killed zygote"
    assert_nothing_left(uids)
