"""A student's exception in the store: the waived penalty in every score SQL adds up, a later
due date sets the late flags again, and a change queues the grade's sync."""

from datetime import timedelta

from sqlalchemy import select

from core.lesson_scores import LessonScore
from core.placements import StudentException
from service.store import gradebook, grades, policies, policy_exceptions
from service.store.models import (
    Grade,
    GradeSync,
    Placement,
    QuestionAnswer,
    Submission,
    SubmissionStatus,
    SyncStatus,
    utcnow,
)
from testkit.factories import add_student, place

# expert/scaled-dot-product: three questions of 1 point, an exercise of 5: 8 in all
NOW = utcnow().replace(microsecond=0)
DUE = NOW - timedelta(days=2)


def hand_in(session, placement_id, user_id, at, score=1.0):
    session.add(
        QuestionAnswer(
            placement_id=placement_id,
            user_id=user_id,
            question_id="steps",
            answer=0,
            earned=1.0,
            possible=1.0,
            late=at > DUE,
            created_at=at,
        )
    )
    graded = SubmissionStatus.GRADED
    session.add(Submission(placement_id=placement_id, user_id=user_id, source="x", score=score,
                           status=graded, late=at > DUE, created_at=at))  # fmt: skip


def scores(store, catalog, placed, user_id):
    """Return the pair's score as the sync, keep() and the gradebook compute it."""
    with store.session() as session:
        placement = session.get(Placement, placed.placement_id)
        lesson = catalog.lesson(placement.lesson_id)
        one = grades.score(session, placement, lesson, user_id)
        book = gradebook.score_of(
            lesson, gradebook.work(session, [placement.id])[(placement.id, user_id)]
        ).score
    with store.transaction() as connection:
        assert grades.keep(connection, placed.placement_id, user_id, lesson, NOW)
    with store.session() as session:
        kept = session.scalars(select(Grade.score_given).where(Grade.user_id == user_id)).one()
    return one, book, LessonScore(kept, 8.0)


def save(store, placed, user_id, exception, by):
    with store.session() as session:
        placement = session.get(Placement, placed.placement_id)
        return policy_exceptions.save(session, placement, user_id, exception, by, NOW)


def pending(store):
    """Return the users whose grade waits for a sync (keep() settles them all as skipped)."""
    with store.session() as session:
        rows = session.scalars(
            select(GradeSync.user_id).where(GradeSync.status == SyncStatus.PENDING)
        )
        return rows.all()


def test_a_waived_penalty_is_taken_off_in_every_score_and_for_that_student_alone(store, catalog):
    placed = place(store, due_at=DUE, late_penalty=0.5)
    other = add_student(store, placed, "student-2")
    teacher = add_student(store, placed, "teacher-1")
    with store.session() as session:
        for user_id in (placed.user_id, other):
            hand_in(session, placed.placement_id, user_id, DUE + timedelta(hours=1))
    halved = LessonScore(0.5 + 2.5, 8.0)
    assert scores(store, catalog, placed, placed.user_id) == (halved,) * 3
    assert save(store, placed, placed.user_id, StudentException(waive_penalty=True), teacher)
    assert pending(store) == [placed.user_id]  # the change goes to the LMS, theirs alone
    whole = LessonScore(1.0 + 5.0, 8.0)
    assert scores(store, catalog, placed, placed.user_id) == (whole,) * 3
    assert scores(store, catalog, placed, other) == (halved,) * 3
    with store.session() as session:
        found = policy_exceptions.get(session, placed.placement_id, placed.user_id)
        assert found.exception == StudentException(waive_penalty=True)
        assert (found.by, found.at) == ("teacher-1", NOW)
        assert policy_exceptions.get(session, placed.placement_id, other) is None


def test_a_later_due_date_makes_work_before_it_on_time_and_removing_it_late_again(store, catalog):
    placed = place(store, due_at=DUE, late_penalty=0.5)
    with store.session() as session:
        hand_in(session, placed.placement_id, placed.user_id, DUE + timedelta(hours=1))
    later = StudentException(due_at=DUE + timedelta(days=1))
    assert save(store, placed, placed.user_id, later, placed.user_id)
    assert pending(store) == [placed.user_id]

    def flags():
        with store.session() as session:
            return (session.scalars(select(Submission.late)).all(),
                    session.scalars(select(QuestionAnswer.late)).all())  # fmt: skip

    assert flags() == ([False], [False])
    assert scores(store, catalog, placed, placed.user_id)[0] == LessonScore(6.0, 8.0)
    with store.transaction() as connection:
        _lesson, policy = policies.submitting(connection, placed.placement_id, placed.user_id)
    assert policy.due_at == later.due_at and not policy.is_late(NOW - timedelta(days=1, hours=1))
    assert save(store, placed, placed.user_id, None, placed.user_id)  # removed
    assert pending(store) == [placed.user_id]
    assert flags() == ([True], [True])
    assert scores(store, catalog, placed, placed.user_id)[0] == LessonScore(3.0, 8.0)
    with store.session() as session:
        assert policy_exceptions.get(session, placed.placement_id, placed.user_id) is None


def test_an_exception_of_a_student_without_work_queues_no_sync(store):
    placed = place(store, due_at=DUE, late_penalty=0.5)
    assert not save(store, placed, placed.user_id, StudentException(waive_penalty=True), None)
    with store.session() as session:
        assert session.scalars(select(GradeSync)).all() == []
        assert policy_exceptions.of_user(session, placed.user_id, [placed.placement_id]) == {
            placed.placement_id: StudentException(waive_penalty=True)
        }
