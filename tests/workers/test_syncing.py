from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from sqlalchemy import select

from core.errors import GraderError
from core.grades import LessonScore
from core.platforms import Posted, ScorePost
from service.store import grades
from service.store.database import Store
from service.store.migrate import upgrade
from service.store.models import Grade, GradeSync, QuestionAnswer, utcnow
from tests.factories import place
from workers.syncing import Synced, backoff, sync_grade

LINE_ITEM = "https://lms.example/courses/1/line_items/7"


@dataclass
class FakePoster:
    """Records posts; fails the first `failures` of them."""

    failures: int = 0
    posts: list[ScorePost] = field(default_factory=list)

    def post(self, score_post):
        self.posts.append(score_post)
        if len(self.posts) <= self.failures:
            raise GraderError("the LMS answered 503")
        return Posted('{"status": 200}', score_post.line_item_url)


@pytest.fixture
def store(database_url):
    store = Store(database_url)
    upgrade(store)
    yield store
    store.dispose()


def answered(store, line_item=LINE_ITEM):
    """A student who answered one question right: 1 of 8 points."""
    placed = place(store, line_item_url=line_item)
    now = utcnow()
    with store.session() as session:
        session.add(
            QuestionAnswer(
                placement_id=placed.placement_id, user_id=placed.user_id,
                question_id="why-scale", answer=1, earned=1.0, possible=1.0,
            )
        )  # fmt: skip
        grades.needs_sync(session, placed.placement_id, placed.user_id, now)
    return placed


def syncs(store):
    with store.session() as session:
        return session.scalars(select(GradeSync)).all()


def run(store, catalog, poster, placed, attempts=3):
    return sync_grade(store, catalog, poster, placed.user_id, placed.placement_id, attempts)


def test_sends_the_lesson_score_and_keeps_it(store, catalog):
    placed = answered(store)
    poster = FakePoster()
    assert run(store, catalog, poster, placed).outcome is Synced.SENT
    [post] = poster.posts
    assert (post.line_item_url, post.user_sub, post.score) == (
        LINE_ITEM, "student-1", LessonScore(1.0, 8.0)
    )  # fmt: skip
    [sync] = syncs(store)
    assert (sync.status, sync.attempts, sync.score_given, sync.lms_response) == (
        "sent", 1, 1.0, '{"status": 200}'
    )  # fmt: skip
    with store.session() as session:
        assert session.scalars(select(Grade)).one().score_given == 1.0
    assert run(store, catalog, poster, placed).outcome is Synced.NOTHING_TO_DO


@pytest.mark.parametrize(
    ("poster", "line_item", "reason"),
    [
        (None, LINE_ITEM, "no grade poster is configured"),
        (FakePoster(), None, "the LMS gave no line item"),
    ],
)
def test_skipped_with_a_reason_when_there_is_nowhere_to_post(
    store, catalog, poster, line_item, reason
):
    placed = answered(store, line_item)
    assert run(store, catalog, poster, placed).outcome is Synced.SKIPPED
    [sync] = syncs(store)
    assert sync.status == "skipped" and sync.last_error.startswith(reason)
    assert sync.score_given == 1.0  # the grade is kept for the gradebook all the same


def test_failures_back_off_then_fail_visibly(store, catalog):
    placed = answered(store)
    poster = FakePoster(failures=5)
    first = run(store, catalog, poster, placed)
    assert first.outcome is Synced.RETRY and 4 <= first.retry_in_s <= 6
    [sync] = syncs(store)
    assert (sync.status, sync.attempts, sync.last_error) == (
        "pending", 1, "GraderError: the LMS answered 503"
    )  # fmt: skip
    assert sync.next_attempt_at > utcnow() + timedelta(seconds=3)
    assert run(store, catalog, poster, placed).outcome is Synced.RETRY
    assert run(store, catalog, poster, placed).outcome is Synced.FAILED
    assert [(s.status, s.attempts) for s in syncs(store)] == [("failed", 3)]


def test_a_failure_then_a_success(store, catalog):
    placed = answered(store)
    poster = FakePoster(failures=1)
    assert run(store, catalog, poster, placed).outcome is Synced.RETRY
    assert run(store, catalog, poster, placed).outcome is Synced.SENT
    assert [(s.status, s.attempts) for s in syncs(store)] == [("sent", 2)]


@pytest.mark.parametrize(
    ("attempt", "low", "high"), [(1, 4, 6), (2, 8, 12), (5, 64, 96), (30, 1440, 2160)]
)
def test_backoff_grows_exponentially_up_to_a_cap(attempt, low, high):
    assert low <= backoff(attempt) <= high


def test_a_change_waits_while_a_regraded_score_awaits_review(store, catalog):
    placed = answered(store)  # a pending sync
    with store.session() as session:  # and a bulk regrade's new score, not sent yet
        grades.needs_sync(session, placed.placement_id, placed.user_id, utcnow(), held=True)
    poster = FakePoster()
    assert run(store, catalog, poster, placed).outcome is Synced.HELD
    assert poster.posts == []  # the score now would carry the regraded work
    assert [sync.status for sync in syncs(store)] == ["held", "held"]
    with store.session() as session:
        assert session.scalars(select(Grade)).all() == []
        assert grades.release_held(session, placed.placement_id, utcnow()) == [placed.user_id]
    assert run(store, catalog, poster, placed).outcome is Synced.SENT  # the teacher sent it
    assert len(poster.posts) == 1
    assert [sync.status for sync in syncs(store)] == ["sent", "sent"]
