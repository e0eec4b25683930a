import threading
from datetime import timedelta

import pytest
from sqlalchemy import select

from core.compare import LineDiff
from core.runs import RunStatus
from core.verdicts import Verdict
from service.store import grades, submissions
from service.store.models import Grade, GradeSync, Submission, utcnow
from service.store.submissions import Claim, Held
from tests.factories import SCALED, place

PASSED = Verdict(RunStatus.PASSED, 1.0, "ok\n", "", 0, 12, "Your output matches.")
FAILED = Verdict(
    RunStatus.FAILED, 0.0, "no\n", "", 0, 9, "Line 1 differs.", LineDiff(1, "ok", "no", "d")
)


@pytest.fixture
def placed(store):
    return place(store)


@pytest.fixture
def queued(store, placed):
    return submissions.create(store, placed.placement_id, placed.user_id, "print(1)", late=False)


def row(store, submission_id):
    with store.session() as session:
        return session.get(Submission, submission_id)


def test_claim_takes_a_queued_submission_under_a_lease(store, queued):
    now = utcnow()
    claim = submissions.claim(store, queued, lease_s=30, now=now)
    assert isinstance(claim, Claim)
    assert (claim.claims, claim.source, claim.lesson_id) == (
        1,
        "print(1)",
        "expert/scaled-dot-product",
    )
    saved = row(store, queued)
    assert saved.status == "running" and saved.lease_token == claim.token
    assert saved.lease_expires_at == now + timedelta(seconds=30)


@pytest.mark.parametrize(
    ("later_s", "expect"),
    [(5, Held), (31, Claim)],
    ids=["lease-live-held", "lease-expired-taken-over"],
)
def test_second_claim(store, queued, later_s, expect):
    now = utcnow()
    first = submissions.claim(store, queued, lease_s=30, now=now)
    second = submissions.claim(store, queued, lease_s=30, now=now + timedelta(seconds=later_s))
    assert isinstance(second, expect)
    if isinstance(second, Claim):
        assert second.claims == 2 and second.token != first.token


def test_finish_saves_the_verdict_and_the_sync_once(store, queued, placed):
    claim = submissions.claim(store, queued, 30, utcnow())
    assert submissions.finish(store, claim, FAILED, utcnow())
    saved = row(store, queued)
    assert (saved.status, saved.run_status, saved.score, saved.gradings) == (
        "graded",
        "failed",
        0.0,
        1,
    )
    assert (saved.diff_line, saved.diff_expected, saved.diff_got) == (1, "ok", "no")
    assert saved.lease_token is None and saved.grader_error is None
    assert submissions.finish(store, claim, PASSED, utcnow()) is False  # fenced: not running
    assert row(store, queued).gradings == 1
    assert submissions.claim(store, queued, 30, utcnow()) is None  # graded: nothing to do
    with store.session() as session:
        syncs = session.scalars(select(GradeSync)).all()
    assert [(s.placement_id, s.user_id, s.status) for s in syncs] == [
        (placed.placement_id, placed.user_id, "pending")
    ]


def test_a_taken_over_lease_cannot_save(store, queued):
    now = utcnow()
    slow = submissions.claim(store, queued, 30, now)
    fast = submissions.claim(store, queued, 30, now + timedelta(seconds=31))
    assert submissions.finish(store, slow, PASSED, utcnow()) is False
    assert submissions.finish(store, fast, FAILED, utcnow()) is True
    saved = row(store, queued)
    assert (saved.run_status, saved.gradings, saved.claims) == ("failed", 1, 2)


def test_release_queues_again_and_fail_is_a_visible_error(store, queued):
    claim = submissions.claim(store, queued, 30, utcnow())
    assert submissions.release(store, claim, utcnow())
    assert row(store, queued).status == "queued"
    claim = submissions.claim(store, queued, 30, utcnow())
    assert submissions.fail(store, claim, "GraderError: cgroups are gone", utcnow())
    saved = row(store, queued)
    assert (saved.status, saved.run_status, saved.score) == ("graded", "error", 0.0)
    assert saved.grader_error == "GraderError: cgroups are gone"
    assert "our fault" in saved.feedback


def test_claims_race_one_winner(store, queued):
    won = []
    barrier = threading.Barrier(6)

    def race():
        barrier.wait()
        claim = submissions.claim(store, queued, 30, utcnow())
        if isinstance(claim, Claim):
            won.append(claim)

    threads = [threading.Thread(target=race) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1 and row(store, queued).claims == 1


def test_stuck_finds_late_queued_and_expired_running_once(store, placed):
    now = utcnow()
    ids = [
        submissions.create(store, placed.placement_id, placed.user_id, f"# {n}", late=False)
        for n in range(3)
    ]
    submissions.claim(store, ids[1], lease_s=10, now=now)  # running, lease ends at now+10
    assert submissions.stuck(store, now + timedelta(seconds=5), queued_deadline_s=60) == []
    later = now + timedelta(seconds=61)
    assert sorted(submissions.stuck(store, later, 60)) == [(i, "grade") for i in ids]
    assert submissions.stuck(store, later, 60) == []  # marked as enqueued: not twice


def test_attempts_used_leaves_out_our_own_failures(store, placed, queued):
    claim = submissions.claim(store, queued, 30, utcnow())
    submissions.fail(store, claim, "boom", utcnow())
    submissions.create(store, placed.placement_id, placed.user_id, "x", late=False)
    with store.session() as session:
        assert submissions.attempts_used(session, placed.placement_id, placed.user_id) == 1


def test_request_regrade_queues_graded_submissions_on_the_bulk_queue(store, placed, queued):
    claim = submissions.claim(store, queued, 30, utcnow())
    submissions.finish(store, claim, PASSED, utcnow())
    assert submissions.request_regrade(store, placed.placement_id, utcnow()) == [queued]
    saved = row(store, queued)
    assert (saved.status, saved.queue, saved.regrades) == ("queued", "regrade", 1)


@pytest.mark.parametrize("under_review", [False, True])
def test_a_score_kept_at_once_waits_while_a_regraded_one_awaits_review(
    store, catalog, placed, queued, under_review
):
    # a placement without an LMS line item: its lesson score is kept with the verdict
    if under_review:  # a bulk regrade's new score for this student, not sent yet
        with store.session() as session:
            grades.needs_sync(session, placed.placement_id, placed.user_id, utcnow(), held=True)
    claim = submissions.claim(store, queued, 30, utcnow())
    assert claim is not None and claim.to_lms is False
    assert submissions.finish(store, claim, PASSED, utcnow(), lesson=catalog.lesson(SCALED))
    with store.session() as session:
        statuses = session.scalars(select(GradeSync.status).order_by(GradeSync.id)).all()
        kept = session.scalars(select(Grade.score_given)).all()
    if under_review:  # nothing kept yet: it all goes out when the teacher sends the regrade
        assert (statuses, kept) == (["held", "held"], [])
    else:
        assert statuses == ["skipped"] and len(kept) == 1
