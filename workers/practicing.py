"""Running a stored practice run: claim it, run it in the sandbox in turns, save it once.

A practice run (core.practice) runs the student's code on their own input and on the
exercise's visible cases, never a hidden one; what it finds is saved on its own row
(service.store.practice_runs) and nothing else: no attempt, no grade, no grade sync.
It takes turns as a grading does (workers.grading's TURN_MS and FIRST_TRY_S), and it also
stops at its next case once its student has pressed Run again (a newer run replaces it).
A practice run is driven as every leased work is (workers.leases.drive).
Celery-free, so that tests drive it directly; workers.tasks wraps it in a task.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from core.errors import GraderError
from core.lessons import Catalog
from core.practice import Practice, lost, plan, practice_in_turns
from core.runs import RunStatus, Sandbox
from core.verdicts import Paused, Turn, Verdict
from service.queue import Message, Order, PracticeMessage, Queue
from service.settings import Settings
from service.store import fair_share, practice_runs
from service.store.database import Store
from service.store.models import utcnow
from service.store.practice_runs import After, Claim
from workers.grading import FIRST_TRY_S, TURN_MS
from workers.leases import Progress, Step, drive, ended

log = logging.getLogger(__name__)


class Practiced(enum.StrEnum):
    """How one delivery of a practice run ended."""

    DONE = "done"
    NOTHING_TO_DO = "nothing_to_do"  # done already (or replaced), or no such run
    HELD = "held"  # another worker holds the lease: look again when it expires
    RETRY = "retry"  # the grader failed; the run is queued again
    LOST = "lost"  # the grader failed too often: saved as the grader's failure
    REPLACED = "replaced"  # its student pressed Run again: ended, the newer one sent
    FENCED_OUT = "fenced_out"  # our lease was taken over while we ran; nothing saved
    PAUSED = "paused"  # it had its turn and others wait: back at the tail, its runs so far kept


_OUTCOMES = {
    Step.ENDED: Practiced.DONE, Step.NOTHING_TO_DO: Practiced.NOTHING_TO_DO,
    Step.HELD: Practiced.HELD, Step.RETRY: Practiced.RETRY, Step.GAVE_UP: Practiced.LOST,
    Step.REPLACED: Practiced.REPLACED, Step.FENCED_OUT: Practiced.FENCED_OUT,
    Step.PAUSED: Practiced.PAUSED,
}  # fmt: skip


@dataclass(frozen=True)
class Ran:
    """The outcome, when to look again, and what follows (the author's next run)."""

    outcome: Practiced
    retry_in_s: float = 0.0
    follows: tuple[Message, ...] = ()


def practice_stored(
    store: Store,
    catalog: Catalog,
    sandbox: Sandbox,
    settings: Settings,
    run_id: int,
    clock: Callable[[], datetime] = utcnow,
) -> Ran:
    """Run one practice run unless it is done, held or replaced; save it under the lease."""
    claimed = practice_runs.claim(store, run_id, settings.lease_s, clock())
    practicing = _Practicing(store, catalog, sandbox, settings.lease_s, run_id)
    if isinstance(claimed, Claim) and claimed.replaced:
        # a newer run came while the worker before was lost with it: end it unrun
        driven = ended(Step.REPLACED, practice_runs.end_replaced(store, claimed, clock()))
    else:
        driven = drive(practicing, claimed, settings, clock, log)
    return Ran(_OUTCOMES[driven.step], driven.retry_in_s, driven.follows)


@dataclass(frozen=True)
class _Practicing:
    """One practice run, as workers.leases.drive runs it."""

    store: Store
    catalog: Catalog
    sandbox: Sandbox
    lease_s: int
    run_id: int

    @property
    def what(self) -> str:
        return f"practice run {self.run_id}"

    @property
    def again(self) -> PracticeMessage:
        # its turn is over: behind every fresh message of the students' queue
        return PracticeMessage(self.run_id, Order.LATER)

    def lost(self, claims: int) -> str:
        return f"no end after {claims} claims"

    def renew(self, held: Claim, now: datetime) -> bool:
        return practice_runs.renew(self.store, held, self.lease_s, now)

    def run(self, held: Claim) -> Practice | Progress:
        lesson = self.catalog.lesson(held.lesson_id)
        if lesson is None or lesson.exercise is None:
            raise GraderError(f"this worker's catalog has no exercise {held.lesson_id!r}")
        names = plan(lesson.exercise, held.stdin)
        kept = [name for name, _ in held.done]
        same = kept == list(names[: len(kept)])
        done = [ran for _, ran in held.done] if same else []  # the lesson may have changed
        tried = frozenset(i for i, name in enumerate(names) if name in held.tried)

        def yields() -> bool:
            # another student's work waits, or this student has pressed Run again
            waiting = fair_share.others_wait(self.store, held.user_id, Queue.GRADE)
            return waiting or practice_runs.replaced(self.store, held)

        turn = Turn(TURN_MS, yields, FIRST_TRY_S, tried)
        source = held.source.encode()
        ran = practice_in_turns(lesson.exercise, source, held.stdin, self.sandbox, done, turn)
        if isinstance(ran, Paused):
            cut = tuple(name for i, name in enumerate(names) if i in ran.tried)
            return Progress(tuple(zip(names, ran.done, strict=False)), cut)
        return ran

    def pause(self, held: Claim, kept: Progress, now: datetime) -> bool:
        return practice_runs.pause(self.store, held, kept.done, now, kept.tried)

    def replaced(self, held: Claim, now: datetime) -> After | None:
        # stopped for a newer run: no more turns
        if not practice_runs.replaced(self.store, held):
            return None
        return practice_runs.end_replaced(self.store, held, now)

    def release(self, held: Claim, problem: str, now: datetime) -> bool:
        return practice_runs.release(self.store, held, now)  # its student sees no problem

    def finish(self, held: Claim, found: Practice, now: datetime) -> After:
        return practice_runs.finish(self.store, held, found, now)

    def give_up(self, held: Claim, problem: str, now: datetime) -> After:
        verdict = Verdict(status=RunStatus.ERROR, duration_ms=0, message=lost(held.claims))
        return practice_runs.lose(self.store, held, verdict, problem, now)
