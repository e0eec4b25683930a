"""core.syncs: what a grade sync does, from what one read found, at a time given to it."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from core.errors import GraderError
from core.lesson_scores import LessonScore
from core.platforms import Outage, PlatformAway, Posted, ScoreRefused
from core.syncs import (
    NO_LINE_ITEM,
    NO_POSTER,
    TURN,
    Accepted,
    Away,
    Due,
    Failed,
    Found,
    Hold,
    Pause,
    Post,
    Skip,
    Take,
    Wait,
    conclude,
    decide,
    early,
    missing_lesson,
    taken,
)

NOW = datetime(2026, 12, 2, 13, 0, 7, 300_000, tzinfo=UTC)
SECOND = NOW.replace(microsecond=0)
SCORE = LessonScore(3.0, 8.0)
LINE_ITEM = "https://lms.example/courses/1/line_items/7"
DUE = Due(
    awaits_review=False,
    lesson_id="basics/scale",
    score=SCORE,
    label="Scaling",
    user_sub="student-1",
    line_item_url=LINE_ITEM,
    line_items_url="https://lms.example/courses/1/line_items",
    resource_link_id="link-1",
    outage=None,
    lms_at=None,
    posting_until=None,
    in_flight=False,
)
FOUND = Found(
    user_id=5, placement_id=9, sync_ids=(1, 2), attempts=0, due_at=NOW, platform_id=2, due=DUE
)
PENDING = ("attempts", "due_at")  # the fields of Found that a test changes; the rest, Due's


def found(**changes):
    """FOUND with some of its fields, or its Due's, changed."""
    mine = {k: v for k, v in changes.items() if k in PENDING}
    due = replace(DUE, **{k: v for k, v in changes.items() if k not in PENDING})
    return replace(FOUND, **mine, due=due)


def away(probe_at, user_id=5, placement_id=9):
    return Outage(NOW - timedelta(minutes=1), 3, probe_at, user_id, placement_id)


@pytest.mark.parametrize(
    ("changes", "can_post", "expected"),
    [
        # a retry come early (its backoff goes in broker hops) waits, and keeps nothing
        ({"attempts": 1, "due_at": NOW + timedelta(seconds=30)}, True, Wait(30.0)),
        # within half a second of its due time, it goes on
        (
            {"attempts": 1, "due_at": NOW + timedelta(seconds=0.4), "awaits_review": True},
            True,
            Hold(),
        ),
        # a change not yet tried is due, even stamped by a clock ahead of ours
        ({"due_at": NOW + timedelta(seconds=30), "awaits_review": True}, True, Hold()),
        ({"awaits_review": True, "score": None}, True, Hold()),  # held before any skip
        ({"score": None}, True, Skip(missing_lesson("basics/scale"))),
        ({"line_item_url": None, "line_items_url": ""}, True, Skip(NO_LINE_ITEM, SCORE)),
        ({}, False, Skip(NO_POSTER, SCORE)),
        ({"line_item_url": None, "line_items_url": ""}, False, Skip(NO_LINE_ITEM, SCORE)),
        # the platform is away and another pair probes it: pause, to be released
        ({"outage": away(NOW + timedelta(seconds=3), user_id=6)}, True, Pause(SCORE)),
        # this pair probes next: wait for its probe
        ({"outage": away(NOW + timedelta(seconds=3))}, True, Wait(3.0, SCORE)),
        # another sync of the pair posts: look again when its turn ends, polled every 2 s
        ({"posting_until": NOW + timedelta(seconds=40)}, True, Wait(2.0, SCORE)),
        ({"posting_until": NOW + timedelta(seconds=0.1)}, True, Wait(0.2, SCORE)),
        ({"posting_until": NOW + timedelta(seconds=1)}, True, Wait(1.0, SCORE)),
        # the LMS holds a score of this second: the next one, with what is new by then
        ({"lms_at": SECOND}, True, Wait(0.75, SCORE)),
    ],
)
def test_what_a_sync_does_instead_of_posting(changes, can_post, expected):
    decision = decide(found(**changes), can_post, NOW)
    assert type(decision) is type(expected)
    if isinstance(expected, Wait):
        assert decision.retry_in_s == pytest.approx(expected.retry_in_s)
        assert decision.score == expected.score
    else:
        assert decision == expected


def test_a_retry_come_early_decides_on_its_pending_rows_alone():
    retry = replace(FOUND, attempts=2, due_at=NOW + timedelta(seconds=30))
    assert early(retry.attempts, retry.due_at, NOW)
    assert decide(replace(retry, due=None), True, NOW) == Wait(30.0)
    # read as early, decided later (nothing does so): it looks again rather than guess
    assert decide(replace(retry, due=None), True, NOW + timedelta(minutes=1)) == Wait(0.0)
    assert not early(0, NOW + timedelta(seconds=30), NOW)  # a change not yet tried
    assert not early(2, NOW + timedelta(seconds=0.5), NOW)


