"""core.syncs: a placement that holds its scores posts "handed in", then its syncs wait.

Issue 29, point 3: while held, the LMS is told in its own terms that the work is handed in
and not graded yet (PendingManual, no points: Moodle shows the grade blank); the next
changes are held with it, as a regrade's are; once released, the score goes FullyGraded.
"""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from core.lesson_scores import LessonScore
from core.platforms import Posted
from core.syncs import (
    NO_LINE_ITEM,
    Accepted,
    Due,
    Found,
    Hold,
    Post,
    Skip,
    conclude,
    decide,
    held_post,
)

NOW = datetime(2026, 12, 2, 20, 0, 7, 300_000, tzinfo=UTC)
SCORE = LessonScore(3.0, 8.0)
HELD = Due(
    awaits_review=False,
    lesson_id="basics/scale",
    score=SCORE,
    label="Scaling",
    user_sub="student-1",
    line_item_url="https://lms.example/courses/1/line_items/7",
    line_items_url="https://lms.example/courses/1/line_items",
    resource_link_id="link-1",
    outage=None,
    lms_at=None,
    posting_until=None,
    in_flight=False,
    held=True,
)
FOUND = Found(
    user_id=5, placement_id=9, sync_ids=(1, 2), attempts=0, due_at=NOW, platform_id=2, due=HELD
)


def found(**changes):
    return replace(FOUND, due=replace(HELD, **changes))


@pytest.mark.parametrize(("in_flight", "activity"), [(False, "Completed"), (True, "Submitted")])
def test_a_held_score_posts_handed_in_without_its_points(in_flight, activity):
    decision = decide(found(in_flight=in_flight), True, NOW)
    assert isinstance(decision, Post)
    post = decision.score_post
    assert (post.activity_progress, post.grading_progress) == (activity, "PendingManual")
    assert held_post(post)
    assert post.score == SCORE  # kept for the teacher's gradebook; the poster sends no points


def test_a_released_score_posts_fully_graded():
    decision = decide(found(held=False), True, NOW)
    assert isinstance(decision, Post)
    assert decision.score_post.grading_progress == "FullyGraded"
    assert not held_post(decision.score_post)


def test_a_change_after_the_held_post_is_held_with_it():
    # the pair's earlier sync is held: the LMS shows "handed in" already, nothing more goes
    assert decide(found(awaits_review=True), True, NOW) == Hold()
    # the same as a regrade under review, released or not
    assert decide(found(awaits_review=True, held=False), True, NOW) == Hold()


def test_a_held_score_with_nowhere_to_go_is_kept_and_skipped():
    decision = decide(found(line_item_url=None, line_items_url=""), True, NOW)
    assert decision == Skip(NO_LINE_ITEM, SCORE)


def test_the_lms_taking_a_held_post_is_an_accepted_held_post():
    pending = found()
    post = decide(pending, True, NOW)
    assert isinstance(post, Post)
    later = NOW + timedelta(seconds=1)
    outcome = conclude(
        pending, post.score_post, Posted("ok", HELD.line_item_url), 3, 5.0, NOW, later
    )
    assert isinstance(outcome, Accepted) and held_post(outcome.score_post)
