import logging
import time
from dataclasses import replace
from datetime import timedelta

import pytest
from sqlalchemy import select

from core.errors import GraderError
from core.runs import RunOutcome, RunResult, RunStatus
from core.student_views import stored_view
from service.store import submissions
from service.store.models import GradeSync, Submission, SubmissionStatus, SyncStatus, utcnow
from service.store.submissions import After, Next
from testkit.factories import SEED, place, submission
from workers.grading import Outcome, grade_stored
from workers.sandbox.fake import FakeSandbox


@pytest.fixture
def expected(catalog):
    return catalog.lesson(SEED).exercise.expected_output.encode()


@pytest.fixture
def queued(store):
    placed = place(store, SEED)
    return submission(store, placed.placement_id, placed.user_id, "print(1)", late=False)


def prints(stdout):
    return FakeSandbox(lambda request: RunResult(RunOutcome.EXITED, stdout, exit_code=0))


def crashes(error):
    def run(request):
        raise error

    return FakeSandbox(run)


def row(store, submission_id):
    with store.session() as session:
        return session.get(Submission, submission_id)


def test_a_stale_message_leaves_a_regrade_to_the_bulk_queue(
    store, catalog, settings, queued, expected
):
    sandbox = prints(expected)
    assert grade_stored(store, catalog, sandbox, settings, queued, queue="grade").outcome is (
        Outcome.GRADED
    )
    submissions.request_regrade(store, row(store, queued).placement_id, utcnow())
    # a copy of the student's message, delivered again after the teacher's regrade
    stale = grade_stored(store, catalog, sandbox, settings, queued, queue="grade")
    assert stale.outcome is Outcome.NOTHING_TO_DO
    assert row(store, queued).status == SubmissionStatus.QUEUED
    regraded = grade_stored(store, catalog, sandbox, settings, queued, queue="regrade")
    assert regraded.outcome is Outcome.GRADED
    assert (row(store, queued).gradings, len(sandbox.requests)) == (2, 2)


def test_grades_once_and_asks_for_a_sync(store, catalog, settings, queued, expected):
    sandbox = prints(expected)
    graded = grade_stored(store, catalog, sandbox, settings, queued)
    assert graded.outcome is Outcome.GRADED
    saved = row(store, queued)
    # a placement without an LMS line item: the grade is kept with the verdict
    assert graded.after == After(Next.KEPT, saved.user_id, saved.placement_id)
    again = grade_stored(store, catalog, sandbox, settings, queued)
    assert again.outcome is Outcome.NOTHING_TO_DO
    assert len(sandbox.requests) == 1
    saved = row(store, queued)
    assert (saved.run_status, saved.score, saved.gradings, saved.claims) == ("passed", 1.0, 1, 1)
    assert sandbox.requests[0].files["model.py"] == b"print(1)"


def test_a_grade_for_an_lms_asks_for_a_sync_task(store, catalog, settings, expected):
    placed = place(store, SEED, line_item_url="https://lms.example/lineitems/1")
    sid = submission(store, placed.placement_id, placed.user_id)
    graded = grade_stored(store, catalog, prints(expected), settings, sid)
    assert graded.after == After(Next.SYNC_TO_LMS, placed.user_id, placed.placement_id)
    with store.session() as session:  # pending, for the sync task to post
        assert session.scalar(select(GradeSync.status)) == SyncStatus.PENDING


def test_a_wrong_output_is_a_failed_verdict_with_the_first_difference(
    store, catalog, settings, queued
):
    grade_stored(store, catalog, prints(b"nope\n"), settings, queued)
    saved = row(store, queued)
    assert (saved.run_status, saved.diff_line, stored_view(saved).diff["got"]) == (
        RunStatus.FAILED, 1, "nope"
    )  # fmt: skip


def test_unknown_submission_is_nothing_to_do(store, catalog, settings):
    assert grade_stored(store, catalog, prints(b""), settings, 404).outcome is Outcome.NOTHING_TO_DO


def test_held_by_a_live_lease_says_when_to_look_again(store, catalog, settings, queued):
    submissions.claim(store, queued, lease_s=30, now=utcnow())
    graded = grade_stored(store, catalog, prints(b""), settings, queued)
    assert graded.outcome is Outcome.HELD
    assert 29 <= graded.retry_in_s <= 32


@pytest.mark.parametrize(
    "error", [GraderError("cgroup vanished"), OSError("no space left"), KeyError("bug")]
)
def test_a_grader_crash_is_retried_then_ends_as_a_visible_error(
    store, catalog, settings, queued, error
):
    settings = replace(settings, grade_attempts=3)
    sandbox = crashes(error)
    outcomes = [grade_stored(store, catalog, sandbox, settings, queued).outcome for _ in range(3)]
    assert outcomes == [Outcome.RETRY, Outcome.RETRY, Outcome.GAVE_UP]
    saved = row(store, queued)
    assert (saved.status, saved.run_status, saved.score, saved.gradings) == (
        SubmissionStatus.GRADED,
        RunStatus.ERROR,
        0,
        1,
    )
    assert type(error).__name__ in saved.grader_error
    assert "our fault" in stored_view(saved).feedback
    with store.session() as session:
        assert session.query(GradeSync).count() == 1


