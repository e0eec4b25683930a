"""Submissions through their life: created queued, claimed under a lease, graded once.

A submission is leased work (leased_work.py: the claim, the fenced writes, the author's turns
and the pause between cases are written there once, for practice runs too). What is its own:
the verdict, saved with the fenced UPDATE that counts the grading, so that no submission is
ever graded twice; the grade and its sync, settled in the same transaction, with what follows
(After), so that the worker does not decide it again; the queue it is on (a teacher's regrade
runs on its own, and only the students' queue takes turns); and the regrade. A practice run
(practice_runs.py) waiting in the students' queue is other students' work too (fair_share.py).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, bindparam, func, insert, select, update
from sqlalchemy.orm import Session

from core.lessons import Lesson
from core.messages import say, to_json
from core.runs import RunStatus
from core.verdicts import Verdict
from service.queue import GradeMessage, Message, Order, Queue, SyncMessage
from service.store import fair_share, figure_rows, grades, leased_work
from service.store.database import Store, changed
from service.store.leased_work import Done, Held, LeasedWork, Taken
from service.store.models import Course, Placement, Regrade, Submission, User
from service.store.models import SubmissionStatus as Status


@dataclass(frozen=True, kw_only=True)
class Claim(leased_work.Claim):
    """A worker's hold on one submission (`id`), and what it needs to grade it."""

    queue: str = Queue.GRADE
    to_lms: bool = True  # the placement's grades go to an LMS (see grades.reaches_lms)


@dataclass(frozen=True)
class Queued:
    """A submission just written, and whether its message is to be sent now (else it waits
    its turn behind its author's submission in the queue)."""

    submission_id: int
    send: bool


class Next(enum.StrEnum):
    """What follows a verdict that finish() (or fail()) was given."""

    SYNC_TO_LMS = "sync_to_lms"  # saved; a sync task must post the lesson's grade to the LMS
    KEPT = "kept"  # saved, and the grade's sync settled with it (kept, skipped or held)
    NOTHING = "nothing"  # not saved: another worker took the submission over


@dataclass(frozen=True)
class After:
    """What follows a verdict, for whose grade on which placement."""

    next: Next
    user_id: int
    placement_id: int
    then: int | None = None  # the author's next submission, its turn come: to be sent

    @property
    def saved(self) -> bool:
        """Return whether the verdict was saved (the claim still held)."""
        return self.next is not Next.NOTHING

    @property
    def follows(self) -> tuple[Message, ...]:
        """Return the messages to send once the verdict is committed."""
        sync = (SyncMessage(self.user_id, self.placement_id),)
        then = (GradeMessage(self.then),) if self.then is not None else ()
        return (sync if self.next is Next.SYNC_TO_LMS else ()) + then


# The statements of a submission's path, built once with bound parameters: building a
# statement (and its cache key) costs more CPU than SQLite takes to run it. Only the students'
# queue takes turns: a teacher's regrade never waits for its author's submissions.
_WORK = LeasedWork(
    Submission, "case", lane=lambda row: row.queue == Queue.GRADE,
    returning=(Submission.queue,), address=(Submission.queue,),
)  # fmt: skip
# the claim, for a message of one queue: a stale message (a copy redelivered, or a retry)
# of a submission queued since on another queue (a teacher's regrade) leaves it to that one
_CLAIM_ON_QUEUE = _WORK.claiming.where(Submission.queue == bindparam("from_queue"))
_PLACEMENT = (
    select(Placement.lesson_id, Placement.line_item_url, Course.line_items_url)
    .join(Course, Course.id == Placement.course_id)
    .where(Placement.id == bindparam("placement_id"))
)
_VERDICT_COLUMNS = (
    "run_status", "duration_ms", "message", "cases", "score", "diff_line", "diff_expected",
    "grader_error", "graded_at",
)  # fmt: skip
_VERDICT = _WORK.fenced.values(
    status=Status.GRADED,
    lease_token=None,
    lease_expires_at=None,
    gradings=Submission.gradings + 1,
    progress=None,
    **{name: bindparam(f"new_{name}") for name in _VERDICT_COLUMNS},
)

# the submit path's, the same way (its policy is grades.submitting's)
_AUTHOR = select(User.id).where(User.id == bindparam("user")).with_for_update()
_RECENT = select(func.count(Submission.id), func.min(Submission.created_at)).where(
    Submission.user_id == bindparam("user"), Submission.created_at > bindparam("since")
)
_QUEUED = (
    insert(Submission)
    .values(
        placement_id=bindparam("placement"),
        user_id=bindparam("user"),
        source=bindparam("code"),
        late=bindparam("is_late"),
        queue=bindparam("to_queue"),
        created_at=bindparam("now"),
        enqueued_at=bindparam("enqueued"),
    )
    .returning(Submission.id)
)


