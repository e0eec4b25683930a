"""Grading a stored submission: claim it, run it in the sandbox, save the verdict once.

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
from core.runs import RunResult, Sandbox
from core.verdicts import Paused, Turn, Verdict, grade_in_turns
from service.queue import GradeMessage, Message, Order, Queue
from service.settings import Settings
from service.store import submissions
from service.store.database import Store
from service.store.leased_work import Held
from service.store.models import utcnow
from service.store.submissions import After, Claim
from workers.leases import look_again_s, renewing, saved

log = logging.getLogger(__name__)

# A submission's turn: after this much sandbox time it lets another student's waiting work go
# first. A right answer to the six-case lesson takes about 0.4 s, so it never pauses; an
# endless loop pauses after its first case's time limit instead of holding the queue for all
# six (issue 27: 15-19 s a submission, 177-190 s for a student behind ten of them).
TURN_MS = 2000
# A case's first try while others wait runs under this time limit at most: an endless loop at
# the head of a rush costs a second of the sandbox, not its 5 s limit, before the others go;
# cut short, it runs whole in a later turn (its verdict is never the cut one's).
FIRST_TRY_S = 1.0


class Outcome(enum.StrEnum):
    """How one delivery of a submission ended."""

    GRADED = "graded"
    NOTHING_TO_DO = "nothing_to_do"  # graded already, or no such submission
    HELD = "held"  # another worker holds the lease: look again when it expires
    RETRY = "retry"  # the grader failed; the submission is queued again
    GAVE_UP = "gave_up"  # the grader failed too often: saved as an `error` grade
    FENCED_OUT = "fenced_out"  # our lease was taken over while we ran; nothing saved
    PAUSED = "paused"  # it had its turn and others wait: back at the tail, its cases so far kept


@dataclass(frozen=True)
class Graded:
    """The outcome, when to look again, and what follows a saved verdict (as the store said)."""

    outcome: Outcome
    retry_in_s: float = 0.0
    after: After | None = None  # GRADED and GAVE_UP only
    follows: tuple[Message, ...] = ()  # to send once committed: the sync, the next turn


def grade_stored(
    store: Store,
    catalog: Catalog,
    sandbox: Sandbox,
    settings: Settings,
    submission_id: int,
    clock: Callable[[], datetime] = utcnow,
    queue: str | None = None,
) -> Graded:
    """Grade one submission unless it is graded or held; save the verdict under the lease.

    `queue`: the queue the message came from, when it came from one: a submission queued
    since on another (a regrade on the bulk queue) is left to that queue's workers.
    """
    claimed = submissions.claim(store, submission_id, settings.lease_s, clock(), queue)
    if claimed is None:
        return Graded(Outcome.NOTHING_TO_DO)
    if isinstance(claimed, Held):
        return Graded(Outcome.HELD, retry_in_s=look_again_s(claimed, clock()))
    lesson = catalog.lesson(claimed.lesson_id)
    if claimed.claims > settings.grade_attempts:
        # claimed this often without a verdict: workers died on it; stop feeding it to them
        problem = f"no verdict after {claimed.claims - 1} claims (lost workers)"
        return _give_up(store, claimed, lesson, problem, clock)

    def renew() -> bool:
        return submissions.renew(store, claimed, settings.lease_s, clock())

    try:
        with renewing(renew, settings.lease_s, f"submission {submission_id}"):
            verdict = _grade(lesson, sandbox, claimed, store)
    except Exception as exc:  # noqa: BLE001  any failure here is ours, never the student's
        problem = f"{type(exc).__name__}: {exc}"
        last = claimed.claims >= settings.grade_attempts
        log.exception(
            "grading submission %s failed (try %d of %d)%s",
            submission_id, claimed.claims, settings.grade_attempts,
            "; giving up" if last else "; retrying",
        )  # fmt: skip
        if last:
            return _give_up(store, claimed, lesson, problem, clock)
        saved(lambda: submissions.release(store, claimed, clock(), problem=problem))
        return Graded(Outcome.RETRY, retry_in_s=2.0**claimed.claims)
    if isinstance(verdict, PausedCases):
        paused = saved(
            lambda: submissions.pause(store, claimed, verdict.done, clock(), verdict.tried)
        )
        if not paused:
            return Graded(Outcome.FENCED_OUT)
        # its turn is over: behind every fresh submission of its queue
        again = GradeMessage(submission_id, Queue(queue or Queue.GRADE), Order.LATER)
        return Graded(Outcome.PAUSED, follows=(again,))
    after = saved(lambda: submissions.finish(store, claimed, verdict, clock(), lesson=lesson))
    return _followed(Outcome.GRADED, after)


def _give_up(
    store: Store,
    claimed: Claim,
    lesson: Lesson | None,
    problem: str,
    clock: Callable[[], datetime],
) -> Graded:
    after = saved(lambda: submissions.fail(store, claimed, problem, clock(), lesson=lesson))
    return _followed(Outcome.GAVE_UP, after)


def _followed(outcome: Outcome, after: After) -> Graded:
    if not after.saved:
        return Graded(Outcome.FENCED_OUT)
    return Graded(outcome, after=after, follows=after.follows)


@dataclass(frozen=True)
class PausedCases:
    """A grading paused in its turn: the results of its first cases, and the cases cut short
    after them, by case name."""

    done: tuple[tuple[str, RunResult], ...]
    tried: tuple[str, ...] = ()


def _grade(
    lesson: Lesson | None, sandbox: Sandbox, claimed: Claim, store: Store
) -> Verdict | PausedCases:
    if lesson is None or lesson.exercise is None:
        raise GraderError(f"this worker's catalog has no exercise {claimed.lesson_id!r}")
    cases = lesson.exercise.cases
    names = [name for name, _ in claimed.done]
    same = names == [case.name for case in cases[: len(names)]]
    done = [ran for _, ran in claimed.done] if same else []  # the lesson may have changed
    tried = frozenset(i for i, case in enumerate(cases) if case.name in claimed.tried)
    turn = Turn(TURN_MS, lambda: submissions.others_wait(store, claimed), FIRST_TRY_S, tried)
    graded = grade_in_turns(lesson.exercise, claimed.source.encode(), sandbox, done, turn)
    if isinstance(graded, Paused):
        ran = zip(cases[: len(graded.done)], graded.done, strict=True)
        cut = tuple(case.name for i, case in enumerate(cases) if i in graded.tried)
        return PausedCases(tuple((case.name, result) for case, result in ran), cut)
    return graded
