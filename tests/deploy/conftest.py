"""The compose deployment's images, built once per test session by docker/build.sh."""

from __future__ import annotations

import subprocess
import time

import pytest

from testkit import slowness
from testkit.stacks import REPO, clean_environment, env_file

BUILD_TIMEOUT_S = 1200  # a cold build downloads Debian packages for three images


@pytest.fixture(scope="session")
def images(docker_daemon, tmp_path_factory: pytest.TempPathFactory) -> float:
    """Every image of the compose file, built by docker/build.sh; return the build's seconds."""
    env = env_file(tmp_path_factory.mktemp("build") / ".env")
    started = time.monotonic()
    done = subprocess.run(
        ["bash", str(REPO / "docker" / "build.sh")],
        cwd=REPO, capture_output=True, text=True, timeout=slowness.scaled(BUILD_TIMEOUT_S),
        env=clean_environment(ENV_FILE=str(env)),
    )  # fmt: skip
    if done.returncode != 0:
        pytest.fail(f"docker/build.sh failed:\n{done.stdout[-4000:]}{done.stderr[-4000:]}")
    return time.monotonic() - started
