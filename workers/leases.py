"""A worker's hold on stored work (a submission's grading, a practice run): its heartbeat
while the sandbox runs, its fenced writes tried again while the database blinks, and when
to look again at work another worker holds.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TypeVar

from sqlalchemy.exc import DBAPIError

from service.store.leased_work import Held

log = logging.getLogger(__name__)
T = TypeVar("T")

_SAVE_TRIES = 6  # ~30 s of backoff: a database that blinks does not cost a run


@contextlib.contextmanager
def renewing(renew: Callable[[], bool], lease_s: int, what: str) -> Iterator[None]:
    """Call `renew` every quarter of the lease while the block runs: the work's heartbeat.

    An exercise's runs can take longer together than one lease (each has the exercise's time
    limit); a worker that dies stops renewing, so its lease lapses within `lease_s` and the
    sweep hands the work to another worker. Three renewals in a row may fail (a busy
    database) before a live worker loses its lease. `renew` returns False once the lease is
    no longer ours (taken over: the final write will be fenced out anyway).
    """
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(lease_s / 4):
            try:
                if not renew():
                    return
            except DBAPIError as exc:
                log.warning("cannot renew the lease of %s: %s", what, exc)

    thread = threading.Thread(target=beat, name=f"lease-{what}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def saved(write: Callable[[], T]) -> T:
    """Run a fenced write, trying again while the database is unreachable."""
    for attempt in range(_SAVE_TRIES):
        try:
            return write()
        except DBAPIError:
            if attempt == _SAVE_TRIES - 1:
                raise
            time.sleep(0.5 * 2**attempt)
    raise AssertionError("unreachable")


def look_again_s(held: Held, now: datetime) -> float:
    """Return when to look again at work another worker holds: once its lease may be over."""
    return max((held.until - now).total_seconds(), 0.0) + 1.0
