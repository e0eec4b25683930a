"""Submissions through their life: created queued, claimed under a lease, graded once.

A worker claims a submission with one conditional UPDATE (queued, or running under an
expired lease) that writes a fresh lease token; it saves the verdict with another that
matches that token and `running`, and in the same statement counts the grading. A worker
whose lease was taken over (it was too slow, or presumed dead) therefore cannot save: the
final write is fenced, and no submission is ever graded twice.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, and_, bindparam, func, or_, select, update
from sqlalchemy.orm import Session

from core.lessons import Lesson
from core.runs import RunStatus
from core.verdicts import Verdict
from service.store import grades
from service.store.database import Store, changed
from service.store.models import Course, Placement, Regrade, Submission

QUEUED, RUNNING, GRADED = "queued", "running", "graded"


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
    queue: str = "grade"
    to_lms: bool = True  # the placement's grades go to an LMS line item (or can make one)


@dataclass(frozen=True)
class Held:
    """Another worker holds the submission until `until`."""

    until: datetime


Done = None  # graded already, or gone: nothing to do

# The statements of every submission's path, built once with bound parameters: building a
# statement (and its cache key) costs more CPU than SQLite takes to run it.
_CLAIM = (
    update(Submission)
    .where(
        Submission.id == bindparam("submission_id"),
        or_(
            Submission.status == QUEUED,
            and_(Submission.status == RUNNING, Submission.lease_expires_at < bindparam("now")),
        ),
    )
    .values(
        status=RUNNING,
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
    )
)
_LEASE = select(Submission.status, Submission.lease_expires_at).where(
    Submission.id == bindparam("submission_id")
)
_PLACEMENT = (
    select(Placement.lesson_id, Placement.line_item_url, Course.line_items_url)
    .join(Course, Course.id == Placement.course_id)
    .where(Placement.id == bindparam("placement_id"))
)
_VERDICT_COLUMNS = (
    "run_status", "score", "stdout", "stderr", "exit_code", "duration_ms", "feedback",
    "diff_line", "diff_expected", "diff_got", "grader_error", "graded_at",
)  # fmt: skip
_VERDICT = (
    update(Submission)
    .where(
        Submission.id == bindparam("submission_id"),
        Submission.lease_token == bindparam("token"),
        Submission.status == RUNNING,
    )
    .values(
        status=GRADED,
        lease_token=None,
        lease_expires_at=None,
        gradings=Submission.gradings + 1,
        **{name: bindparam(f"new_{name}") for name in _VERDICT_COLUMNS},
    )
)


def create(
    store: Store, placement_id: int, user_id: int, source: str, late: bool, queue: str = "grade"
) -> int:
    """Write a queued submission and commit it; return its id."""
    with store.session() as session:
        submission = Submission(
            placement_id=placement_id, user_id=user_id, source=source, late=late, queue=queue
        )
        session.add(submission)
        session.flush()
        return submission.id


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
        Submission.run_status == "passed",
    )
    return session.scalar(query.limit(1)) is not None


def claim(store: Store, submission_id: int, lease_s: int, now: datetime) -> Claim | Held | None:
    """Take the submission for grading under a fresh lease; Held or Done when that is not on."""
    token = secrets.token_hex(16)
    until = now + timedelta(seconds=lease_s)
    with store.transaction() as connection:
        taken = connection.execute(
            _CLAIM, {"submission_id": submission_id, "now": now, "token": token, "until": until}
        ).first()
        if taken is None:
            row = connection.execute(_LEASE, {"submission_id": submission_id}).first()
            if row is not None and row.status == RUNNING and row.lease_expires_at is not None:
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
            to_lms=bool(line_item_url or line_items_url),
        )


def finish(
    store: Store,
    held: Claim,
    verdict: Verdict,
    now: datetime,
    grader_error: str | None = None,
    lesson: Lesson | None = None,
) -> bool:
    """Save the verdict if the claim still holds, with the grade sync it needs, atomically.

    Given the lesson, a placement whose grades go to no LMS gets its lesson score kept in the
    same transaction, its sync recorded as skipped: no sync task is needed (see kept_at_once).
    Return False (and save nothing) when another worker has taken the submission over.
    """
    diff = verdict.diff
    values = {
        "new_run_status": verdict.status.value,
        "new_score": verdict.score,
        "new_stdout": verdict.stdout,
        "new_stderr": verdict.stderr,
        "new_exit_code": verdict.exit_code,
        "new_duration_ms": verdict.duration_ms,
        "new_feedback": verdict.feedback,
        "new_diff_line": diff.line if diff else None,
        "new_diff_expected": diff.expected if diff else None,
        "new_diff_got": diff.got if diff else None,
        "new_grader_error": grader_error,
        "new_graded_at": now,
    }
    with store.transaction() as connection:
        fence = {"submission_id": held.submission_id, "token": held.token}
        if changed(connection, _VERDICT, {**fence, **values}) != 1:
            return False
        review = _under_review(connection, held)
        if lesson is not None and not held.to_lms and not review:
            if not grades.keep(connection, held.placement_id, held.user_id, lesson, now):
                grades.needs_sync(connection, held.placement_id, held.user_id, now, held=True)
        else:
            grades.needs_sync(connection, held.placement_id, held.user_id, now, held=review)
        return True


def kept_at_once(held: Claim, lesson: Lesson | None) -> bool:
    """Return whether finish() keeps the grade itself, so that no sync task need follow.

    So it does for a placement whose grades go to no LMS, when the lesson is at hand (a held
    sync of a regrade under review waits for the teacher, who sends it).
    """
    return lesson is not None and not held.to_lms


def _under_review(connection: Connection, held: Claim) -> bool:
    """Return whether the grading belongs to a teacher's regrade not sent to the LMS yet."""
    if held.queue != "regrade":
        return False
    open_regrade = select(Regrade.id).where(
        Regrade.placement_id == held.placement_id, Regrade.sent_at.is_(None)
    )
    return connection.scalar(open_regrade.limit(1)) is not None


