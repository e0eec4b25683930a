"""Lesson grades and the grade-sync outbox (one row per post the LMS needs)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import case, func, insert, select, update
from sqlalchemy.orm import Session

from core.grades import LessonScore, lesson_score
from core.lessons import Lesson
from core.placements import Policy, Reveal
from service.store.database import changed
from service.store.models import (
    Course,
    Grade,
    GradeSync,
    Placement,
    QuestionAnswer,
    Submission,
    User,
)

PENDING, SENT, SKIPPED, FAILED = "pending", "sent", "skipped", "failed"
HELD = "held"  # made by a bulk regrade the teacher has not reviewed yet: not sent until then


def policy_of(placement: Placement) -> Policy:
    """Return the placement's policy as the domain sees it."""
    return Policy(
        reveal=Reveal(placement.reveal),
        reveal_after_attempts=placement.reveal_after_attempts,
        max_attempts=placement.max_attempts,
        due_at=placement.due_at,
        late_penalty=placement.late_penalty,
    )


def needs_sync(
    session: Session, placement_id: int, user_id: int, now: datetime, held: bool = False
) -> None:
    """Record that the user's grade on the placement changed and must reach the LMS.

    A new row every time: a sync settles only the rows it read before computing the score,
    so a change saved while it posts keeps a pending row of its own. A `held` row waits
    for release_held() (a regrade under review) before any sync takes it.
    """
    row = {"placement_id": placement_id, "user_id": user_id, "created_at": now}
    if held:
        row["status"] = HELD
    changed(session, insert(GradeSync).values(**row, updated_at=now, next_attempt_at=now))


def release_held(session: Session, placement_id: int, now: datetime) -> list[int]:
    """Make the placement's held syncs pending; return the users whose grades now go out."""
    users = sorted(
        set(
            session.scalars(
                select(GradeSync.user_id).where(
                    GradeSync.placement_id == placement_id, GradeSync.status == HELD
                )
            )
        )
    )
    changed(
        session,
        update(GradeSync)
        .where(GradeSync.placement_id == placement_id, GradeSync.status == HELD)
        .values(status=PENDING, next_attempt_at=now, updated_at=now),
    )
    return users


def resend_failed(
    session: Session, placement_ids: list[int], user_id: int | None, now: datetime
) -> list[tuple[int, int]]:
    """Make failed syncs pending again with fresh attempts; return their (user, placement) pairs.

    `user_id` None resends every failed sync of the placements.
    """
    where = [GradeSync.placement_id.in_(placement_ids), GradeSync.status == FAILED]
    if user_id is not None:
        where.append(GradeSync.user_id == user_id)
    rows = session.execute(select(GradeSync.user_id, GradeSync.placement_id).where(*where))
    pairs = sorted({(int(user), int(placement)) for user, placement in rows})
    changed(
        session,
        update(GradeSync)
        .where(*where)
        .values(status=PENDING, attempts=0, next_attempt_at=now, updated_at=now),
    )
    return pairs


def posts_to_lms(session: Session, placement: Placement) -> bool:
    """Return whether the placement's grades have an LMS line item (or a place to make one)."""
    if placement.line_item_url:
        return True
    course = session.get(Course, placement.course_id)
    return bool(course is not None and course.line_items_url)


def set_line_item(session: Session, placement_id: int, url: str) -> None:
    """Keep the line item the LMS made for a placement, so later posts go straight to it."""
    session.execute(
        update(Placement)
        .where(Placement.id == placement_id, Placement.line_item_url.is_(None))
        .values(line_item_url=url)
    )


def has_pending(session: Session, placement_id: int, user_id: int) -> bool:
    """Return whether a sync of the pair waits to be sent."""
    return (
        session.scalar(
            select(GradeSync.id)
            .where(
                GradeSync.placement_id == placement_id,
                GradeSync.user_id == user_id,
                GradeSync.status == PENDING,
            )
            .limit(1)
        )
        is not None
    )