def test_a_grader_crash_is_logged_with_its_traceback_at_the_first_failure(
    store, catalog, settings, queued, caplog
):
    settings = replace(settings, grade_attempts=3)
    with caplog.at_level(logging.ERROR, logger="workers.grading"):
        graded = grade_stored(store, catalog, crashes(KeyError("bug")), settings, queued)
    assert graded.outcome is Outcome.RETRY
    [record] = caplog.records
    assert f"grading submission {queued} failed (try 1 of 3); retrying" in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is KeyError  # the traceback
    saved = row(store, queued)
    # queued again, and its teacher's page says why: "grader error, retrying"
    assert saved.status == SubmissionStatus.QUEUED and saved.grader_error == "KeyError: 'bug'"


def test_a_submission_that_keeps_losing_its_workers_ends_as_an_error(
    store, catalog, settings, queued
):
    settings = replace(settings, grade_attempts=2, lease_s=1)
    now = utcnow()
    for n in range(2):  # two workers claimed it and died (their leases ran out)
        submissions.claim(store, queued, 1, now + timedelta(seconds=5 * n))
    clock = lambda: now + timedelta(seconds=20)  # noqa: E731
    graded = grade_stored(store, catalog, prints(b""), settings, queued, clock=clock)
    assert graded.outcome is Outcome.GAVE_UP
    assert "lost workers" in row(store, queued).grader_error


def test_a_worker_whose_lease_was_taken_over_saves_nothing(
    store, catalog, settings, queued, expected
):
    settings = replace(settings, lease_s=1)
    later = utcnow() + timedelta(seconds=5)

    def slow_run(request):
        # while this run is slow, the lease runs out and another worker takes over and saves
        other = grade_stored(
            store, catalog, prints(b"other\n"), settings, queued, clock=lambda: later
        )
        assert other.outcome is Outcome.GRADED
        return RunResult(RunOutcome.EXITED, expected, exit_code=0)

    graded = grade_stored(store, catalog, FakeSandbox(slow_run), settings, queued)
    assert graded.outcome is Outcome.FENCED_OUT and graded.after is None
    saved = row(store, queued)
    assert (stored_view(saved).stdout, saved.gradings, saved.claims) == ("other\n", 1, 2)


def test_a_lesson_missing_from_the_catalog_is_our_fault(store, catalog, settings):
    placed = place(store, lesson_id="expert/gone")
    sid = submission(store, placed.placement_id, placed.user_id, "x", late=False)
    settings = replace(settings, grade_attempts=1)
    assert grade_stored(store, catalog, prints(b""), settings, sid).outcome is Outcome.GAVE_UP
    assert "expert/gone" in row(store, sid).grader_error
    with store.session() as session:  # its sync is settled with the verdict: nothing follows
        sync = session.scalar(select(GradeSync))
    assert (sync.status, sync.last_error) == (
        SyncStatus.SKIPPED,
        "the lesson 'expert/gone' is not in the catalog",
    )


def test_a_grading_longer_than_its_lease_keeps_it_by_renewing(store, catalog, settings, expected):
    """Cases together may outlast one lease: while the worker lives, nobody takes it over."""
    placed = place(store, SEED)
    sid = submission(store, placed.placement_id, placed.user_id, "print(1)", late=False)
    short = replace(settings, lease_s=1)
    seen = []

    def slow(request):
        for _ in range(3):  # 2.4 s in all, more than twice the lease
            time.sleep(0.8)
            seen.append(submissions.claim(store, sid, short.lease_s, utcnow()))
        return RunResult(RunOutcome.EXITED, expected, exit_code=0)

    graded = grade_stored(store, catalog, FakeSandbox(slow), short, sid)
    assert graded.outcome is Outcome.GRADED
    assert [type(other).__name__ for other in seen] == ["Held", "Held", "Held"]
    saved = row(store, sid)
    assert (saved.run_status, saved.gradings, saved.claims) == ("passed", 1, 1)


def test_a_lease_is_renewed_only_under_its_own_token(store, queued):
    now = utcnow()
    first = submissions.claim(store, queued, 30, now)
    assert submissions.renew(store, first, 30, now + timedelta(seconds=10))
    later = now + timedelta(seconds=35)  # renewed to now + 40 s: still held
    assert type(submissions.claim(store, queued, 30, later)).__name__ == "Held"
    taken = submissions.claim(store, queued, 30, now + timedelta(seconds=41))
    assert taken.token != first.token
    assert not submissions.renew(store, first, 30, now + timedelta(seconds=42))
    assert row(store, queued).lease_token == taken.token