def lock_author(connection: Connection, user_id: int) -> None:
    """Take the user's submissions one at a time until the transaction ends.

    So two submissions at once cannot both use the last attempt. SQLite's write
    transactions are serial already: there, nothing to do.
    """
    if connection.dialect.name != "sqlite":
        connection.execute(_AUTHOR, {"user": user_id})


def recent(connection: Connection, user_id: int, since: datetime) -> tuple[int, datetime | None]:
    """Return how many submissions the user made after `since`, and when the first was."""
    count, oldest = connection.execute(_RECENT, {"user": user_id, "since": since}).one()
    return int(count), oldest


def queue_new(
    connection: Connection,
    placement_id: int,
    user_id: int,
    source: str,
    late: bool,
    now: datetime,
    queue: str = Queue.GRADE,
) -> Queued:
    """Write a queued submission in the connection's transaction; say whether to send it now.

    The only writer of submission rows: the submit path and the tests' factories alike. On
    the students' queue it waits its turn while another of its author's is there (the
    submit path holds the author's lock, lock_author, so two at once cannot both go).
    """
    row = {"placement": placement_id, "user": user_id, "code": source, "is_late": late}
    waits = queue == Queue.GRADE and _WORK.in_flight(connection, user_id)
    enqueued = None if waits else now
    values = {**row, "to_queue": queue, "now": now, "enqueued": enqueued}
    created = connection.execute(_QUEUED, values)
    return Queued(int(created.scalar_one()), send=not waits)


def get(store: Store, submission_id: int) -> Submission | None:
    """Return the submission, detached, for reading its status and verdict."""
    with store.reading() as session:
        return session.get(Submission, submission_id)


def attempts_used(session: Session | Connection, placement_id: int, user_id: int) -> int:
    """Return how many submissions count against the placement's attempts.

    A verdict that is our fault (grader_error) does not cost the student an attempt.
    """
    query = select(func.count(Submission.id)).where(
        Submission.placement_id == placement_id,
        Submission.user_id == user_id,
        Submission.grader_error.is_(None),
    )
    return session.scalar(query) or 0


def has_passed(session: Session | Connection, placement_id: int, user_id: int) -> bool:
    """Return whether any of the user's submissions to the placement passed."""
    query = select(Submission.id).where(
        Submission.placement_id == placement_id,
        Submission.user_id == user_id,
        Submission.run_status == RunStatus.PASSED,
    )
    return session.scalar(query.limit(1)) is not None


def claim(
    store: Store, submission_id: int, lease_s: int, now: datetime, queue: str | None = None
) -> Claim | Held | None:
    """Take the submission for grading under a fresh lease; Held or Done when that is not on.

    `queue`: the queue the message came from; the submission must be queued on it.
    """
    claiming = None if queue is None else _CLAIM_ON_QUEUE
    with store.transaction() as connection:
        taken = _WORK.take(connection, submission_id, lease_s, now, claiming, from_queue=queue)
        if not isinstance(taken, Taken):
            return taken
        placement = connection.execute(_PLACEMENT, {"placement_id": taken.row.placement_id})
        found = placement.first()
        if found is None:
            return Done  # the placement is gone, and its submissions with it
        lesson_id, line_item_url, line_items_url = found
        to_lms = grades.reaches_lms(line_item_url, line_items_url)
        return Claim.of(taken, lesson_id, queue=taken.row.queue, to_lms=to_lms)


renew = _WORK.renew
release = _WORK.release  # its problem kept as its grader error until a verdict replaces it
pause = _WORK.pause


