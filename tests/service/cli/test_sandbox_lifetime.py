"""A command that runs sandboxes returns only once they are gone (issues 25.6 and 26.2).

`codeblanks grade` and `codeblanks lessons check` start a warm pool. Each runs here as a real
child process, watched while it runs: the warm slots it holds (by their uid locks), the
processes under those uids, and the cgroups named after them. As soon as it has returned, none
of those processes may be alive and none of those cgroups may exist: before, the pool's bwrap
was seen dying, re-parented to init, for seconds, and its armed runs' cgroups stayed until a
later sweep.
"""

import subprocess
import time

import pytest

from tests.conftest import REPO, SEED
from tests.service.cli import CLI
from tests.workers.sandbox.leftovers import WARM_LOCKS, lock_holders, processes
from workers.sandbox import cgroups
from workers.sandbox.slot import zygote_group

pytestmark = pytest.mark.bwrap

COMMANDS = {
    "grade": ["grade", str(SEED), str(SEED / "solution" / "model.py"), "--json"],
    "lessons check": ["lessons", "check", str(SEED)],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_returns_after_its_sandboxes_are_gone(command):
    proc = subprocess.Popen(
        [*CLI, *COMMANDS[command]],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    uids: set[int] = set()
    seen: dict[tuple[int, float], str] = {}  # (pid, start time) -> how it looked
    groups: set[str] = set()
    while proc.poll() is None:
        held = {uid for uid, pids in lock_holders(WARM_LOCKS).items() if proc.pid in pids}
        uids |= held
        for process in processes(held):
            seen[(process.pid, process.started)] = str(process)
        for uid in held:
            groups.update(cgroups.names(f"{uid}-"))
        time.sleep(0.005)
    # what is left the moment it returned: no waiting here, that is the point
    alive = [seen[key] for p in processes(uids) if (key := (p.pid, p.started)) in seen]
    taken = set(lock_holders(WARM_LOCKS))  # another pool may take a freed uid at once
    left = [
        name
        for name in groups
        if cgroups.members(name) is not None
        and not (name == zygote_group(int(name.split("-")[0])) and int(name.split("-")[0]) in taken)
    ]
    out, err = proc.communicate()
    assert proc.returncode == 0, out + err
    assert uids and seen and groups, "the command was never seen holding a warm slot"
    assert alive == [], f"{command} returned with its sandboxes' processes alive"
    assert left == [], f"{command} returned leaving its runs' cgroups"
