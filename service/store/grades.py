"""Lesson grades and the grade-sync outbox (one row per post the LMS needs); a sync's own
read and writes are service.store.outbox's."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Float,
    bindparam,
    case,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session

from core import overrides
from core.lesson_scores import LessonScore
from core.lessons import Lesson
from core.overrides import Scored
from core.readbacks import compare
from core.syncs import NO_LINE_ITEM, Due
from core.syncs import missing_lesson as missing_lesson
from core.syncs import reaches_lms as reaches_lms
from service.queue import SyncMessage
from service.store import override_rows
from service.store.database import changed
from service.store.models import (
    Course,
    Grade,
    GradeSync,
    Placement,
    PolicyException,
    QuestionAnswer,
    Submission,
    SubmissionStatus,
    SyncStatus,
    User,
)
from service.store.policies import LATE_PENALTY, excepted

# Statements that run for every graded submission, built once with bound parameters:
# building a statement costs more CPU than SQLite takes to run it.
_PAIR: dict[str, Any] = {"placement_id": bindparam("placement"), "user_id": bindparam("user")}
_NEW_SYNC = insert(GradeSync).values(
    **_PAIR,
    status=bindparam("sync_status"),
    created_at=bindparam("now"),
    updated_at=bindparam("now"),
    next_attempt_at=bindparam("now"),
)


def _pair_in(status: SyncStatus) -> tuple[Any, ...]:
    """Return the conditions that pick the pair's sync rows in `status`."""
    return (
        GradeSync.placement_id == bindparam("placement"),
        GradeSync.user_id == bindparam("user"),
        GradeSync.status == status,
    )


_PAIR_PENDING = _pair_in(SyncStatus.PENDING)
_HOLD_PAIR = (
    update(GradeSync)
    .where(*_PAIR_PENDING)
    .values(status=SyncStatus.HELD, updated_at=bindparam("now"))
)
_SKIP_PAIR = (
    update(GradeSync)
    .where(*_PAIR_PENDING)
    .values(
        status=SyncStatus.SKIPPED,
        attempts=GradeSync.attempts + 1,
        updated_at=bindparam("now"),
        next_attempt_at=bindparam("now"),
        last_error=bindparam("reason"),
    )
)
# skipped with the score kept: for the gradebook, when the LMS has no line item to post to
_SKIP_PENDING = _SKIP_PAIR.values(
    score_given=bindparam("given"), score_maximum=bindparam("maximum")
)
_HELD_PAIR = select(GradeSync.id).where(*_pair_in(SyncStatus.HELD)).limit(1)

# the pair's late penalty, and whether a regraded score of the pair waits for review, in one go
_PENALTY = (
    select(LATE_PENALTY, _HELD_PAIR.exists())
    .select_from(Placement)
    .outerjoin(PolicyException, excepted(Placement.id, bindparam("user")))
    .where(Placement.id == bindparam("placement"))
)
_ANSWERS = select(QuestionAnswer.question_id, QuestionAnswer.earned, QuestionAnswer.late).where(
    QuestionAnswer.placement_id == bindparam("placement"),
    QuestionAnswer.user_id == bindparam("user"),
)
# a graded submission's score as the lesson's counts it: late, it loses the late penalty
COUNTED = case(
    (Submission.late, Submission.score * bindparam("late_factor", type_=Float)),
    else_=Submission.score,
)
_BEST = select(func.max(COUNTED)).where(
    Submission.placement_id == bindparam("placement"),
    Submission.user_id == bindparam("user"),
    Submission.status == SubmissionStatus.GRADED,
)
_GRADE: dict[str, Any] = {
    "score_given": bindparam("given"),
    "score_maximum": bindparam("maximum"),
    "updated_at": bindparam("now"),
}
_UPDATE_GRADE = (
    update(Grade)
    .where(Grade.placement_id == bindparam("placement"), Grade.user_id == bindparam("user"))
    .values(**_GRADE)
)
_INSERT_GRADE = insert(Grade).values(**_PAIR, **_GRADE)


def needs_sync(
    session: Session | Connection,
    placement_id: int,
    user_id: int,
    now: datetime,
    held: bool = False,
) -> None:
    """Record that the user's grade on the placement changed and must reach the LMS.

    A new row every time: a sync settles only the rows it read before computing the score,
    so a change saved while it posts keeps a pending row of its own. A `held` row waits
    for release_held() (a regrade under review, or the placement's release) before any
    sync takes it.
    """
    row = {"placement": placement_id, "user": user_id, "now": now}
    changed(
        session, _NEW_SYNC, {**row, "sync_status": SyncStatus.HELD if held else SyncStatus.PENDING}
    )


