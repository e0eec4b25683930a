"""A placement that holds its scores, and their release (issue 29, point 3).

Its syncs post "handed in" without points, then wait as held ones; a release (the
teacher's, the sweep's at the release date) makes them go out FullyGraded, once, however
many releases run at once.
"""

import threading
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import select

from core.lesson_scores import LessonScore
from core.platforms import Posted, ScorePost
from service.queue import SyncMessage
from service.store import grades, releases
from service.store.models import Grade, GradeSync, Placement, QuestionAnswer, Regrade, utcnow
from testkit.factories import add_student, place
from workers.syncing import Synced, sync_pair

LINE_ITEM = "https://lms.example/courses/1/line_items/7"


@dataclass
class Poster:
    posts: list[ScorePost] = field(default_factory=list)

    def post(self, score_post):
        self.posts.append(score_post)
        return Posted('{"status": 200}', score_post.line_item_url)


def held(store, students=1, **policy):
    """A placement holding its scores, whose students each answered one question right."""
    placed = place(store, line_item_url=LINE_ITEM, hold_scores=True, **policy)
    users = [placed.user_id] + [
        add_student(store, placed, f"student-{n}") for n in range(2, students + 1)
    ]
    answer(store, placed.placement_id, users)
    return placed, users


def answer(store, placement_id, users, question="why-scale"):
    now = utcnow()
    with store.session() as session:
        for user_id in users:
            session.add(
                QuestionAnswer(
                    placement_id=placement_id, user_id=user_id, question_id=question,
                    answer=1, earned=1.0, possible=1.0,
                )
            )  # fmt: skip
            grades.needs_sync(session, placement_id, user_id, now)


def sync(store, catalog, poster, placement_id, user_id, later_s=0.0):
    # a whole second on: the pair's next post is stamped after its last (core.syncs)
    at = utcnow() + timedelta(seconds=later_s)
    return sync_pair(store, catalog, poster, user_id, placement_id, 3, clock=lambda: at)


def statuses(store, placement_id):
    with store.reading() as session:
        rows = session.scalars(select(GradeSync).where(GradeSync.placement_id == placement_id))
        return sorted(str(row.status) for row in rows)


def test_a_held_score_says_handed_in_then_waits_for_the_release(store, catalog):
    (placed, [user]) = held(store)
    poster = Poster()
    assert sync(store, catalog, poster, placed.placement_id, user).outcome is Synced.SENT
    [first] = poster.posts
    assert (first.grading_progress, first.activity_progress) == ("PendingManual", "Completed")
    assert statuses(store, placed.placement_id) == ["held"]
    with store.reading() as session:
        grade = session.scalars(select(Grade)).one()
    # the teacher's gradebook has the score; the LMS, as far as the tool knows, no points
    assert (grade.score_given, grade.lms_given, grade.lms_at) == (1.0, None, first.timestamp)

    answer(store, placed.placement_id, [user], question="scale-scores")  # a later change
    assert sync(store, catalog, poster, placed.placement_id, user, 2).outcome is Synced.HELD
    assert len(poster.posts) == 1  # the LMS shows "handed in" already
    assert statuses(store, placed.placement_id) == ["held", "held"]

    with store.session() as session:
        assert releases.release(session, placed.placement_id, utcnow()) == [user]
    with store.session() as session:  # again: nothing more to release
        assert releases.release(session, placed.placement_id, utcnow()) == []
    assert sync(store, catalog, poster, placed.placement_id, user, 3).outcome is Synced.SENT
    last = poster.posts[-1]
    assert len(poster.posts) == 2 and last.grading_progress == "FullyGraded"
    assert last.score == LessonScore(2.0, 8.0) and last.timestamp > first.timestamp
    assert statuses(store, placed.placement_id) == ["sent", "sent"]
    # released: the next change goes out at once, as on any placement
    answer(store, placed.placement_id, [user], question="steps")
    assert sync(store, catalog, poster, placed.placement_id, user, 5).outcome is Synced.SENT
    assert poster.posts[-1].grading_progress == "FullyGraded"


