from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

import pytest
from sqlalchemy import select

from core.errors import GraderError
from core.lesson_scores import LessonScore
from core.platforms import PlatformAway, Posted, ScorePost, ScoreRefused
from core.syncs import next_stamp
from service.store import grades, outages
from service.store.models import Grade, GradeSync, QuestionAnswer, SyncStatus, utcnow
from testkit.factories import add_student, place, submission
from workers.sweep import PROBE_LATE
from workers.syncing import Synced, backoff, sync_pair

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
    """Run the pair's sync as its retry would come: at its due time, if that is later."""
    due = max(
        [s.next_attempt_at for s in syncs(store) if s.status == SyncStatus.PENDING] or [utcnow()]
    )

    def clock():
        return max(utcnow(), due + timedelta(milliseconds=1))

    return sync_pair(
        store, catalog, poster, placed.user_id, placed.placement_id, attempts, clock=clock
    )


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
        SyncStatus.SENT, 1, 1.0, '{"status": 200}'
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
    assert sync.status == SyncStatus.SKIPPED and sync.last_error.startswith(reason)
    assert sync.score_given == 1.0  # the grade is kept for the gradebook all the same


def test_failures_back_off_then_fail_visibly(store, catalog):
    placed = answered(store)
    poster = FakePoster(failures=5)
    first = run(store, catalog, poster, placed)
    assert first.outcome is Synced.RETRY and 4 <= first.retry_in_s <= 6
    [sync] = syncs(store)
    assert (sync.status, sync.attempts, sync.last_error) == (
        SyncStatus.PENDING, 1, "GraderError: the LMS answered 503"
    )  # fmt: skip
    assert sync.next_attempt_at > utcnow() + timedelta(seconds=3)
    assert run(store, catalog, poster, placed).outcome is Synced.RETRY
    assert run(store, catalog, poster, placed).outcome is Synced.FAILED
    assert [(s.status, s.attempts) for s in syncs(store)] == [(SyncStatus.FAILED, 3)]


def test_a_retry_back_before_its_due_time_waits_again_without_posting(store, catalog):
    placed = answered(store)
    poster = FakePoster(failures=1)
    assert run(store, catalog, poster, placed).outcome is Synced.RETRY
    [sync] = syncs(store)
    # the broker holds a wait of 5 s at most: a longer backoff comes back in hops
    early = sync_pair(store, catalog, poster, placed.user_id, placed.placement_id, 3)
    assert early.outcome is Synced.WAIT
    assert 0 < early.retry_in_s <= (sync.next_attempt_at - utcnow()).total_seconds() + 0.1
    assert len(poster.posts) == 1
    assert [(s.status, s.attempts) for s in syncs(store)] == [(SyncStatus.PENDING, 1)]
    assert run(store, catalog, poster, placed).outcome is Synced.SENT


def test_a_change_not_yet_tried_is_due_even_from_a_clock_ahead_of_ours(store, catalog):
    placed = answered(store)  # stamped due now by the web app's clock
    poster = FakePoster()
    behind = utcnow() - timedelta(seconds=2)  # this worker's clock, two seconds slow
    sent = sync_pair(
        store, catalog, poster, placed.user_id, placed.placement_id, 3, clock=lambda: behind
    )
    assert sent.outcome is Synced.SENT and len(poster.posts) == 1


def test_a_failure_then_a_success(store, catalog):
    placed = answered(store)
    poster = FakePoster(failures=1)
    assert run(store, catalog, poster, placed).outcome is Synced.RETRY
    assert run(store, catalog, poster, placed).outcome is Synced.SENT
    assert [(s.status, s.attempts) for s in syncs(store)] == [(SyncStatus.SENT, 2)]


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
    assert [sync.status for sync in syncs(store)] == [SyncStatus.HELD, SyncStatus.HELD]
    with store.session() as session:
        assert session.scalars(select(Grade)).all() == []
        assert grades.release_held(session, placed.placement_id, utcnow()) == [placed.user_id]
    assert run(store, catalog, poster, placed).outcome is Synced.SENT  # the teacher sent it
    assert len(poster.posts) == 1
    assert [sync.status for sync in syncs(store)] == [SyncStatus.SENT, SyncStatus.SENT]


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, start):
        self.now = start
        self.slept = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += timedelta(seconds=seconds)


