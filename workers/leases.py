"""A worker's hold on stored work (a submission's grading, a practice run): one delivery
driven from its claim to its one end (drive), its heartbeat while the sandbox runs, its
fenced writes tried again while the database blinks, and when to look again at work another
worker holds.

Each kind says what it runs and writes (workers.grading, workers.practicing: a Work); the
order of it all is here, once: a claim made too often without an end gives up (workers died
on it); the run goes on under the heartbeat; a failure of ours gives the work back to be
tried again, and gives up at the last try; a turn that is over pauses it (or ends it, when a
newer one replaces it); its end is saved once, or fenced out.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, Protocol, TypeVar

from sqlalchemy.exc import DBAPIError

from core.runs import RunResult
from service.queue import Message
from service.settings import Settings
from service.store.leased_work import Claim, Held

log = logging.getLogger(__name__)
T = TypeVar("T")

_SAVE_TRIES = 6  # ~30 s of backoff: a database that blinks does not cost a run
C = TypeVar("C", bound=Claim, contravariant=True)
F = TypeVar("F")  # what a run found: a Verdict, a Practice


class Ending(Protocol):
    """What the store says follows an end (submissions.After, practice_runs.After)."""

    @property
    def saved(self) -> bool:
        """Return whether the end was saved (the claim still held)."""
        ...

    @property
    def follows(self) -> tuple[Message, ...]:
        """Return the messages to send once the end is committed."""
        ...


E = TypeVar("E", bound=Ending)
E_co = TypeVar("E_co", bound=Ending, covariant=True)


class Step(enum.Enum):
    """How one delivery ended; each kind words these its own way (workers.grading.Outcome,
    workers.practicing.Practiced)."""

    ENDED = enum.auto()  # run to its end, and saved
    NOTHING_TO_DO = enum.auto()  # ended already, or no such work
    HELD = enum.auto()  # another worker holds the lease: look again when it expires
    RETRY = enum.auto()  # the grader failed; the work is queued again
    GAVE_UP = enum.auto()  # the grader failed too often: saved as the grader's failure
    REPLACED = enum.auto()  # a newer one of its author's replaces it: ended unrun
    FENCED_OUT = enum.auto()  # our lease was taken over while we ran; nothing saved
    PAUSED = enum.auto()  # it had its turn and others wait: back at the tail, its runs kept


@dataclass(frozen=True)
class Driven(Generic[E]):
    """How a delivery ended, when to look again, and what follows (as the store said)."""

    step: Step
    retry_in_s: float = 0.0
    after: E | None = None  # what the store said of a saved end
    follows: tuple[Message, ...] = ()  # to send once committed


@dataclass(frozen=True)
class Progress:
    """Work paused in its turn: its first results by name (a case's, a practice run's run),
    and those after them that were cut short."""

    done: tuple[tuple[str, RunResult], ...]
    tried: tuple[str, ...] = ()


class Work(Protocol[C, F, E_co]):
    """One piece of stored work as drive() runs it, bound to its row: what it runs in the
    sandbox and what its store writes under the claim."""

    @property
    def what(self) -> str:
        """Return the work as the logs name it ("grading submission 7")."""
        ...

    @property
    def again(self) -> Message:
        """Return its message once its turn is over: behind every fresh one."""
        ...

    def lost(self, claims: int) -> str:
        """Return the problem kept when it was claimed `claims` times without an end."""
        ...

    def renew(self, held: C, now: datetime) -> bool:
        """Extend the claim's lease; False when it no longer holds."""
        ...

    def run(self, held: C) -> F | Progress:
        """Run the work in the sandbox from where its last turn left it, in one turn."""
        ...

    def pause(self, held: C, kept: Progress, now: datetime) -> bool:
        """Give the work back to its queue with what it kept; False when the claim is over."""
        ...

    def replaced(self, held: C, now: datetime) -> E_co | None:
        """End the work paused in its turn if a newer one replaces it; None: it pauses."""
        ...

    def release(self, held: C, problem: str, now: datetime) -> bool:
        """Give the work back to its queue after a failure of ours, to be tried again."""
        ...

    def finish(self, held: C, found: F, now: datetime) -> E_co:
        """Save what the run found, if the claim still holds."""
        ...

    def give_up(self, held: C, problem: str, now: datetime) -> E_co:
        """End the work as the grader's failure (its student is told it is ours)."""
        ...


def drive(
    work: Work[C, F, E],
    claimed: C | Held | None,
    settings: Settings,
    clock: Callable[[], datetime],
    log: logging.Logger,
) -> Driven[E]:
    """Run claimed work in one turn under its lease, and end it once: saved, paused for its
    turn, given back after a failure of ours, or given up after too many (logged to its
    kind's `log`)."""
    if claimed is None:
        return Driven(Step.NOTHING_TO_DO)
    if isinstance(claimed, Held):
        return Driven(Step.HELD, retry_in_s=look_again_s(claimed, clock()))
    if claimed.claims > settings.grade_attempts:
        # claimed this often without an end: workers died on it; stop feeding it to them
        problem = work.lost(claimed.claims - 1)
        return ended(Step.GAVE_UP, saved(lambda: work.give_up(claimed, problem, clock())))
    try:
        with renewing(lambda: work.renew(claimed, clock()), settings.lease_s, work.what):
            found = work.run(claimed)
    except Exception as exc:  # noqa: BLE001  any failure here is ours, never the student's
        problem = f"{type(exc).__name__}: {exc}"
        last = claimed.claims >= settings.grade_attempts
        log.exception(
            "%s failed (try %d of %d)%s",
            work.what, claimed.claims, settings.grade_attempts,
            "; giving up" if last else "; retrying",
        )  # fmt: skip
        if last:
            return ended(Step.GAVE_UP, saved(lambda: work.give_up(claimed, problem, clock())))
        saved(lambda: work.release(claimed, problem, clock()))
        return Driven(Step.RETRY, retry_in_s=2.0**claimed.claims)
    if isinstance(found, Progress):
        replaced = work.replaced(claimed, clock())
        if replaced is not None:
            return ended(Step.REPLACED, replaced)
        if not saved(lambda: work.pause(claimed, found, clock())):
            return Driven(Step.FENCED_OUT)
        return Driven(Step.PAUSED, follows=(work.again,))
    return ended(Step.ENDED, saved(lambda: work.finish(claimed, found, clock())))


def ended(step: Step, after: E) -> Driven[E]:
    """Return how a delivery ended once the store said what follows its end."""
    if not after.saved:
        return Driven(Step.FENCED_OUT)
    return Driven(step, after=after, follows=after.follows)


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
