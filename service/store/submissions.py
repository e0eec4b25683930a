"""Submissions through their life: created queued, claimed under a lease, graded once.

A worker claims a submission with one conditional UPDATE (queued, or running under an
expired lease) that writes a fresh lease token; it saves the verdict with another that
matches that token and `running`, and in the same statement counts the grading. A worker
whose lease was taken over (it was too slow, or presumed dead) therefore cannot save: the
final write is fenced, and no submission is ever graded twice. finish() says what follows
the verdict (After), so that the worker does not decide it again.

A student's submissions take turns: while one of theirs is in the students' queue (queued
with its message sent, or running), a new one waits (queued, `enqueued_at` null) and is sent
when the one before is graded, at the tail of the queue, behind every other student's. So a
student with ten endless loops holds one place in the queue, not ten. A grading that has had
its slice of the sandbox pauses when others wait (core.verdicts.Turn): its cases' results so
far are kept (`progress`) and it goes to the tail again. A practice run (practice_runs.py)
waiting in the students' queue is other students' work too (fair_share.py).
"""

from __future__ import annotations

import enum
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import (
    ColumnElement,
    Connection,
    Update,
    and_,
    bindparam,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session, aliased

from core.lessons import Lesson
from core.messages import say, to_json
from core.runs import RunResult, RunStatus, result_from, result_record
from core.verdicts import Verdict
from service.queue import GradeMessage, Message, Order, Queue, SyncMessage
from service.store import fair_share, figure_rows, grades
from service.store.database import Store, changed
from service.store.models import Course, Placement, Regrade, Submission, User
from service.store.models import SubmissionStatus as Status


@dataclass(frozen=True)
class Claim:
    """A worker's hold on one submission, and what it needs to grade it."""

    submission_id: int
    token: str
    claims: int
    source: str
    lesson_id: str
    placement_id: int
    user_id: int
    queue: str = Queue.GRADE
    to_lms: bool = True  # the placement's grades go to an LMS (see grades.reaches_lms)
    # its first cases' results, by case name, from a turn that paused
    done: tuple[tuple[str, RunResult], ...] = ()
    tried: tuple[str, ...] = ()  # cases after those whose first try was cut short


@dataclass(frozen=True)
class Queued:
    """A submission just written, and whether its message is to be sent now (else it waits
    its turn behind its author's submission in the queue)."""

    submission_id: int
    send: bool


@dataclass(frozen=True)
class Held:
    """Another worker holds the submission until `until`."""

    until: datetime


Done = None  # graded already, or gone: nothing to do


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


# The statements of every submission's path, built once with bound parameters: building a
# statement (and its cache key) costs more CPU than SQLite takes to run it.
_CLAIM = (
    update(Submission)
    .where(
        Submission.id == bindparam("submission_id"),
        or_(
            Submission.status == Status.QUEUED,
            and_(
                Submission.status == Status.RUNNING, Submission.lease_expires_at < bindparam("now")
            ),
        ),
    )
    .values(
        status=Status.RUNNING,
        lease_token=bindparam("token"),
        lease_expires_at=bindparam("until"),
        claims=Submission.claims + 1,
    )
    .returning(
        Submission.claims,
        Submission.source,
        Submission.placement_id,
        Submission.user_id,
        Submission.queue,
        Submission.progress,
    )
)
# the same, for a message of one queue: a stale message (a copy redelivered, or a retry)
# of a submission queued since on another queue (a teacher's regrade) leaves it to that one
_CLAIM_ON_QUEUE = _CLAIM.where(Submission.queue == bindparam("from_queue"))
_LEASE = select(Submission.status, Submission.lease_expires_at).where(
    Submission.id == bindparam("submission_id")
)
_PLACEMENT = (
    select(Placement.lesson_id, Placement.line_item_url, Course.line_items_url)
    .join(Course, Course.id == Placement.course_id)
    .where(Placement.id == bindparam("placement_id"))
)
_VERDICT_COLUMNS = (
    "run_status", "duration_ms", "message", "cases", "score", "diff_line", "diff_expected",
    "grader_error", "graded_at",
)  # fmt: skip
_VERDICT = (
    update(Submission)
    .where(
        Submission.id == bindparam("submission_id"),
        Submission.lease_token == bindparam("token"),
        Submission.status == Status.RUNNING,
    )
    .values(
        status=Status.GRADED,
        lease_token=None,
        lease_expires_at=None,
        gradings=Submission.gradings + 1,
        progress=None,
        **{name: bindparam(f"new_{name}") for name in _VERDICT_COLUMNS},
    )
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


def _in_grade_queue(row: type[Submission]) -> ColumnElement[bool]:
    """Return the condition that the row is in the students' queue: its message sent, or running."""
    return and_(
        row.queue == Queue.GRADE,
        row.status.in_((Status.QUEUED, Status.RUNNING)),
        row.enqueued_at.is_not(None),
    )


def _waiting_turn(row: type[Submission]) -> ColumnElement[bool]:
    """Return the condition that the row waits for its author's turn (stored, not sent)."""
    return and_(row.queue == Queue.GRADE, row.status == Status.QUEUED, row.enqueued_at.is_(None))


# the author's submission in the students' queue
_IN_FLIGHT = (
    select(Submission.id)
    .where(Submission.user_id == bindparam("user"), _in_grade_queue(Submission))
    .limit(1)
)
_NEXT_WAITING = (
    select(Submission.id)
    .where(Submission.user_id == bindparam("user"), _waiting_turn(Submission))
    .order_by(Submission.id)
    .limit(1)
)
_SEND = (
    update(Submission)
    .where(Submission.id == bindparam("submission_id"), Submission.enqueued_at.is_(None))
    .values(enqueued_at=bindparam("now"))
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
    waits = queue == Queue.GRADE and connection.execute(_IN_FLIGHT, {"user": user_id}).first()
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
    token = secrets.token_hex(16)
    until = now + timedelta(seconds=lease_s)
    values = {"submission_id": submission_id, "now": now, "token": token, "until": until}
    statement = _CLAIM if queue is None else _CLAIM_ON_QUEUE
    with store.transaction() as connection:
        taken = connection.execute(statement, {**values, "from_queue": queue}).first()
        if taken is None:
            row = connection.execute(_LEASE, {"submission_id": submission_id}).first()
            if (
                row is not None
                and row.status == Status.RUNNING
                and row.lease_expires_at is not None
            ):
                return Held(row.lease_expires_at)
            return Done
        placement = connection.execute(_PLACEMENT, {"placement_id": taken.placement_id}).first()
        if placement is None:
            return Done  # the placement is gone, and its submissions with it
        lesson_id, line_item_url, line_items_url = placement
        return Claim(
            submission_id=submission_id,
            token=token,
            claims=taken.claims,
            source=taken.source,
            lesson_id=lesson_id,
            placement_id=taken.placement_id,
            user_id=taken.user_id,
            queue=taken.queue,
            to_lms=grades.reaches_lms(line_item_url, line_items_url),
            done=tuple(
                (str(kept["case"]), result_from(kept["result"]))
                for kept in taken.progress or ()
                if "result" in kept
            ),
            tried=tuple(str(kept["case"]) for kept in taken.progress or () if kept.get("tried")),
        )


def _held_by(held: Claim) -> Update:
    """Return an update of the submission that changes it only while `held` holds its lease."""
    return update(Submission).where(
        Submission.id == held.submission_id,
        Submission.lease_token == held.token,
        Submission.status == Status.RUNNING,
    )


def _give_back(held: Claim, now: datetime) -> Update:
    """Return the update that hands a held submission back to its queue's tail, sent now."""
    return _held_by(held).values(
        status=Status.QUEUED, lease_token=None, lease_expires_at=None, enqueued_at=now
    )


def renew(store: Store, held: Claim, lease_s: int, now: datetime) -> bool:
    """Extend the claim's lease to `lease_s` from now; False when it no longer holds."""
    with store.session() as session:
        renewed = changed(
            session,
            _held_by(held).values(lease_expires_at=now + timedelta(seconds=lease_s)),
        )
        return renewed == 1


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
        fence = {"submission_id": held.submission_id, "token": held.token}
        if changed(connection, _VERDICT, {**fence, **values}) != 1:
            return After(Next.NOTHING, user_id, placement_id)
        figure_rows.keep(connection, held.submission_id, verdict.figures(), now)
        then = _next_turn(connection, user_id, now) if held.queue == Queue.GRADE else None
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


def _next_turn(connection: Connection, user_id: int, now: datetime) -> int | None:
    """Mark the user's oldest waiting submission as sent now, unless another of theirs is in
    the queue; return its id, to be sent after the commit."""
    if connection.execute(_IN_FLIGHT, {"user": user_id}).first() is not None:
        return None
    waiting = connection.scalar(_NEXT_WAITING, {"user": user_id})
    if waiting is None:
        return None
    sent = changed(connection, _SEND, {"submission_id": waiting, "now": now})
    return int(waiting) if sent == 1 else None


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


def release(store: Store, held: Claim, now: datetime, problem: str | None = None) -> bool:
    """Give the submission back to the queue (the grader failed; it will be tried again).

    `problem` is kept as its grader error, so that its teacher sees "grader error, retrying"
    until a verdict replaces it.
    """
    with store.session() as session:
        return changed(session, _give_back(held, now).values(grader_error=problem)) == 1


def pause(
    store: Store,
    held: Claim,
    done: Sequence[tuple[str, RunResult]],
    now: datetime,
    tried: Sequence[str] = (),
) -> bool:
    """Give the submission back to its queue with its first cases' results (and the cases
    cut short after them), to be taken again behind fresh work; False when the claim no
    longer holds.

    A pause is no lost worker: the claim it made is not counted against grade_attempts.
    """
    progress: list[dict[str, object]] = [
        {"case": name, "result": result_record(ran)} for name, ran in done
    ]
    progress += [{"case": name, "tried": True} for name in tried]
    with store.session() as session:
        given_back = _give_back(held, now).values(claims=Submission.claims - 1, progress=progress)
        return changed(session, given_back) == 1


def others_wait(store: Store, held: Claim) -> bool:
    """Return whether another student's work (a submission; on the students' queue, a
    practice run too) waits in the claim's queue."""
    return fair_share.others_wait(store, held.user_id, held.queue)


def turns_due(store: Store, now: datetime, limit: int = 500) -> list[GradeMessage]:
    """Send the oldest waiting submission of each student who has none in the queue.

    finish() sends the next one itself; this is for a turn it missed (a submission deleted,
    or written at the moment its author's last one was graded). Return their messages.
    """
    waiting, busy = aliased(Submission), aliased(Submission)
    in_flight = select(busy.id).where(busy.user_id == waiting.user_id, _in_grade_queue(busy))
    oldest_waiting = (
        select(func.min(waiting.id))
        .where(_waiting_turn(waiting), ~in_flight.exists())
        .group_by(waiting.user_id)
        .limit(limit)
    )
    found: list[GradeMessage] = []
    with store.session() as session:
        for submission_id in list(session.scalars(oldest_waiting)):
            if changed(session, _SEND, {"submission_id": submission_id, "now": now}) == 1:
                found.append(GradeMessage(int(submission_id)))
    return found


def stuck(
    store: Store, now: datetime, queued_deadline_s: int, limit: int = 500
) -> list[GradeMessage]:
    """Mark submissions queued past the deadline, or running past their lease, as enqueued now.

    Return their messages, each for its own queue and first in it (it has waited longest).
    Each row is taken with a conditional update, so that two sweeps at once enqueue it once.
    """
    queued_before = now - timedelta(seconds=queued_deadline_s)
    found: list[GradeMessage] = []
    with store.session() as session:
        candidates = session.execute(
            select(Submission.id, Submission.queue, Submission.enqueued_at)
            .where(
                or_(
                    and_(
                        Submission.status == Status.QUEUED, Submission.enqueued_at < queued_before
                    ),
                    and_(
                        Submission.status == Status.RUNNING,
                        Submission.lease_expires_at < now,
                        # not enqueued since the lease ran out (or that message is late too)
                        or_(
                            Submission.enqueued_at < Submission.lease_expires_at,
                            Submission.enqueued_at < queued_before,
                        ),
                    ),
                )
            )
            .order_by(Submission.id)
            .limit(limit)
        ).all()
        for submission_id, queue, enqueued_at in candidates:
            moved = changed(
                session,
                update(Submission)
                .where(Submission.id == submission_id, Submission.enqueued_at == enqueued_at)
                .values(enqueued_at=now),
            )
            if moved == 1:
                found.append(GradeMessage(submission_id, Queue(queue), Order.FIRST))
    return found


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