def test_two_releases_at_once_release_each_score_once(store, catalog):
    placed, users = held(store, students=4)
    poster = Poster()
    for user in users:
        sync(store, catalog, poster, placed.placement_id, user)
    assert statuses(store, placed.placement_id) == ["held"] * 4
    barrier = threading.Barrier(4)
    released: list[list[int]] = []

    def press():
        barrier.wait()
        with store.session() as session:
            released.append(releases.release(session, placed.placement_id, utcnow()))

    threads = [threading.Thread(target=press) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(released, key=len) == [[], [], [], sorted(users)]
    # every press sends its syncs (the loser's none); each pair posts its score once
    for user in users + users:
        sync(store, catalog, poster, placed.placement_id, user, 2)
    fully = [p for p in poster.posts if p.grading_progress == "FullyGraded"]
    assert sorted(p.user_sub for p in fully) == sorted(f"student-{n}" for n in range(1, 5))


def test_the_release_date_releases_once_it_has_come(store, catalog):
    now = utcnow()
    due, _users = held(store, release_at=now - timedelta(seconds=1))
    later, _others = held(store, release_at=now + timedelta(days=1))
    poster = Poster()
    for placed in (due, later):
        sync(store, catalog, poster, placed.placement_id, placed.user_id)
    with store.session() as session:
        assert releases.due(session, now) == [SyncMessage(due.user_id, due.placement_id)]
    with store.session() as session:
        assert releases.due(session, now) == []  # released once
        assert session.get(Placement, due.placement_id).released_at is not None
        assert session.get(Placement, later.placement_id).holds_scores
    assert statuses(store, due.placement_id) == ["pending"]
    assert statuses(store, later.placement_id) == ["held"]


def test_a_lifted_hold_releases_and_a_new_one_holds_again(store, catalog):
    (placed, [user]) = held(store)
    poster = Poster()
    sync(store, catalog, poster, placed.placement_id, user)
    with store.session() as session:
        assert releases.set_hold(session, placed.placement_id, False, None, utcnow()) == [user]
    assert statuses(store, placed.placement_id) == ["pending"]
    with store.session() as session:
        assert releases.set_hold(session, placed.placement_id, True, None, utcnow()) == []
        assert session.get(Placement, placed.placement_id).holds_scores


def test_a_release_leaves_a_regrade_under_review_held(store, catalog):
    """The regrade's scores wait for its teacher's review; its send releases them all."""
    (placed, [user]) = held(store)
    sync(store, catalog, Poster(), placed.placement_id, user)
    with store.session() as session:
        regrade = Regrade(
            placement_id=placed.placement_id, started_by=user, started_at=utcnow(),
            submission_ids=[],
        )  # fmt: skip
        session.add(regrade)
    with store.session() as session:
        assert releases.release(session, placed.placement_id, utcnow()) == []
    assert statuses(store, placed.placement_id) == ["held"]
    with store.session() as session:  # the regrade is sent: the one release of held scores
        assert grades.release_held(session, placed.placement_id, utcnow()) == [user]


def test_a_release_while_a_held_post_is_on_its_way_sends_the_score(store, catalog):
    (placed, [user]) = held(store)
    pressed = []

    class Releasing(Poster):  # the teacher presses Release while the LMS takes the held post
        def post(self, score_post):
            with store.session() as session:
                pressed.append(releases.release(session, placed.placement_id, utcnow()))
            return super().post(score_post)

    poster = Releasing()
    result = sync(store, catalog, poster, placed.placement_id, user)
    assert pressed == [[]]  # the pair's rows were pending then: nothing held to release
    assert result.released == (SyncMessage(user, placed.placement_id),)  # sent again at once
    assert statuses(store, placed.placement_id) == ["pending"]
    assert sync(store, catalog, poster, placed.placement_id, user, 2).outcome is Synced.SENT
    assert [p.grading_progress for p in poster.posts] == ["PendingManual", "FullyGraded"]
