import threading
from datetime import timedelta

import pytest
from sqlalchemy import select

from core.cases import CaseVerdict
from core.compare import LineDiff
from core.messages import verbatim
from core.runs import RunStatus
from core.student_views import stored_view
from core.verdicts import Verdict
from service.queue import GradeMessage, Order, Queue
from service.store import grades, submissions
from service.store.models import Grade, GradeSync, Submission, SubmissionStatus, SyncStatus, utcnow
from service.store.submissions import After, Claim, Held, Next
from testkit.factories import SCALED, add_student, place, submission, verdict

PASSED = verdict(RunStatus.PASSED, "ok\n", feedback="Your output matches.")
FAILED = verdict(
    RunStatus.FAILED, "no\n", diff=LineDiff(1, "ok", "no", "d"), ms=9, feedback="Line 1 differs."
)


@pytest.fixture
def placed(store):
    return place(store)


@pytest.fixture
def queued(store, placed):
    return submission(store, placed.placement_id, placed.user_id, "print(1)", late=False)


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
    assert saved.status == SubmissionStatus.RUNNING and saved.lease_token == claim.token
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


def test_finish_saves_the_verdict_and_the_sync_once(store):
    # a placement with an LMS line item: a sync task posts the grade
    placed = place(store, line_item_url="https://lms.example/lineitems/1")
    queued = submission(store, placed.placement_id, placed.user_id)
    claim = submissions.claim(store, queued, 30, utcnow())
    assert claim.to_lms is True
    after = submissions.finish(store, claim, FAILED, utcnow())
    assert after == After(Next.SYNC_TO_LMS, placed.user_id, placed.placement_id)
    saved = row(store, queued)
    assert (saved.status, saved.run_status, saved.score, saved.gradings) == (
        SubmissionStatus.GRADED,
        RunStatus.FAILED,
        0.0,
        1,
    )
    assert (saved.diff_line, saved.diff_expected) == (1, "ok")
    shown = stored_view(saved)
    assert (shown.stdout, shown.diff) == ("no\n", {"line": 1, "expected": "ok", "got": "no"})
    assert saved.lease_token is None and saved.grader_error is None
    fenced = submissions.finish(store, claim, PASSED, utcnow())  # fenced: not running
    assert fenced.next is Next.NOTHING and not fenced.saved
    assert row(store, queued).gradings == 1
    assert submissions.claim(store, queued, 30, utcnow()) is None  # graded: nothing to do
    with store.session() as session:
        syncs = session.scalars(select(GradeSync)).all()
    assert [(s.placement_id, s.user_id, s.status) for s in syncs] == [
        (placed.placement_id, placed.user_id, SyncStatus.PENDING)
    ]


def test_a_taken_over_lease_cannot_save(store, queued):
    now = utcnow()
    slow = submissions.claim(store, queued, 30, now)
    fast = submissions.claim(store, queued, 30, now + timedelta(seconds=31))
    assert submissions.finish(store, slow, PASSED, utcnow()).next is Next.NOTHING
    assert submissions.finish(store, fast, FAILED, utcnow()).next is Next.KEPT  # no LMS
    saved = row(store, queued)
    assert (saved.run_status, saved.gradings, saved.claims) == (RunStatus.FAILED, 1, 2)


def test_release_queues_again_and_fail_is_a_visible_error(store, queued):
    claim = submissions.claim(store, queued, 30, utcnow())
    assert submissions.release(store, claim, utcnow())
    assert row(store, queued).status == SubmissionStatus.QUEUED
    claim = submissions.claim(store, queued, 30, utcnow())
    assert submissions.fail(store, claim, "GraderError: cgroups are gone", utcnow()).saved
    saved = row(store, queued)
    assert (saved.status, saved.run_status, saved.score) == (
        SubmissionStatus.GRADED,
        RunStatus.ERROR,
        0.0,
    )
    assert saved.grader_error == "GraderError: cgroups are gone"
    assert "our fault" in stored_view(saved).feedback


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
    authors = [placed.user_id, add_student(store, placed, "b"), add_student(store, placed, "c")]
    ids = [
        submission(store, placed.placement_id, author, f"# {n}", late=False)
        for n, author in enumerate(authors)
    ]
    submissions.claim(store, ids[1], lease_s=10, now=now)  # running, lease ends at now+10
    assert submissions.stuck(store, now + timedelta(seconds=5), queued_deadline_s=60) == []
    later = now + timedelta(seconds=61)
    assert submissions.stuck(store, later, 60) == [
        GradeMessage(i, Queue.GRADE, Order.FIRST) for i in ids
    ]
    assert submissions.stuck(store, later, 60) == []  # marked as enqueued: not twice


