"""The grade sync's store side: one read (look), and the write of a decision (enact)."""

from datetime import timedelta

from core.lesson_scores import LessonScore
from core.syncs import Post, Take, Wait, decide
from service.queue import SyncMessage
from service.store import grades, outages, outbox
from service.store.models import User, utcnow
from testkit.factories import add_student, place

LINE_ITEM = "https://lms.example/courses/1/line_items/7"


def pending(store, now):
    placed = place(store, line_item_url=LINE_ITEM)
    with store.session() as session:
        grades.needs_sync(session, placed.placement_id, placed.user_id, now)
    return placed


def test_a_post_takes_the_turn_once(store, catalog):
    now = utcnow().replace(microsecond=300_000)
    placed = pending(store, now)
    with store.session() as session:
        found = outbox.look(session, catalog, placed.placement_id, placed.user_id, now)
        decision = decide(found, True, now)
        assert isinstance(decision, Post) and found.due.score == LessonScore(0.0, 8.0)
        assert outbox.enact(session, found, decision, now) is Take.TAKEN
        assert outbox.enact(session, found, decision, now) is Take.BUSY  # one post at a time
        held = grades.holds(session, placed.placement_id, placed.user_id)
    assert held.posting_until == decision.until and held.given is None  # kept, not yet posted


def test_no_turn_when_a_post_was_accepted_since_the_read(store, catalog):
    """Another sync's post landed between this sync's read and its write: the stamp this
    one decided on may be that post's (Moodle answers a 409), so it looks again."""
    now = utcnow().replace(microsecond=300_000)
    placed = pending(store, now)
    with store.session() as session:
        found = outbox.look(session, catalog, placed.placement_id, placed.user_id, now)
    decision = decide(found, True, now)
    assert isinstance(decision, Post)
    with store.session() as session:  # the other sync, from its turn to its answer
        pair = (placed.placement_id, placed.user_id)
        grades.save_grade(session, *pair, LessonScore(1.0, 8.0), now)
        stamp = decision.score_post.timestamp
        grades.end_turn(session, *pair, accepted=LessonScore(1.0, 8.0), at=stamp)
    with store.session() as session:
        assert outbox.enact(session, found, decision, now) is Take.BUSY
    with store.session() as session:
        again = outbox.look(session, catalog, placed.placement_id, placed.user_id, now)
        assert again.due.lms_at == stamp and again.due.posting_until is None
    assert isinstance(decide(again, True, now), Wait)  # the next second, with what is new
    later = now + timedelta(seconds=2)
    after = decide(again, True, later)
    assert isinstance(after, Post) and after.score_post.timestamp > stamp
    with store.session() as session:  # the stamp it read is the one the row holds
        assert outbox.enact(session, again, after, later) is Take.TAKEN


def test_a_probe_taken_by_another_pair_gives_the_turn_back(store, catalog):
    now = utcnow()
    placed = pending(store, now)
    other = SyncMessage(add_student(store, placed, "student-2"), placed.placement_id)
    with store.session() as session:
        outages.down(session, placed.platform_id, other, now - timedelta(seconds=10), "502")
    with store.session() as session:
        found = outbox.look(session, catalog, placed.placement_id, placed.user_id, now)
        decision = decide(found, True, now)  # the probe is due: this pair may take it
        assert isinstance(decision, Post) and decision.probe
        # a sync of another pair takes it first
        assert outages.take_probe(session, placed.platform_id, other, now, decision.until)
        assert outbox.enact(session, found, decision, now) is Take.PROBED
        held = grades.holds(session, placed.placement_id, placed.user_id)
    assert held.posting_until is None  # the pair's next sync may post


def test_the_post_says_why_in_the_students_language(store, catalog):
    """The one read words the score's comment for the post, in the language the student's
    last launch gave (issue 29, point 5); none kept, English."""
    now = utcnow().replace(microsecond=300_000)
    placed = pending(store, now)
    comments = []
    for locale in ("tr-TR", None):
        with store.session() as session:
            session.get(User, placed.user_id).locale = locale
        with store.session() as session:
            found = outbox.look(session, catalog, placed.placement_id, placed.user_id, now)
        decision = decide(found, True, now)
        assert isinstance(decision, Post)
        comments.append(decision.score_post.comment)
    assert comments == [
        "Henüz kod teslim etmedin. 3 sorudan 0 tanesi doğru. 3 soru cevaplanmadı.",
        "No code handed in yet. 0 of 3 questions right. 3 questions not answered.",
    ]


def test_the_first_line_item_adopted_is_the_one_kept(store):
    placed = place(store)
    made = "https://lms.example/courses/1/line_items/8"
    with store.session() as session:
        assert outbox.adopt_line_item(session, placed.placement_id, LINE_ITEM) == LINE_ITEM
    with store.session() as session:  # another maker, a moment later, made its own
        assert outbox.adopt_line_item(session, placed.placement_id, made) == LINE_ITEM