@pytest.mark.parametrize(
    ("changes", "stamp"),
    [
        ({}, SECOND),  # nothing posted yet: now, in whole seconds
        ({"lms_at": SECOND - timedelta(seconds=5)}, SECOND),
        # the LMS holds a later stamp (a clock ahead of ours): the second after it
        ({"lms_at": SECOND + timedelta(seconds=9)}, SECOND + timedelta(seconds=10)),
        # another's turn ended (its sync died holding it): this one posts
        ({"posting_until": NOW}, SECOND),
        ({"posting_until": NOW - timedelta(seconds=1)}, SECOND),
    ],
)
def test_a_post_is_stamped_after_the_last_accepted_one(changes, stamp):
    decision = decide(found(**changes), True, NOW)
    assert isinstance(decision, Post)
    post = decision.score_post
    assert (post.timestamp, post.score, post.line_item_url) == (stamp, SCORE, LINE_ITEM)
    assert (post.user_sub, post.platform_id, post.resource_id) == ("student-1", 2, "basics/scale")
    assert (post.label, post.resource_link_id, post.activity_progress) == (
        "Scaling", "link-1", "Completed"
    )  # fmt: skip
    assert (decision.until, decision.probe) == (NOW + TURN, False)


def test_a_post_while_the_platform_is_away_probes_it():
    due = away(NOW - timedelta(seconds=1), user_id=6)  # another pair's probe, due now
    decision = decide(found(outage=due), True, NOW)
    assert isinstance(decision, Post) and decision.probe


def test_a_post_with_a_run_in_flight_is_submitted_yet_fully_graded():
    decision = decide(found(in_flight=True), True, NOW)
    assert isinstance(decision, Post)
    assert decision.score_post.activity_progress == "Submitted"
    assert decision.score_post.grading_progress == "FullyGraded"  # Moodle blanks any other


def test_a_post_without_a_line_item_asks_the_poster_to_make_one():
    decision = decide(found(line_item_url=None), True, NOW)
    assert isinstance(decision, Post) and decision.score_post.line_item_url == ""


@pytest.mark.parametrize(
    ("take", "expected"),
    [(Take.BUSY, Wait(0.5, SCORE)), (Take.PROBED, Pause(SCORE))],
)
def test_a_turn_not_taken_is_no_post(take, expected):
    post = decide(FOUND, True, NOW)
    assert taken(post, Take.TAKEN) is post
    assert taken(post, take) == expected
    assert taken(Hold(), take) == Hold()  # only a post takes a turn


LATER = NOW + timedelta(seconds=2)


@pytest.mark.parametrize(
    ("answer", "attempts", "expected"),
    [
        (Posted("ok", LINE_ITEM), 0, Accepted(None, "ok", None, LATER)),
        (Posted("ok", LINE_ITEM + "-made"), 0, Accepted(None, "ok", LINE_ITEM + "-made", LATER)),
        (Posted("ok", ""), 0, Accepted(None, "ok", None, LATER)),
        # a failure counts an attempt, from the sync's start
        (GraderError("HTTP 503"), 0, Failed("GraderError: HTTP 503", 1, 5.0, NOW)),
        (ScoreRefused("409"), 1, Failed("ScoreRefused: 409", 2, 5.0, NOW)),
        (GraderError("HTTP 503"), 2, Failed("GraderError: HTTP 503", 3, None, NOW)),  # the last
        # an LMS away is the platform's: no attempt, however many were made
        (PlatformAway("refused"), 2, Away("PlatformAway: refused", LATER)),
    ],
)
def test_the_answer_of_the_lms(answer, attempts, expected):
    pending = found(attempts=attempts)
    post = decide(pending, True, NOW)
    assert isinstance(post, Post)
    outcome = conclude(pending, post.score_post, answer, 3, 5.0, NOW, LATER)
    if isinstance(expected, Accepted):
        expected = replace(expected, score_post=post.score_post)
    assert outcome == expected


@pytest.mark.parametrize(
    ("override_comment", "sent"),
    [
        ("Well argued; one typo.", "Well argued; one typo."),  # the teacher's, with their score
        ("", ""),  # an override without a comment sends none, not the automatic one
        (None, ""),  # no override: the automatic comment (issue 29, point 5; none yet)
    ],
)
def test_a_post_carries_the_overrides_comment(override_comment, sent):
    decided = decide(found(override_comment=override_comment), True, NOW)
    assert isinstance(decided, Post)
    assert decided.score_post.comment == sent
