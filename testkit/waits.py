"""Waiting for what another process does: poll a check until it holds or the time is up."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def until(check: Callable[[], T], timeout: float, every: float = 0.1) -> T:
    """Poll `check` until it answers something true or `timeout` s pass; return its answer."""
    deadline = time.monotonic() + timeout
    while not (found := check()) and time.monotonic() < deadline:
        time.sleep(every)
    return found


def wait_for(check: Callable[[], T], what: str, timeout: float = 20.0, every: float = 0.1) -> T:
    """Poll `check` until it answers something true, and return that; fail after `timeout` s."""
    found = until(check, timeout, every)
    if not found:
        # raised, not asserted: a benchmark run with -O waits as a test does
        raise AssertionError(f"{what} did not happen in {timeout:g} s")
    return found