def fail(
    store: Store, held: Claim, problem: str, now: datetime, lesson: Lesson | None = None
) -> bool:
    """End the submission as an `error` grade that says the grader, not the student, failed."""
    verdict = Verdict(
        status=RunStatus.ERROR,
        score=0.0,
        stdout="",
        stderr="",
        exit_code=None,
        duration_ms=0,
        feedback=(
            f"The grader could not run your submission ({held.claims} tries). This is our "
            "fault, not yours, and it does not use up an attempt: submit it again, or tell "
            "your teacher if it keeps happening."
        ),
    )
    return finish(store, held, verdict, now, grader_error=problem, lesson=lesson)


def release(store: Store, held: Claim, now: datetime, problem: str | None = None) -> bool:
    """Give the submission back to the queue (the grader failed; it will be tried again).

    `problem` is kept as its grader error, so that its teacher sees "grader error, retrying"
    until a verdict replaces it.
    """
    with store.session() as session:
        released = changed(
            session,
            update(Submission)
            .where(
                Submission.id == held.submission_id,
                Submission.lease_token == held.token,
                Submission.status == RUNNING,
            )
            .values(
                status=QUEUED,
                lease_token=None,
                lease_expires_at=None,
                enqueued_at=now,
                grader_error=problem,
            ),
        )
        return released == 1


def stuck(
    store: Store, now: datetime, queued_deadline_s: int, limit: int = 500
) -> list[tuple[int, str]]:
    """Mark submissions queued past the deadline, or running past their lease, as enqueued now.

    Return their (id, queue) for enqueueing. Each row is taken with a conditional update, so
    that two sweeps at once enqueue it once.
    """
    queued_before = now - timedelta(seconds=queued_deadline_s)
    found: list[tuple[int, str]] = []
    with store.session() as session:
        candidates = session.execute(
            select(Submission.id, Submission.queue, Submission.enqueued_at)
            .where(
                or_(
                    and_(Submission.status == QUEUED, Submission.enqueued_at < queued_before),
                    and_(
                        Submission.status == RUNNING,
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
                found.append((submission_id, queue))
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
                Submission.placement_id == placement_id, Submission.status == GRADED
            )
        )
    )
    if ids:
        changed(
            session,
            update(Submission)
            .where(Submission.id.in_(ids), Submission.status == GRADED)
            .values(
                status=QUEUED,
                queue="regrade",
                enqueued_at=now,
                regrades=Submission.regrades + 1,
            ),
        )
    return ids