def in_flight(session: Session, placement_id: int, user_id: int) -> bool:
    """Return whether the user has a submission queued or running on the placement."""
    return (
        session.scalar(
            select(Submission.id)
            .where(
                Submission.placement_id == placement_id,
                Submission.user_id == user_id,
                Submission.status.in_(("queued", "running")),
            )
            .limit(1)
        )
        is not None
    )


def score(session: Session, placement: Placement, lesson: Lesson, user_id: int) -> LessonScore:
    """Compute the user's lesson score: questions as answered, plus the best exercise result.

    Late work loses the placement's late penalty, item by item.
    """
    penalty = placement.late_penalty or 0.0
    answers = {
        answer.question_id: answer.earned * (1 - penalty if answer.late else 1)
        for answer in session.scalars(
            select(QuestionAnswer).where(
                QuestionAnswer.placement_id == placement.id, QuestionAnswer.user_id == user_id
            )
        )
    }
    question_points = [(answers.get(q.id, 0.0), q.points) for q in lesson.questions]
    if lesson.exercise is None:
        return lesson_score(question_points, 0.0, None)
    late_score = Submission.score * (1 - penalty)
    fraction = session.scalar(
        select(func.max(case((Submission.late, late_score), else_=Submission.score))).where(
            Submission.placement_id == placement.id,
            Submission.user_id == user_id,
            Submission.status == "graded",
        )
    )
    return lesson_score(question_points, lesson.exercise.points, fraction)


def save_grade(
    session: Session, placement_id: int, user_id: int, lesson: LessonScore, now: datetime
) -> None:
    """Keep the user's newest lesson score for the gradebook."""
    values = {"score_given": lesson.given, "score_maximum": lesson.maximum, "updated_at": now}
    mine = (Grade.placement_id == placement_id, Grade.user_id == user_id)
    if not changed(session, update(Grade).where(*mine).values(**values)):
        changed(session, insert(Grade).values(placement_id=placement_id, user_id=user_id, **values))


@dataclass(frozen=True)
class Pending:
    """A pair's pending syncs, the most attempts made on any, and where the score goes."""

    sync_ids: tuple[int, ...]
    attempts: int
    placement: Placement
    user_sub: str
    platform_id: int
    line_items_url: str


def pending(session: Session, placement_id: int, user_id: int) -> Pending | None:
    """Return the pair's pending syncs, or None when there are none."""
    rows = session.execute(
        select(GradeSync.id, GradeSync.attempts).where(
            GradeSync.placement_id == placement_id,
            GradeSync.user_id == user_id,
            GradeSync.status == PENDING,
        )
    ).all()
    if not rows:
        return None
    placement, user_sub, platform_id, line_items_url = session.execute(
        select(Placement, User.sub, Course.platform_id, Course.line_items_url)
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
    )


def settle(
    session: Session,
    sync_ids: tuple[int, ...],
    status: str,
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
        .where(GradeSync.id.in_(sync_ids), GradeSync.status == PENDING)
        .values(**values),
    )


def due_syncs(
    session: Session, now: datetime, grace_s: int, limit: int = 500
) -> list[tuple[int, int]]:
    """Take the (placement, user) pairs with a pending sync `grace_s` past its due time.

    Their due time moves to now, with a conditional update, so that two sweeps at once
    enqueue each pair once; the grace leaves the normal path (the task enqueued after the
    commit, or its own retry) to go first.
    """
    before = now - timedelta(seconds=grace_s)
    rows = session.execute(
        select(GradeSync.id, GradeSync.placement_id, GradeSync.user_id, GradeSync.next_attempt_at)
        .where(GradeSync.status == PENDING, GradeSync.next_attempt_at < before)
        .order_by(GradeSync.id)
        .limit(limit)
    ).all()
    pairs: list[tuple[int, int]] = []
    for sync_id, placement_id, user_id, due in rows:
        moved = changed(
            session,
            update(GradeSync)
            .where(GradeSync.id == sync_id, GradeSync.next_attempt_at == due)
            .values(next_attempt_at=now),
        )
        if moved == 1 and (placement_id, user_id) not in pairs:
            pairs.append((placement_id, user_id))
    return pairs
