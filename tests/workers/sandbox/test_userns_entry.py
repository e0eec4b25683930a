"""The compose worker's entrypoint reads its setting (the slot uid shift) through Settings."""

import os
import subprocess
import sys

from tests.conftest import REPO


def entry(*argv: str, **environ: str) -> subprocess.CompletedProcess[str]:
    """Run the entrypoint as compose does, with these CODEBLANKS_* variables only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBLANKS_")}
    command = [sys.executable, "-m", "workers.sandbox.userns_entry", *argv]
    return subprocess.run(command, cwd=REPO, env={**env, **environ}, capture_output=True,
                          text=True, timeout=60)  # fmt: skip


def test_a_shift_that_is_no_number_stops_the_entrypoint_before_anything():
    # no command either: without the setting read first, this would print the usage instead
    done = entry(CODEBLANKS_SLOT_UID_SHIFT="a million")
    assert done.returncode == 125
    assert done.stderr == "userns_entry: CODEBLANKS_SLOT_UID_SHIFT: 'a million' is not a number\n"


def test_without_a_command_it_says_how_to_use_it():
    done = entry(CODEBLANKS_SLOT_UID_SHIFT="2000000")
    assert done.returncode == 2
    assert "Usage: python -m workers.sandbox.userns_entry COMMAND" in done.stderr