def answer(store, placed, question_id, now):
    """One more right answer of the student, and the sync that it asks for."""
    with store.session() as session:
        session.add(
            QuestionAnswer(
                placement_id=placed.placement_id, user_id=placed.user_id,
                question_id=question_id, answer=1, earned=1.0, possible=1.0,
            )
        )  # fmt: skip
        grades.needs_sync(session, placed.placement_id, placed.user_id, now)


def run_at(store, catalog, poster, placed, clock, attempts=3):
    return sync_pair(
        store, catalog, poster, placed.user_id, placed.placement_id, attempts,
        clock=clock, sleep=clock.sleep,
    )  # fmt: skip


@pytest.fixture
def clock():
    return Clock(utcnow().replace(microsecond=300_000))


def test_changes_within_one_second_go_out_as_one_later_post(store, catalog, clock):
    placed = answered(store)
    poster = FakePoster()
    assert run_at(store, catalog, poster, placed, clock).outcome is Synced.SENT
    first_second = clock.now.replace(microsecond=0)
    for question_id in ("scale-scores", "steps"):
        clock.now += timedelta(milliseconds=200)
        answer(store, placed, question_id, clock.now)
        waited = run_at(store, catalog, poster, placed, clock)
        # Moodle would refuse a second score in this second: wait for the next one
        assert waited.outcome is Synced.WAIT
        assert 0 < waited.retry_in_s <= 1.0
    assert len(poster.posts) == 1
    clock.now = first_second + timedelta(seconds=1, milliseconds=50)
    assert run_at(store, catalog, poster, placed, clock).outcome is Synced.SENT
    assert run_at(store, catalog, poster, placed, clock).outcome is Synced.NOTHING_TO_DO
    first, last = poster.posts
    assert first.timestamp == first_second and first.score == LessonScore(1.0, 8.0)
    assert last.timestamp == first_second + timedelta(seconds=1)
    assert last.score.given == 3.0  # the three answers in one post
    assert {s.status for s in syncs(store)} == {SyncStatus.SENT}


@dataclass
class RefusingPoster(FakePoster):
    """Answers the first `refusals` posts as Moodle does a score it holds a later one of."""

    refusals: int = 1

    def post(self, score_post):
        self.posts.append(score_post)
        if len(self.posts) <= self.refusals:
            raise ScoreRefused("the LMS refused the score: HTTP 409 Conflict")
        return Posted("The LMS accepted the score.", score_post.line_item_url)


def test_a_409_is_answered_by_one_post_a_second_later(store, catalog, clock):
    placed = answered(store)
    poster = RefusingPoster(refusals=1)
    assert run_at(store, catalog, poster, placed, clock).outcome is Synced.SENT
    refused, accepted = poster.posts
    assert accepted.timestamp == refused.timestamp + timedelta(seconds=1)
    assert clock.now >= accepted.timestamp  # it waited for that second: never a future stamp
    assert clock.slept and sum(clock.slept) <= 1.0
    [sync] = syncs(store)
    assert (sync.status, sync.attempts) == (SyncStatus.SENT, 1)
    with store.session() as session:
        held = grades.holds(session, placed.placement_id, placed.user_id)
    assert (held.given, held.at, held.posting_until) == (1.0, accepted.timestamp, None)


