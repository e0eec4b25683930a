"""Bulk regrades under review: scores before, progress, and the release of the held syncs.

A regrade queues a placement's graded submissions again (on the bulk queue) and keeps each
student's lesson score as it was. Gradings of an unsent regrade write `held` syncs (see
submissions.finish), so nothing reaches the LMS until the teacher has compared the old and
new scores and sends them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.errors import Refusal
from core.lesson_scores import LessonScore
from core.lessons import Lesson
from core.messages import say
from service.store import grades, submissions
from service.store.models import (
    Placement,
    Regrade,
    RegradeScore,
    Submission,
    SubmissionStatus,
    User,
)


class RegradeProblem(Refusal):
    """A regrade that cannot start or be sent now, with the sentence the teacher reads.

    The regrade page shows it beside its form, in the teacher's language.
    """

    status = 409
    code = "regrade_refused"


@dataclass(frozen=True)
class Progress:
    """How many of a regrade's submissions have their new verdict."""

    regrade_id: int
    total: int
    done: int
    started_at: datetime
    sent_at: datetime | None

    @property
    def finished(self) -> bool:
        """Return whether every submission of the regrade is graded again."""
        return self.done >= self.total


@dataclass(frozen=True)
class Change:
    """A student's lesson score before the regrade, and after (None while still regrading)."""

    user_id: int
    name: str
    old: LessonScore
    new: LessonScore | None

    @property
    def changed(self) -> bool:
        """Return whether the new score differs from the old one, its maximum included."""
        if self.new is None:
            return False
        return (
            abs(self.new.given - self.old.given) > 1e-9
            or abs(self.new.maximum - self.old.maximum) > 1e-9
        )


def start(
    session: Session, placement: Placement, lesson: Lesson, teacher_id: int, now: datetime
) -> list[int]:
    """Snapshot the scores and queue the placement's graded submissions; return their ids."""
    if open_regrade(session, placement.id) is not None:
        raise RegradeProblem(
            say("A regrade of this lesson is waiting for your review: send its scores first.")
        )
    users = sorted(
        set(
            session.scalars(
                select(Submission.user_id).where(
                    Submission.placement_id == placement.id,
                    Submission.status == SubmissionStatus.GRADED,
                )
            )
        )
    )
    if not users:
        return []
    old = {user_id: grades.score(session, placement, lesson, user_id) for user_id in users}
    ids = submissions.queue_again(session, placement.id, now)
    regrade = Regrade(
        placement_id=placement.id, started_by=teacher_id, started_at=now, submission_ids=ids
    )
    session.add(regrade)
    session.flush()
    session.add_all(
        RegradeScore(
            regrade_id=regrade.id, user_id=user_id, old_given=s.given, old_maximum=s.maximum
        )
        for user_id, s in old.items()
    )
    return ids


def open_regrade(session: Session, placement_id: int) -> Regrade | None:
    """Return the placement's regrade whose scores are not sent yet, if any."""
    return session.scalar(
        select(Regrade).where(Regrade.placement_id == placement_id, Regrade.sent_at.is_(None))
    )


def latest(session: Session, placement_id: int) -> Regrade | None:
    """Return the placement's newest regrade, sent or not."""
    return session.scalar(
        select(Regrade)
        .where(Regrade.placement_id == placement_id)
        .order_by(Regrade.id.desc())
        .limit(1)
    )


def progress(session: Session, regrade: Regrade) -> Progress:
    """Count the regrade's submissions that have their new verdict."""
    ids = [int(i) for i in regrade.submission_ids]
    done = session.scalar(
        select(func.count(Submission.id)).where(
            Submission.id.in_(ids),
            Submission.status == SubmissionStatus.GRADED,
            Submission.graded_at >= regrade.started_at,
        )
    )
    return Progress(regrade.id, len(ids), int(done or 0), regrade.started_at, regrade.sent_at)


def changes(
    session: Session, regrade: Regrade, placement: Placement, lesson: Lesson
) -> list[Change]:
    """Return each student's old and new lesson score, by name."""
    waiting = set(
        session.scalars(
            select(Submission.user_id).where(
                Submission.id.in_([int(i) for i in regrade.submission_ids]),
                Submission.status != SubmissionStatus.GRADED,
            )
        )
    )
    rows = session.execute(
        select(RegradeScore, User.name, User.sub)
        .join(User, User.id == RegradeScore.user_id)
        .where(RegradeScore.regrade_id == regrade.id)
    ).all()
    found = [
        Change(
            user_id=row.user_id,
            name=name or sub,
            old=LessonScore(row.old_given, row.old_maximum),
            new=None
            if row.user_id in waiting
            else grades.score(session, placement, lesson, row.user_id),
        )
        for row, name, sub in rows
    ]
    return sorted(found, key=lambda change: (change.name.casefold(), change.user_id))


def release(session: Session, placement_id: int, now: datetime) -> list[int]:
    """Close the placement's finished regrade and release its held syncs; return the users."""
    regrade = open_regrade(session, placement_id)
    if regrade is None:
        raise RegradeProblem(say("There is no regrade of this lesson waiting to be sent."))
    if not progress(session, regrade).finished:
        raise RegradeProblem(say("The regrade is still running: send its scores once it is done."))
    regrade.sent_at = now
    return grades.release_held(session, placement_id, now)