def awaits_review(session: Session | Connection, placement_id: int, user_id: int) -> bool:
    """Return whether a held score of the user waits (a regrade's, or the placement's)."""
    return (
        session.execute(_HELD_PAIR, {"placement": placement_id, "user": user_id}).first()
        is not None
    )


def release_held(session: Session, placement_id: int, now: datetime) -> list[int]:
    """Make the placement's held syncs pending; return the users whose grades now go out.

    The one release of held scores, a regrade's and a placement's alike: a sync of a pair
    whose score is still held (the placement holds it, or a regrade under review) holds it
    again. Attempts start afresh: a held score's post says only "handed in".
    """
    users = sorted(
        set(
            session.scalars(
                select(GradeSync.user_id).where(
                    GradeSync.placement_id == placement_id, GradeSync.status == SyncStatus.HELD
                )
            )
        )
    )
    changed(
        session,
        update(GradeSync)
        .where(GradeSync.placement_id == placement_id, GradeSync.status == SyncStatus.HELD)
        .values(status=SyncStatus.PENDING, attempts=0, next_attempt_at=now, updated_at=now),
    )
    return users


def resend(
    session: Session, placement_ids: list[int], user_id: int | None, now: datetime
) -> list[tuple[int, int]]:
    """Send again what did not reach the LMS; return the (user, placement) pairs that go.

    Failed syncs become pending with fresh attempts; a pair whose score the LMS lost (a read
    of its results found none, or another: core.readbacks) gets a pending sync of its own.
    `user_id` None resends every such pair of the placements.
    """
    where = [GradeSync.placement_id.in_(placement_ids), GradeSync.status == SyncStatus.FAILED]
    if user_id is not None:
        where.append(GradeSync.user_id == user_id)
    rows = session.execute(select(GradeSync.user_id, GradeSync.placement_id).where(*where))
    pairs = {(int(user), int(placement)) for user, placement in rows}
    changed(
        session,
        update(GradeSync)
        .where(*where)
        .values(status=SyncStatus.PENDING, attempts=0, next_attempt_at=now, updated_at=now),
    )
    for user, placement in lost(session, placement_ids, user_id):
        if (user, placement) not in pairs:
            needs_sync(session, placement, user, now)
            pairs.add((user, placement))
    return sorted(pairs)


def lost(
    session: Session, placement_ids: list[int], user_id: int | None = None
) -> list[tuple[int, int]]:
    """Return the (user, placement) pairs whose score a read found the LMS lacking."""
    where: list[ColumnElement[bool]] = [
        Grade.placement_id.in_(placement_ids),
        Grade.read_at.is_not(None),
    ]
    if user_id is not None:
        where.append(Grade.user_id == user_id)
    rows = session.execute(
        select(
            Grade.user_id,
            Grade.placement_id,
            Grade.lms_given,
            Grade.lms_maximum,
            Grade.read_given,
            Grade.read_maximum,
        ).where(*where)
    )
    found = []
    for user, placement, given, maximum, read_given, read_maximum in rows:
        sent = None if given is None else LessonScore(given, maximum or 0.0)
        read = None if read_given is None else LessonScore(read_given, read_maximum or 0.0)
        if compare(True, sent, read).lost:
            found.append((int(user), int(placement)))
    return found


@dataclass(frozen=True)
class Holds:
    """What the LMS holds of a pair (the last accepted post), and who is posting now."""

    given: float | None
    maximum: float | None
    at: datetime | None  # the accepted post's timestamp, whole seconds
    posting_until: datetime | None  # a sync's turn to post ends then (None: nobody's turn)


def holds(session: Session, placement_id: int, user_id: int) -> Holds:
    """Return what the LMS holds of the pair, as far as the tool knows."""
    row = session.execute(
        select(Grade.lms_given, Grade.lms_maximum, Grade.lms_at, Grade.posting_until).where(
            Grade.placement_id == placement_id, Grade.user_id == user_id
        )
    ).first()
    return Holds(*row) if row is not None else Holds(None, None, None, None)


