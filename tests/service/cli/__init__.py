"""Tests of the `codeblanks` command, one module per command group of service/cli/.

The commands run as the installed one does, `python -m service ...` in a child process.
"""

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

CLI = [sys.executable, "-m", "service"]


def codeblanks(*args: str | Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """Run `codeblanks ARGS` with this process's environment."""
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, cwd=cwd)


def codeblanks_in(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `codeblanks ARGS` with an instance directory (and embedded database) in tmp_path,
    and the variables of `env` added."""
    environ = {**os.environ, "CODEBLANKS_INSTANCE_DIR": str(tmp_path / "instance")}
    environ.pop("CODEBLANKS_DATABASE_URL", None)
    environ.update(env or {})
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, env=environ, cwd=REPO, timeout=timeout
    )