def finish(
    store: Store,
    held: Claim,
    verdict: Verdict,
    now: datetime,
    grader_error: str | None = None,
    lesson: Lesson | None = None,
) -> After:
    """Save the verdict if the claim still holds, with its grade's sync, atomically.

    The verdict's figures (core.figures) replace those of any verdict before it.
    Return what follows: a sync task when the grade goes to an LMS; else nothing, for the
    sync is settled here as its task would have settled it: the lesson score kept and the
    sync skipped with the reason (held instead while a regrade of the pair awaits review),
    or without the lesson at hand, skipped as having no lesson. Nothing is saved, and
    nothing follows, when another worker has taken the submission over.
    """
    diff = verdict.diff
    values = {
        "new_run_status": verdict.status.value,
        "new_duration_ms": verdict.duration_ms,
        "new_message": to_json(verdict.message),
        "new_cases": [case.record() for case in verdict.cases] or None,
        # the one place the columns SQL reads (models.Submission) are written: derived here
        "new_score": verdict.score,
        "new_diff_line": diff.line if diff else None,
        "new_diff_expected": diff.expected if diff else None,
        "new_grader_error": grader_error,
        "new_graded_at": now,
    }
    user_id, placement_id = held.user_id, held.placement_id
    with store.transaction() as connection:
        if changed(connection, _VERDICT, {**_WORK.fence(held), **values}) != 1:
            return After(Next.NOTHING, user_id, placement_id)
        figure_rows.keep(connection, held.id, verdict.figures(), now)
        then = _WORK.next_turn(connection, user_id, now) if held.queue == Queue.GRADE else None
        review = _under_review(connection, held)
        if held.to_lms:
            grades.needs_sync(connection, placement_id, user_id, now, held=review)
            return After(Next.SYNC_TO_LMS, user_id, placement_id, then)
        if lesson is None:
            grades.needs_sync(connection, placement_id, user_id, now, held=review)
            grades.settle_without_lesson(connection, placement_id, user_id, held.lesson_id, now)
        elif review or not grades.keep(connection, placement_id, user_id, lesson, now):
            grades.needs_sync(connection, placement_id, user_id, now, held=True)
        return After(Next.KEPT, user_id, placement_id, then)


def _under_review(connection: Connection, held: Claim) -> bool:
    """Return whether the grading belongs to a teacher's regrade not sent to the LMS yet."""
    if held.queue != Queue.REGRADE:  # only a teacher's bulk regrade runs on that queue
        return False
    open_regrade = select(Regrade.id).where(
        Regrade.placement_id == held.placement_id, Regrade.sent_at.is_(None)
    )
    return connection.scalar(open_regrade.limit(1)) is not None


def fail(
    store: Store, held: Claim, problem: str, now: datetime, lesson: Lesson | None = None
) -> After:
    """End the submission as an `error` grade that says the grader, not the student, failed.

    Return what follows, as finish() does.
    """
    message = say(
        "The grader could not run your submission ({tries} tries). This is our fault, not "
        "yours, and it does not use up an attempt: submit it again, or tell your teacher if "
        "it keeps happening.",
        tries=held.claims,
    )
    verdict = Verdict(status=RunStatus.ERROR, duration_ms=0, message=message)
    return finish(store, held, verdict, now, grader_error=problem, lesson=lesson)


def others_wait(store: Store, held: Claim) -> bool:
    """Return whether another student's work (a submission; on the students' queue, a
    practice run too) waits in the claim's queue."""
    return fair_share.others_wait(store, held.user_id, held.queue)


def turns_due(store: Store, now: datetime, limit: int = 500) -> list[GradeMessage]:
    """Send the oldest waiting submission of each student who has none in the queue.

    finish() sends the next one itself; this is for a turn it missed (a submission deleted,
    or written at the moment its author's last one was graded). Return their messages.
    """
    return [GradeMessage(sent) for sent in _WORK.turns_due(store, now, limit)]


def stuck(
    store: Store, now: datetime, queued_deadline_s: int, limit: int = 500
) -> list[GradeMessage]:
    """Mark submissions queued past the deadline, or running past their lease, as enqueued now.

    Return their messages, each for its own queue and first in it (it has waited longest).
    """
    found = _WORK.stuck(store, now, queued_deadline_s, limit)
    return [GradeMessage(row.id, Queue(row.queue), Order.FIRST) for row in found]


def request_regrade(store: Store, placement_id: int, now: datetime) -> list[int]:
    """Queue every graded submission of a placement again, on the bulk queue; return their ids."""
    with store.session() as session:
        return queue_again(session, placement_id, now)


def queue_again(session: Session, placement_id: int, now: datetime) -> list[int]:
    """In the session's transaction, queue the placement's graded submissions for a regrade."""
    ids = list(
        session.scalars(
            select(Submission.id).where(
                Submission.placement_id == placement_id, Submission.status == Status.GRADED
            )
        )
    )
    if ids:
        changed(
            session,
            update(Submission)
            .where(Submission.id.in_(ids), Submission.status == Status.GRADED)
            .values(
                status=Status.QUEUED,
                queue=Queue.REGRADE,
                enqueued_at=now,
                regrades=Submission.regrades + 1,
            ),
        )
    return ids
