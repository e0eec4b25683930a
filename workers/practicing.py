"""Running a stored practice run: claim it, run it in the sandbox in turns, save it once.

A practice run (core.practice) runs the student's code on their own input and on the
exercise's visible cases, never a hidden one; what it finds is saved on its own row
(service.store.practice_runs) and nothing else: no attempt, no grade, no grade sync.
It takes turns as a grading does (workers.grading's TURN_MS and FIRST_TRY_S), and it also
stops at its next case once its student has pressed Run again (a newer run replaces it).
Celery-free, so that tests drive it directly; workers.tasks wraps it in a task.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from core.errors import GraderError
from core.lessons import Catalog, Lesson
from core.practice import Practice, lost, plan, practice_in_turns
from core.runs import RunResult, RunStatus, Sandbox
from core.verdicts import Paused, Turn, Verdict
from service.queue import Message, Order, PracticeMessage, Queue
from service.settings import Settings
from service.store import fair_share, practice_runs
from service.store.database import Store
from service.store.leased_work import Held
from service.store.models import utcnow
from service.store.practice_runs import After, Claim
from workers.grading import FIRST_TRY_S, TURN_MS
from workers.leases import look_again_s, renewing, saved

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
    if claimed is None:
        return Ran(Practiced.NOTHING_TO_DO)
    if isinstance(claimed, Held):
        return Ran(Practiced.HELD, retry_in_s=look_again_s(claimed, clock()))
    if claimed.replaced:
        return _ended(Practiced.REPLACED, practice_runs.end_replaced(store, claimed, clock()))
    if claimed.claims > settings.grade_attempts:
        # claimed this often without an end: workers died on it; stop feeding it to them
        return _lose(store, claimed, f"no end after {claimed.claims - 1} claims", clock)

    def renew() -> bool:
        return practice_runs.renew(store, claimed, settings.lease_s, clock())

    try:
        with renewing(renew, settings.lease_s, f"practice run {run_id}"):
            practiced = _practice(catalog.lesson(claimed.lesson_id), sandbox, claimed, store)
    except Exception as exc:  # noqa: BLE001  any failure here is ours, never the student's
        problem = f"{type(exc).__name__}: {exc}"
        last = claimed.claims >= settings.grade_attempts
        log.exception(
            "practice run %s failed (try %d of %d)%s",
            run_id, claimed.claims, settings.grade_attempts,
            "; giving up" if last else "; retrying",
        )  # fmt: skip
        if last:
            return _lose(store, claimed, problem, clock)
        saved(lambda: practice_runs.release(store, claimed, clock()))
        return Ran(Practiced.RETRY, retry_in_s=2.0**claimed.claims)
    if isinstance(practiced, _Paused):
        if practice_runs.replaced(store, claimed):  # stopped for a newer run: no more turns
            return _ended(Practiced.REPLACED, practice_runs.end_replaced(store, claimed, clock()))
        paused = saved(
            lambda: practice_runs.pause(store, claimed, practiced.done, clock(), practiced.tried)
        )
        if not paused:
            return Ran(Practiced.FENCED_OUT)
        # its turn is over: behind every fresh message of the students' queue
        return Ran(Practiced.PAUSED, follows=(PracticeMessage(run_id, Order.LATER),))
    after = saved(lambda: practice_runs.finish(store, claimed, practiced, clock()))
    return _ended(Practiced.DONE, after)


def _lose(store: Store, claimed: Claim, problem: str, clock: Callable[[], datetime]) -> Ran:
    verdict = Verdict(status=RunStatus.ERROR, duration_ms=0, message=lost(claimed.claims))
    after = saved(lambda: practice_runs.lose(store, claimed, verdict, problem, clock()))
    return _ended(Practiced.LOST, after)


def _ended(outcome: Practiced, after: After) -> Ran:
    if not after.saved:
        return Ran(Practiced.FENCED_OUT)
    return Ran(outcome, follows=after.follows)


@dataclass(frozen=True)
class _Paused:
    """A practice run paused in its turn: its first runs' results, and the runs cut short
    after them, by core.practice.plan() name."""

    done: tuple[tuple[str, RunResult], ...]
    tried: tuple[str, ...] = ()


def _practice(
    lesson: Lesson | None, sandbox: Sandbox, claimed: Claim, store: Store
) -> Practice | _Paused:
    if lesson is None or lesson.exercise is None:
        raise GraderError(f"this worker's catalog has no exercise {claimed.lesson_id!r}")
    names = plan(lesson.exercise, claimed.stdin)
    kept = [name for name, _ in claimed.done]
    same = kept == list(names[: len(kept)])
    done = [ran for _, ran in claimed.done] if same else []  # the lesson may have changed
    tried = frozenset(i for i, name in enumerate(names) if name in claimed.tried)

    def yields() -> bool:
        # another student's work waits, or this student has pressed Run again
        waiting = fair_share.others_wait(store, claimed.user_id, Queue.GRADE)
        return waiting or practice_runs.replaced(store, claimed)

    turn = Turn(TURN_MS, yields, FIRST_TRY_S, tried)
    source = claimed.source.encode()
    ran = practice_in_turns(lesson.exercise, source, claimed.stdin, sandbox, done, turn)
    if isinstance(ran, Paused):
        cut = tuple(name for i, name in enumerate(names) if i in ran.tried)
        return _Paused(tuple(zip(names, ran.done, strict=False)), cut)
    return ran