def test_attempts_used_leaves_out_our_own_failures(store, placed, queued):
    claim = submissions.claim(store, queued, 30, utcnow())
    submissions.fail(store, claim, "boom", utcnow())
    submission(store, placed.placement_id, placed.user_id, "x", late=False)
    with store.session() as session:
        assert submissions.attempts_used(session, placed.placement_id, placed.user_id) == 1


def test_request_regrade_queues_graded_submissions_on_the_bulk_queue(store, placed, queued):
    claim = submissions.claim(store, queued, 30, utcnow())
    submissions.finish(store, claim, PASSED, utcnow())
    assert submissions.request_regrade(store, placed.placement_id, utcnow()) == [queued]
    saved = row(store, queued)
    assert (saved.status, saved.queue, saved.regrades) == (
        SubmissionStatus.QUEUED,
        Queue.REGRADE,
        1,
    )


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
    after = submissions.finish(store, claim, PASSED, utcnow(), lesson=catalog.lesson(SCALED))
    assert after == After(Next.KEPT, placed.user_id, placed.placement_id)
    with store.session() as session:
        statuses = session.scalars(select(GradeSync.status).order_by(GradeSync.id)).all()
        kept = session.scalars(select(Grade.score_given)).all()
    if under_review:  # nothing kept yet: it all goes out when the teacher sends the regrade
        assert (statuses, kept) == ([SyncStatus.HELD, SyncStatus.HELD], [])
    else:
        assert statuses == [SyncStatus.SKIPPED] and len(kept) == 1


@pytest.mark.parametrize("under_review", [False, True])
def test_without_its_lesson_a_grade_to_no_lms_is_settled_with_the_verdict(
    store, placed, queued, under_review
):
    # the worker's catalog lacks the lesson: no score to keep, and no sync task to follow
    if under_review:
        with store.session() as session:
            grades.needs_sync(session, placed.placement_id, placed.user_id, utcnow(), held=True)
    claim = submissions.claim(store, queued, 30, utcnow())
    after = submissions.finish(store, claim, PASSED, utcnow(), lesson=None)
    assert after == After(Next.KEPT, placed.user_id, placed.placement_id)
    with store.session() as session:
        syncs = session.scalars(select(GradeSync).order_by(GradeSync.id)).all()
    if under_review:  # held with the regraded score, to go out when the teacher sends it
        assert [s.status for s in syncs] == [SyncStatus.HELD, SyncStatus.HELD]
    else:
        assert [(s.status, s.attempts) for s in syncs] == [(SyncStatus.SKIPPED, 1)]
        assert syncs[0].last_error == grades.missing_lesson(SCALED)


def test_finish_keeps_every_case_with_what_a_hidden_one_holds(store, queued):
    hidden = CaseVerdict(
        "large scores", RunStatus.FAILED, 2.0, True, "At [0]: expected 0.5, got nan.",
        "softmax(np.array([1000.0, 1000.0]))", "[0.5, 0.5]", "array([nan, nan], dtype=float64)",
        "", "RuntimeWarning", 0, 8,
    )  # fmt: skip
    shown = CaseVerdict("example", RunStatus.PASSED, 1.0, False, "", "(no input)", "ok\n",
                        "ok\n", "ok\n", "", 0, 7)  # fmt: skip
    graded = Verdict(RunStatus.FAILED, 15, verbatim("1 of 2"), (shown, hidden))
    claim = submissions.claim(store, queued, 30, utcnow())
    assert submissions.finish(store, claim, graded, utcnow()).saved
    kept = row(store, queued).cases
    assert [case["name"] for case in kept] == ["example", "large scores"]
    assert kept[1] == {
        **hidden.as_json(),
        "status": "failed",
        "detail": "At [0]: expected 0.5, got nan.",
        "input": "softmax(np.array([1000.0, 1000.0]))",
        "expected": "[0.5, 0.5]",
        "got": "array([nan, nan], dtype=float64)",
        "stdout": "",
        "stderr": "RuntimeWarning",
        "exit_code": 0,
        "duration_ms": 8,
        "diff": None,
        # its one-line verdict to be translated; none of the detail, built as English only
        "feedback_message": {"t": "Hidden case '{name}' failed.", "a": {"name": "large scores"}},
        "detail_message": None,
    }
    assert kept[1]["feedback"] == "Hidden case 'large scores' failed."
