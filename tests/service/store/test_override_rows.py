"""The overrides' rows: the newest of a pair stands, every change is kept, and the one read of
a grade sync (outbox.look) carries the override's score and comment."""

from datetime import timedelta

from sqlalchemy import delete

from core.lesson_scores import LessonScore
from core.overrides import Change, Override, Part
from core.syncs import Post, decide
from service.store import grades, outbox, override_rows
from service.store.models import User, utcnow
from testkit.factories import add_student, place

LINE_ITEM = "https://lms.example/courses/1/line_items/7"


def record(session, placed, change, given, comment, by, at, part=Part.LESSON):
    override_rows.record(
        session, placed.placement_id, placed.user_id, change, part, given, comment, 0.0, by, at
    )


def test_the_newest_change_stands_and_the_history_keeps_them_all(store):
    placed = place(store, line_item_url=LINE_ITEM)
    other = add_student(store, placed, "student-2")
    teacher = add_student(store, placed, "teacher-1")
    now = utcnow()
    pair = (placed.placement_id, placed.user_id)
    with store.session() as session:
        assert override_rows.standing(session, *pair) is None
        record(session, placed, Change.SET, 6.0, "first", teacher, now)
        record(session, placed, Change.SET, 7.0, "second", teacher, now + timedelta(seconds=1))
        assert override_rows.standing(session, *pair) == Override(Part.LESSON, 7.0, "second", 0.0)
        assert override_rows.standing_on(session, [placed.placement_id]) == {
            pair: Override(Part.LESSON, 7.0, "second", 0.0)
        }
        record(session, placed, Change.REMOVED, None, "", teacher, now + timedelta(seconds=2))
        assert override_rows.standing(session, *pair) is None
        assert override_rows.standing_on(session, [placed.placement_id]) == {}
        assert override_rows.standing(session, placed.placement_id, other) is None
    with store.session() as session:  # the teacher's account goes: their changes stay
        session.execute(delete(User).where(User.id == teacher))
    with store.reading() as session:
        kept = override_rows.history(session, *pair)
    assert [(e.change, e.given, e.comment, e.by) for e in kept] == [
        (Change.REMOVED, None, "", ""),
        (Change.SET, 7.0, "second", ""),
        (Change.SET, 6.0, "first", ""),
    ]


def test_the_syncs_read_carries_the_override_and_its_comment(store, catalog):
    now = utcnow().replace(microsecond=300_000)
    placed = place(store, line_item_url=LINE_ITEM)
    teacher = add_student(store, placed, "teacher-1")
    with store.session() as session:
        record(session, placed, Change.SET, 4.5, "Good reasoning.", teacher, now, Part.EXERCISE)
        grades.needs_sync(session, placed.placement_id, placed.user_id, now)
    with store.session() as session:
        found = outbox.look(session, catalog, placed.placement_id, placed.user_id, now)
    assert found.due.score == LessonScore(4.5, 8.0)  # no question answered, 4.5 of the exercise
    assert found.due.override_comment == "Good reasoning."
    decision = decide(found, True, now)
    assert isinstance(decision, Post)
    assert (decision.score_post.score.given, decision.score_post.comment) == (
        4.5,
        "Good reasoning.",
    )
