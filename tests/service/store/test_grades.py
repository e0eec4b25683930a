from datetime import timedelta

import pytest
from sqlalchemy import select

from core.lesson_scores import LessonScore
from service.queue import SyncMessage
from service.store import grades
from service.store.models import (
    GradeSync,
    Placement,
    QuestionAnswer,
    Submission,
    SubmissionStatus,
    SyncStatus,
    utcnow,
)
from testkit.factories import place

# expert/scaled-dot-product: questions why-scale, scale-scores, steps (1 point each); exercise 5


def add_answer(session, placed, question_id, earned, late=False):
    session.add(
        QuestionAnswer(
            placement_id=placed.placement_id,
            user_id=placed.user_id,
            question_id=question_id,
            answer=0,
            earned=earned,
            possible=1.0,
            late=late,
        )
    )


def add_graded(session, placed, score, late=False, status=SubmissionStatus.GRADED):
    session.add(
        Submission(
            placement_id=placed.placement_id,
            user_id=placed.user_id,
            source="x",
            status=status,
            score=score,
            late=late,
        )
    )


@pytest.mark.parametrize(
    ("answers", "runs", "penalty", "expected"),
    [
        ([], [], None, LessonScore(0.0, 8.0)),
        ([("why-scale", 1.0)], [], None, LessonScore(1.0, 8.0)),
        (
            [("why-scale", 1.0), ("steps", 0.5)],
            [(0.0, False), (1.0, False)],
            None,
            LessonScore(6.5, 8.0),
        ),
        ([], [(1.0, True)], 0.2, LessonScore(4.0, 8.0)),  # a late pass loses 20%
        ([], [(1.0, True), (1.0, False)], 0.2, LessonScore(5.0, 8.0)),  # the on-time one counts
        ([("why-scale", 1.0, True)], [], 0.5, LessonScore(0.5, 8.0)),  # a late answer too
        (
            [],
            [(None, False, SubmissionStatus.QUEUED)],
            None,
            LessonScore(0.0, 8.0),
        ),  # not graded yet
    ],
    ids=[
        "nothing",
        "one-answer",
        "best-run",
        "late-run",
        "on-time-beats-late",
        "late-answer",
        SubmissionStatus.QUEUED,
    ],
)
def test_score(store, catalog, answers, runs, penalty, expected):
    placed = place(store, late_penalty=penalty)
    with store.session() as session:
        for answer in answers:
            add_answer(session, placed, *answer)
        for run in runs:
            add_graded(session, placed, *run)
    with store.session() as session:
        placement = session.get(Placement, placed.placement_id)
        lesson = catalog.lesson(placement.lesson_id)
        assert grades.score(session, placement, lesson, placed.user_id) == expected


def test_a_sync_settles_only_the_changes_it_saw(store):
    placed = place(store)
    now = utcnow()
    with store.session() as session:
        grades.needs_sync(session, placed.placement_id, placed.user_id, now)
        grades.needs_sync(session, placed.placement_id, placed.user_id, now)
    with store.session() as session:
        found = grades.pending(session, placed.placement_id, placed.user_id)
        assert len(found.sync_ids) == 2 and found.attempts == 0
        assert (found.user_sub, found.platform_id) == ("student-1", placed.platform_id)
    with store.session() as session:  # a grade changes while the first sync posts
        grades.needs_sync(session, placed.placement_id, placed.user_id, now)
    with store.session() as session:
        grades.settle(session, found.sync_ids, SyncStatus.SENT, now, lesson=LessonScore(3, 8))
    with store.session() as session:
        rows = session.scalars(select(GradeSync).order_by(GradeSync.id)).all()
        assert [(r.status, r.attempts, r.score_given) for r in rows] == [
            (SyncStatus.SENT, 1, 3.0),
            (SyncStatus.SENT, 1, 3.0),
            (SyncStatus.PENDING, 0, None),
        ]
        assert grades.pending(session, placed.placement_id, placed.user_id).sync_ids == (3,)


def test_due_syncs_waits_out_the_grace_and_takes_each_pair_once(store):
    placed = place(store)
    now = utcnow()
    with store.session() as session:
        grades.needs_sync(session, placed.placement_id, placed.user_id, now)
    with store.session() as session:
        assert grades.due_syncs(session, now + timedelta(seconds=10), grace_s=60) == []
    later = now + timedelta(seconds=61)
    with store.session() as session:
        assert grades.due_syncs(session, later, 60) == [
            SyncMessage(placed.user_id, placed.placement_id)
        ]
    with store.session() as session:
        assert grades.due_syncs(session, later, 60) == []


def test_save_grade_keeps_the_newest_score(store):
    placed = place(store)
    with store.session() as session:
        grades.save_grade(session, placed.placement_id, placed.user_id, LessonScore(1, 8), utcnow())
    with store.session() as session:
        grades.save_grade(session, placed.placement_id, placed.user_id, LessonScore(6, 8), utcnow())
    with store.session() as session:
        from service.store.models import Grade

        assert [(g.score_given, g.score_maximum) for g in session.scalars(select(Grade))] == [
            (6, 8)
        ]