def take_turn(
    session: Session,
    placement_id: int,
    user_id: int,
    now: datetime,
    until: datetime,
    after: Due | None = None,
) -> bool:
    """Take the pair's turn to post until `until`, unless another sync holds it; say whether.

    A conditional update: of two syncs at once, one takes it. A sync that dies holding the
    turn loses it at `until`. With `after`, only while the LMS holds the stamp that read
    found: a post accepted since would make the next one's stamp stale.
    """
    where = [
        Grade.placement_id == placement_id,
        Grade.user_id == user_id,
        or_(Grade.posting_until.is_(None), Grade.posting_until <= now),
    ]
    if after is not None:
        at = after.lms_at
        where.append(Grade.lms_at.is_(None) if at is None else Grade.lms_at == at)
    return changed(session, update(Grade).where(*where).values(posting_until=until)) == 1


def end_turn(
    session: Session,
    placement_id: int,
    user_id: int,
    accepted: LessonScore | None = None,
    at: datetime | None = None,
    blank_at: datetime | None = None,
) -> None:
    """End the pair's turn to post; with `accepted`, record it as what the LMS now holds.

    With `blank_at`, the LMS took a held score's post at that stamp: it shows no points.
    Either makes what the last read of the LMS's results found out of date.
    """
    values: dict[str, object] = {"posting_until": None}
    if accepted is not None:
        values |= {"lms_given": accepted.given, "lms_maximum": accepted.maximum, "lms_at": at}
        values |= {"read_given": None, "read_maximum": None, "read_at": None}
    elif blank_at is not None:
        values |= {"lms_given": None, "lms_maximum": None, "lms_at": blank_at}
        values |= {"read_given": None, "read_maximum": None, "read_at": None}
    changed(
        session,
        update(Grade)
        .where(Grade.placement_id == placement_id, Grade.user_id == user_id)
        .values(**values),
    )


def score(session: Session, placement: Placement, lesson: Lesson, user_id: int) -> LessonScore:
    """Compute the user's lesson score: the teacher's override while one stands, else the
    questions as answered plus the best exercise result (see scored)."""
    return scored(session, placement, lesson, user_id).score


def scored(session: Session, placement: Placement, lesson: Lesson, user_id: int) -> Scored:
    """Compute the user's automatic lesson score, and put the override that stands beside it.

    Late work loses the placement's late penalty, item by item (nothing if the user's
    exception waives it).
    """
    return _score(
        session, placement.id, late_penalty(session, placement.id, user_id), lesson, user_id
    )


def late_penalty(session: Session | Connection, placement_id: int, user_id: int) -> float:
    """Return the share (0..1) the user's late work loses: none if their exception waives it."""
    found = session.execute(_PENALTY, {"placement": placement_id, "user": user_id}).first()
    return float(found[0]) if found is not None else 0.0


def _score(
    session: Session | Connection, placement_id: int, penalty: float, lesson: Lesson, user_id: int
) -> Scored:
    pair = {"placement": placement_id, "user": user_id}
    answers = {
        question_id: earned * (1 - penalty if late else 1)
        for question_id, earned, late in session.execute(_ANSWERS, pair)
    }
    question_points = [(answers.get(q.id, 0.0), q.points) for q in lesson.questions]
    override = override_rows.standing(session, placement_id, user_id)
    if lesson.exercise is None:
        return overrides.scored(question_points, None, None, override)
    fraction = session.scalar(_BEST, {**pair, "late_factor": 1 - penalty})
    return overrides.scored(question_points, lesson.exercise.points, fraction, override)


def keep(
    connection: Connection, placement_id: int, user_id: int, lesson: Lesson, now: datetime
) -> bool:
    """Keep the user's lesson score on a placement whose grades go to no LMS, and say so.

    What a sync would do, done in the transaction that changed the grade: the score is
    saved for the gradebook and the pair's syncs, this one included, are recorded as skipped
    with the reason, so that no sync task needs to follow. Return False, doing nothing, while
    a regraded score of the pair waits for the teacher's review (the change waits with it).
    """
    found = connection.execute(_PENALTY, {"placement": placement_id, "user": user_id}).first()
    penalty, waits = found if found is not None else (0.0, False)
    if waits:
        return False
    score = _score(connection, placement_id, float(penalty), lesson, user_id).score
    save_grade(connection, placement_id, user_id, score, now)
    pair = {"placement": placement_id, "user": user_id, "now": now}
    changed(connection, _NEW_SYNC, {**pair, "sync_status": SyncStatus.PENDING})
    kept = {"given": score.given, "maximum": score.maximum, "reason": NO_LINE_ITEM}
    changed(connection, _SKIP_PENDING, {**pair, **kept})
    return True


