"""The docker backend's waits on its daemon and CLI, stretched to this host's slowness.

In the emulated Debian 12 guest (25-75x) a `docker run` beside a busy neighbour took over
the backend's 30 s to start, and a `docker kill` over its 30 s to return, though nothing
was wrong: the tests, and the other codeblanks of test_sharing.py, wait as long as the
host's slowness asks (tests/slowness.py).
"""

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from testkit import slowness
from workers.sandbox import docker

_WAITS = ("_START_TIMEOUT_S", "_CLI_TIMEOUT_S")


@contextmanager
def scaled() -> Iterator[None]:
    """Stretch the backend's waits while the block runs."""
    with pytest.MonkeyPatch.context() as patch:
        for name in _WAITS:
            patch.setattr(docker, name, slowness.scaled(getattr(docker, name)))
        yield
