"""Grading a stored submission: claim it, run it in the sandbox, save the verdict once.

A grading is driven as every leased work is (workers.leases.drive); what is its own is here:
the submission's queue, its lesson's cases in turns, and a verdict with its grade.
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
from core.runs import Sandbox
from core.verdicts import Paused, Turn, Verdict, grade_in_turns
from service.queue import GradeMessage, Message, Order, Queue
from service.settings import Settings
from service.store import submissions
from service.store.database import Store
from service.store.models import utcnow
from service.store.submissions import After, Claim
from workers.leases import Progress, Step, drive

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


# a submission is never replaced (Step.REPLACED): it is graded
_OUTCOMES = {
    Step.ENDED: Outcome.GRADED, Step.NOTHING_TO_DO: Outcome.NOTHING_TO_DO, Step.HELD: Outcome.HELD,
    Step.RETRY: Outcome.RETRY, Step.GAVE_UP: Outcome.GAVE_UP, Step.FENCED_OUT: Outcome.FENCED_OUT,
    Step.PAUSED: Outcome.PAUSED,
}  # fmt: skip


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
    grading = _Grading(store, catalog, sandbox, settings.lease_s, submission_id, queue)
    driven = drive(grading, claimed, settings, clock, log)
    return Graded(_OUTCOMES[driven.step], driven.retry_in_s, driven.after, driven.follows)


@dataclass(frozen=True)
class _Grading:
    """One submission's grading, as workers.leases.drive runs it."""

    store: Store
    catalog: Catalog
    sandbox: Sandbox
    lease_s: int
    submission_id: int
    queue: str | None  # the queue its message came from

    @property
    def what(self) -> str:
        return f"grading submission {self.submission_id}"

    @property
    def again(self) -> GradeMessage:
        # its turn is over: behind every fresh submission of its queue
        return GradeMessage(self.submission_id, Queue(self.queue or Queue.GRADE), Order.LATER)

    def lost(self, claims: int) -> str:
        return f"no verdict after {claims} claims (lost workers)"

    def renew(self, held: Claim, now: datetime) -> bool:
        return submissions.renew(self.store, held, self.lease_s, now)

    def run(self, held: Claim) -> Verdict | Progress:
        lesson = self.catalog.lesson(held.lesson_id)
        if lesson is None or lesson.exercise is None:
            raise GraderError(f"this worker's catalog has no exercise {held.lesson_id!r}")
        cases = lesson.exercise.cases
        names = [name for name, _ in held.done]
        same = names == [case.name for case in cases[: len(names)]]
        done = [ran for _, ran in held.done] if same else []  # the lesson may have changed
        tried = frozenset(i for i, case in enumerate(cases) if case.name in held.tried)
        turn = Turn(TURN_MS, lambda: submissions.others_wait(self.store, held), FIRST_TRY_S, tried)
        graded = grade_in_turns(lesson.exercise, held.source.encode(), self.sandbox, done, turn)
        if isinstance(graded, Paused):
            ran = zip(cases[: len(graded.done)], graded.done, strict=True)
            cut = tuple(case.name for i, case in enumerate(cases) if i in graded.tried)
            return Progress(tuple((case.name, result) for case, result in ran), cut)
        return graded

    def pause(self, held: Claim, kept: Progress, now: datetime) -> bool:
        return submissions.pause(self.store, held, kept.done, now, kept.tried)

    def replaced(self, held: Claim, now: datetime) -> After | None:
        return None  # nothing replaces a submission

    def release(self, held: Claim, problem: str, now: datetime) -> bool:
        return submissions.release(self.store, held, now, problem=problem)

    def finish(self, held: Claim, found: Verdict, now: datetime) -> After:
        lesson = self.catalog.lesson(held.lesson_id)
        return submissions.finish(self.store, held, found, now, lesson=lesson)

    def give_up(self, held: Claim, problem: str, now: datetime) -> After:
        lesson = self.catalog.lesson(held.lesson_id)
        return submissions.fail(self.store, held, problem, now, lesson=lesson)
