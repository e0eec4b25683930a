"""The gradebook's reads: every student's work and latest grade sync on a course's placements.

A handful of queries for the whole course, not two per cell; score_of() adds the points up
exactly as grades.scored() does for one student (a test holds them to the same numbers).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from core.lesson_scores import LessonScore
from core.lessons import Lesson
from core.overrides import Override, Scored, scored
from core.readbacks import Agreement, compare, on_scale
from service.store import policies
from service.store.models import (
    Grade,
    GradeSync,
    Placement,
    PolicyException,
    QuestionAnswer,
    Submission,
    SubmissionStatus,
    SyncStatus,
)

Pair = tuple[int, int]  # (placement id, user id)


@dataclass
class Work:
    """A student's work on one placement, late penalties applied (or waived by their exception)."""

    answers: dict[str, float] = field(default_factory=dict)  # question id -> points earned
    best: float | None = None  # the best exercise fraction among graded submissions
    attempts: int = 0  # submissions that count against the attempts
    last_at: datetime | None = None  # the newest answer or submission

    def saw(self, moment: datetime | None) -> None:
        """Move the last activity forward to `moment`."""
        if moment is not None and (self.last_at is None or moment > self.last_at):
            self.last_at = moment


@dataclass(frozen=True)
class Readback:
    """What the last read of the LMS's results found of a pair, and how it compares."""

    agreement: Agreement
    found: LessonScore | None  # the LMS's score, on its line item's scale; None: no score
    read_at: datetime | None  # when that read began; None: not read since the last post

    @property
    def none(self) -> bool:
        """Return whether the LMS held no score where the tool sent one."""
        return self.agreement is Agreement.NONE

    @property
    def other(self) -> bool:
        """Return whether the LMS held another score than the tool sent."""
        return self.agreement is Agreement.OTHER


UNREAD = Readback(Agreement.UNKNOWN, None, None)


@dataclass(frozen=True)
class SyncState:
    """The newest grade sync of a pair: it carries the newest score, so its status counts."""

    status: SyncStatus
    error: str | None
    response: str | None
    updated_at: datetime | None
    holds: LessonScore | None = None  # the last score the LMS accepted: what it shows
    given: float | None = None  # the score the newest sync carries (once it was computed)
    read: Readback = field(default_factory=lambda: UNREAD)  # what the LMS held when last read

    @property
    def lost(self) -> bool:
        """Return whether the LMS, when read, lacked the score it last accepted from the tool."""
        return self.read.agreement.lost

    @property
    def lms_found(self) -> float | None:
        """Return the score the last read found in the LMS, on the tool's scale."""
        found = self.read.found
        if found is None:
            return None
        return on_scale(found, self.holds.maximum if self.holds else found.maximum)

    @property
    def resendable(self) -> bool:
        """Return whether the teacher may send the score again: it failed, or the LMS lost it."""
        return self.failed or self.lost

    @property
    def sent(self) -> bool:
        """Return whether the LMS took the newest score."""
        return self.status is SyncStatus.SENT

    @property
    def failed(self) -> bool:
        """Return whether the newest score ran out of attempts (the teacher may resend it)."""
        return self.status is SyncStatus.FAILED

    @property
    def owed(self) -> bool:
        """Return whether the newest score is on its way to the LMS or failed to get there.

        A held score waits for its regrade's review, a skipped one has nowhere to go: neither
        is owed yet.
        """
        return self.status in (SyncStatus.PENDING, SyncStatus.FAILED)

    @property
    def behind(self) -> bool:
        """Return whether the LMS holds another score than the newest sync carries."""
        return self.given is not None and (self.holds is None or self.holds.given != self.given)


def work(session: Session, placement_ids: list[int]) -> dict[Pair, Work]:
    """Return every student's work on the placements, keyed by (placement, user)."""
    found: dict[Pair, Work] = defaultdict(Work)
    penalty = policies.LATE_PENALTY
    answers = session.execute(
        select(
            QuestionAnswer.placement_id,
            QuestionAnswer.user_id,
            QuestionAnswer.question_id,
            case(
                (QuestionAnswer.late, QuestionAnswer.earned * (1 - penalty)),
                else_=QuestionAnswer.earned,
            ),
            QuestionAnswer.created_at,
        )
        .join(Placement, Placement.id == QuestionAnswer.placement_id)
        .outerjoin(
            PolicyException, policies.excepted(QuestionAnswer.placement_id, QuestionAnswer.user_id)
        )
        .where(QuestionAnswer.placement_id.in_(placement_ids))
    )
    for placement_id, user_id, question_id, earned, created_at in answers:
        one = found[(placement_id, user_id)]
        one.answers[question_id] = float(earned)
        one.saw(created_at)
    graded = Submission.status == SubmissionStatus.GRADED
    late_score = case((Submission.late, Submission.score * (1 - penalty)), else_=Submission.score)
    runs = session.execute(
        select(
            Submission.placement_id,
            Submission.user_id,
            func.max(case((graded, late_score), else_=None)),
            func.count(case((Submission.grader_error.is_(None), Submission.id), else_=None)),
            func.max(Submission.created_at),
        )
        .join(Placement, Placement.id == Submission.placement_id)
        .outerjoin(PolicyException, policies.excepted(Submission.placement_id, Submission.user_id))
        .where(Submission.placement_id.in_(placement_ids))
        .group_by(Submission.placement_id, Submission.user_id)
    )
    for placement_id, user_id, best, attempts, last_at in runs:
        one = found[(placement_id, user_id)]
        one.best = None if best is None else float(best)
        one.attempts = int(attempts)
        one.saw(last_at)
    return dict(found)


def syncs(session: Session, placement_ids: list[int]) -> dict[Pair, SyncState]:
    """Return the newest grade sync of every (placement, user)."""
    newest: dict[Pair, GradeSync] = {}
    rows = session.scalars(
        select(GradeSync).where(GradeSync.placement_id.in_(placement_ids)).order_by(GradeSync.id)
    )
    for row in rows:
        newest[(row.placement_id, row.user_id)] = row
    held: dict[Pair, LessonScore] = {}
    read: dict[Pair, Readback] = {}
    grade_rows = session.execute(
        select(
            Grade.placement_id,
            Grade.user_id,
            Grade.lms_given,
            Grade.lms_maximum,
            Grade.read_given,
            Grade.read_maximum,
            Grade.read_at,
        ).where(Grade.placement_id.in_(placement_ids))
    )
    for placement_id, user_id, given, maximum, read_given, read_maximum, read_at in grade_rows:
        pair = (placement_id, user_id)
        sent = None if given is None else LessonScore(given, maximum or 0.0)
        if sent is not None:
            held[pair] = sent
        found = None if read_given is None else LessonScore(read_given, read_maximum or 0.0)
        read[pair] = Readback(compare(read_at is not None, sent, found), found, read_at)
    return {
        pair: SyncState(
            SyncStatus(row.status),
            row.last_error,
            row.lms_response,
            row.updated_at,
            holds=held.get(pair),
            given=row.score_given,
            read=read.get(pair, UNREAD),
        )
        for pair, row in newest.items()
    }


def score_of(lesson: Lesson, done: Work, override: Override | None = None) -> Scored:
    """Add up a student's lesson score from their work, as grades.scored() does."""
    question_points = [(done.answers.get(q.id, 0.0), q.points) for q in lesson.questions]
    if lesson.exercise is None:
        return scored(question_points, None, None, override)
    return scored(question_points, lesson.exercise.points, done.best, override)