def settle_without_lesson(
    connection: Connection, placement_id: int, user_id: int, lesson_id: str, now: datetime
) -> None:
    """Settle the pair's pending syncs as a sync would without the lesson in the catalog.

    Held with a regraded score of the pair that awaits the teacher's review (they go out
    with it), else skipped with the reason: there is no score to compute, nor to post.
    """
    pair = {"placement": placement_id, "user": user_id, "now": now}
    if awaits_review(connection, placement_id, user_id):
        changed(connection, _HOLD_PAIR, pair)
    else:
        changed(connection, _SKIP_PAIR, {**pair, "reason": missing_lesson(lesson_id)})


def save_grade(
    session: Session | Connection,
    placement_id: int,
    user_id: int,
    lesson: LessonScore,
    now: datetime,
) -> None:
    """Keep the user's newest lesson score for the gradebook."""
    values = {
        "placement": placement_id,
        "user": user_id,
        "given": lesson.given,
        "maximum": lesson.maximum,
        "now": now,
    }
    if not changed(session, _UPDATE_GRADE, values):
        changed(session, _INSERT_GRADE, values)


@dataclass(frozen=True)
class Pending:
    """A pair's pending syncs, the most attempts made on any, and where the score goes."""

    sync_ids: tuple[int, ...]
    attempts: int
    placement: Placement
    user_sub: str
    platform_id: int
    line_items_url: str
    due_at: datetime | None = None  # the earliest of their next attempts
    locale: str | None = None  # the user's LMS language (their last launch's)


def pending(session: Session, placement_id: int, user_id: int) -> Pending | None:
    """Return the pair's pending syncs, or None when there are none."""
    rows = session.execute(
        select(GradeSync.id, GradeSync.attempts, GradeSync.next_attempt_at).where(
            GradeSync.placement_id == placement_id,
            GradeSync.user_id == user_id,
            GradeSync.status == SyncStatus.PENDING,
        )
    ).all()
    if not rows:
        return None
    placement, user_sub, locale, platform_id, line_items_url = session.execute(
        select(Placement, User.sub, User.locale, Course.platform_id, Course.line_items_url)
        .join(Course, Course.id == Placement.course_id)
        .join(User, User.id == user_id)
        .where(Placement.id == placement_id)
    ).one()
    return Pending(
        sync_ids=tuple(row.id for row in rows),
        attempts=max(row.attempts for row in rows),
        placement=placement,
        user_sub=user_sub,
        platform_id=platform_id,
        line_items_url=line_items_url or "",
        due_at=min(row.next_attempt_at for row in rows),
        locale=locale,
    )


def settle(
    session: Session,
    sync_ids: tuple[int, ...],
    status: SyncStatus,
    now: datetime,
    *,
    lesson: LessonScore | None = None,
    response: str | None = None,
    error: str | None = None,
    retry_at: datetime | None = None,
) -> None:
    """Record one attempt on pending syncs: sent, skipped, failed, or pending until retry_at."""
    values: dict[str, object] = {
        "status": status,
        "attempts": GradeSync.attempts + 1,
        "updated_at": now,
        "next_attempt_at": retry_at or now,
    }
    if lesson is not None:
        values |= {"score_given": lesson.given, "score_maximum": lesson.maximum}
    if response is not None:
        values["lms_response"] = response[:2000]
    if error is not None:
        values["last_error"] = error[:2000]
    changed(
        session,
        update(GradeSync)
        .where(GradeSync.id.in_(sync_ids), GradeSync.status == SyncStatus.PENDING)
        .values(**values),
    )


def due_syncs(session: Session, now: datetime, grace_s: int, limit: int = 500) -> list[SyncMessage]:
    """Take the (user, placement) pairs with a pending sync `grace_s` past its due time.

    Their due time moves to now, with a conditional update, so that two sweeps at once
    enqueue each pair once; the grace leaves the normal path (the task enqueued after the
    commit, or its own retry) to go first.
    """
    before = now - timedelta(seconds=grace_s)
    rows = session.execute(
        select(GradeSync.id, GradeSync.placement_id, GradeSync.user_id, GradeSync.next_attempt_at)
        .where(GradeSync.status == SyncStatus.PENDING, GradeSync.next_attempt_at < before)
        .order_by(GradeSync.id)
        .limit(limit)
    ).all()
    pairs: list[SyncMessage] = []
    for sync_id, placement_id, user_id, due in rows:
        moved = changed(
            session,
            update(GradeSync)
            .where(GradeSync.id == sync_id, GradeSync.next_attempt_at == due)
            .values(next_attempt_at=now),
        )
        message = SyncMessage(user_id, placement_id)
        if moved == 1 and message not in pairs:
            pairs.append(message)
    return pairs
