"""A real `codeblanks dev` for tests: started on a free port, stopped with Ctrl-C after."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from testkit.servers import REPO, free_port


@contextmanager
def dev_server(instance_dir: Path) -> Iterator[str]:
    """Run `codeblanks dev` until its banner; yield its base URL; then Ctrl-C it.

    After the block, asserts that it stopped on its own and said so.
    """
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "CODEBLANKS_INSTANCE_DIR": str(instance_dir)}
    dev = subprocess.Popen(
        [sys.executable, "-m", "service", "dev", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output: list[str] = []
    try:
        assert dev.stdout is not None
        for line in dev.stdout:
            output.append(line)
            if "Press Ctrl-C" in line or dev.poll() is not None:
                break
        banner = "".join(output)
        assert f"Demo LMS:  {base}/demo/" in banner, banner
        yield base
    finally:
        dev.send_signal(signal.SIGINT)
        rest, _ = dev.communicate(timeout=60)
    assert dev.returncode == 0, "".join(output) + rest
    assert "codeblanks dev: stopped" in rest