def test_a_second_409_goes_to_the_backoff_and_frees_the_pair(store, catalog, clock):
    placed = answered(store)
    poster = RefusingPoster(refusals=2)
    failed = run_at(store, catalog, poster, placed, clock)
    assert failed.outcome is Synced.RETRY and failed.retry_in_s >= 4
    assert len(poster.posts) == 2
    [sync] = syncs(store)
    assert sync.status == SyncStatus.PENDING and "409" in sync.last_error
    clock.now += timedelta(seconds=failed.retry_in_s)
    assert run_at(store, catalog, poster, placed, clock).outcome is Synced.SENT


def test_a_run_in_flight_never_posts_pending(store, catalog, clock):
    placed = answered(store)
    submission(store, placed.placement_id, placed.user_id, "print(1)", late=False)
    poster = FakePoster()
    assert run_at(store, catalog, poster, placed, clock).outcome is Synced.SENT
    [post] = poster.posts
    # Moodle blanks the points of any score that is not FullyGraded
    assert post.grading_progress == "FullyGraded" and post.activity_progress == "Submitted"
    assert post.score == LessonScore(1.0, 8.0)  # the points earned so far stay in the LMS


def test_one_post_of_a_pair_at_a_time(store, catalog, clock):
    placed = answered(store)
    poster = FakePoster()
    with store.session() as session:
        grades.save_grade(
            session, placed.placement_id, placed.user_id, LessonScore(0, 8), clock.now
        )
        until = clock.now + timedelta(seconds=30)
        assert grades.take_turn(session, placed.placement_id, placed.user_id, clock.now, until)
        assert not grades.take_turn(session, placed.placement_id, placed.user_id, clock.now, until)
    busy = run_at(store, catalog, poster, placed, clock)
    assert busy.outcome is Synced.WAIT and poster.posts == []
    clock.now = until  # the holder died: its turn ends at its own deadline
    assert run_at(store, catalog, poster, placed, clock).outcome is Synced.SENT


def test_next_stamp_is_whole_seconds_after_the_last_accepted(clock):
    now = clock.now
    second = now.replace(microsecond=0)
    assert next_stamp(None, now) == second
    assert next_stamp(second - timedelta(seconds=5), now) == second
    assert next_stamp(second, now) == second + timedelta(seconds=1)
    assert next_stamp(second + timedelta(seconds=9), now) == second + timedelta(seconds=10)


@dataclass
class AwayPoster:
    """An LMS that refuses every connection until `back`, on the test's clock."""

    clock: Clock
    back: datetime
    refuse: set = field(default_factory=set)  # user subs whose score it refuses (a 4xx)
    posts: list = field(default_factory=list)  # (time, user sub)

    def post(self, score_post):
        self.posts.append((self.clock(), score_post.user_sub))
        if self.clock() < self.back:
            raise PlatformAway("the LMS did not take the score: the connection failed")
        if score_post.user_sub in self.refuse:
            raise GraderError("the LMS refused the score: HTTP 404 Not Found")
        return Posted('{"status": 200}', score_post.line_item_url)


def waiting_students(store, count):
    """`count` students of one placement (one platform), each with a change to post."""
    placed = place(store, line_item_url=LINE_ITEM)
    pairs = [placed] + [
        replace(placed, user_id=add_student(store, placed, f"student-{n}"))
        for n in range(2, count + 1)
    ]
    for pair in pairs:
        answer(store, pair, "why-scale", utcnow())
    return pairs


class Worker:
    """The syncs run as a worker runs them, on the test's clock: each task at the time it
    asked for (a broker wait at most 5 s, workers.tasks.wait_s), the pairs a post released
    at once, and a sweep every 2 s."""

    def __init__(self, store, catalog, poster, clock, pairs, attempts=3):
        self.store, self.catalog, self.poster, self.clock = store, catalog, poster, clock
        self.attempts = attempts
        self.due = [(clock(), pair.user_id, pair.placement_id) for pair in pairs]
        self.next_sweep = clock()

    def run(self, until):
        """Run every task and sweep due before `until`."""
        while True:
            self.due.sort()
            task_at = self.due[0][0] if self.due else until
            if self.next_sweep < until and self.next_sweep <= task_at:
                self.clock.now = max(self.clock.now, self.next_sweep)
                self.sweep()
                continue
            if task_at >= until:
                return
            at, user_id, placement_id = self.due.pop(0)
            self.clock.now = max(self.clock.now, at)
            result = sync_pair(
                self.store, self.catalog, self.poster, user_id, placement_id, self.attempts,
                clock=self.clock, sleep=self.clock.sleep,
            )  # fmt: skip
            if result.outcome in (Synced.RETRY, Synced.WAIT, Synced.AWAY):
                wait = timedelta(seconds=min(result.retry_in_s, 5.0))
                self.due.append((self.clock.now + wait, user_id, placement_id))
            self.due += [(self.clock.now, m.user_id, m.placement_id) for m in result.released]

    def sweep(self):
        with self.store.session() as session:
            found = grades.due_syncs(session, self.clock.now, 300)
            found += outages.lost_probes(session, self.clock.now, PROBE_LATE)
        self.due += [(self.clock.now, m.user_id, m.placement_id) for m in found]
        self.next_sweep += timedelta(seconds=2)


def test_a_long_outage_is_probed_every_few_seconds_and_costs_no_attempts(store, catalog, clock):
    """Fifteen minutes of an LMS that refuses connections, with 20 grades waiting: a probe
    every 4 s at most and 2 s at least, fifteen a minute, no sync FAILED, and all land within
    4 s once it is back.

    Today's backoff (5 s doubling, 8 attempts: the default CODEBLANKS_SYNC_ATTEMPTS) posted
    each grade on its own and failed all of them after ten and a half minutes.
    """
    pairs = waiting_students(store, 20)
    back = clock() + timedelta(minutes=15)
    poster = AwayPoster(clock, back)
    worker = Worker(store, catalog, poster, clock, pairs, attempts=8)
    worker.run(until=back - timedelta(seconds=1))
    rows = syncs(store)
    assert {row.status for row in rows} == {SyncStatus.PENDING}
    assert max(row.attempts for row in rows) == 0
    assert "connection failed" in rows[0].last_error
    tries = [at for at, _ in poster.posts]
    gaps = [(b - a).total_seconds() for a, b in zip(tries, tries[1:], strict=False)]
    # the first post, then 2 and 4 s apart: fifteen a minute for every grade together
    assert min(gaps) >= 2.0 - 0.01 and max(gaps) <= 4.0 + 0.01, (min(gaps), max(gaps))
    assert len(tries) <= 15 * 60 / 4 + 5, len(tries)
    worker.run(until=back + timedelta(minutes=1))
    landed = [at for at, _ in poster.posts if at >= back]
    assert len(landed) == len(pairs)  # each grade once
    assert max(landed) - back <= timedelta(seconds=4.1), max(landed) - back
    assert {row.status for row in syncs(store)} == {SyncStatus.SENT}


def test_a_refused_score_during_an_outage_counts_and_ends_it(store, catalog, clock):
    """A 4xx is an answer: the platform is back for the others, and the refused score
    counts an attempt against its own sync, as before."""
    pairs = waiting_students(store, 3)
    refused = pairs[0]
    poster = AwayPoster(clock, clock() + timedelta(seconds=30), refuse={"student-1"})
    worker = Worker(store, catalog, poster, clock, pairs)
    worker.run(until=clock() + timedelta(seconds=29))
    assert len(poster.posts) <= 2 + 30 / 2  # probes only
    worker.run(until=clock() + timedelta(seconds=8))
    by_user = {row.user_id: row for row in syncs(store)}
    assert by_user[refused.user_id].status == SyncStatus.PENDING
    assert by_user[refused.user_id].attempts >= 1
    assert "404" in by_user[refused.user_id].last_error
    assert {by_user[p.user_id].status for p in pairs[1:]} == {SyncStatus.SENT}
    with store.session() as session:
        assert outages.outage(session, refused.platform_id) is None
