"""Practice runs in the store (issue 30, "Run without spending an attempt"): one in flight per
student, claimed under a lease and ended once, paused in turns, found again by the sweep,
deleted after a day; and never a submission, a grade or a grade sync."""

from datetime import timedelta

from sqlalchemy import func, select

from core.practice import InputRun, Practice
from core.runs import RunOutcome, RunResult, RunStatus
from service.queue import Order, PracticeMessage, Queue
from service.store import fair_share, practice_runs, submissions
from service.store.models import (
    Grade,
    GradeSync,
    PracticeRun,
    PracticeStatus,
    Submission,
    utcnow,
)
from service.store.practice_runs import Claim
from service.store.submissions import Held
from testkit.factories import add_student, place, submission, verdict

FOUND = Practice(
    InputRun(RunOutcome.EXITED, "3 4\n", "", 0, 7),
    verdict(RunStatus.PASSED, stdout="ok\n", ms=9),
)


def started(store, placed, user_id=None, source="print(1)", stdin=None, now=None):
    """Start a practice run as the Run path does; return what the store said."""
    user_id = placed.user_id if user_id is None else user_id
    with store.transaction() as connection:
        submissions.lock_author(connection, user_id)
        return practice_runs.queue_new(
            connection, placed.placement_id, user_id, source, stdin, now or utcnow()
        )


def row(store, run_id):
    with store.session() as session:
        found = session.get(PracticeRun, run_id)
        session.expunge(found)
        return found


def taken(store, run_id, lease_s=30, now=None):
    claim = practice_runs.claim(store, run_id, lease_s, now or utcnow())
    assert isinstance(claim, Claim), claim
    return claim


def test_a_run_is_claimed_once_and_saved_once(store):
    placed = place(store)
    created = started(store, placed, source="print(2)", stdin="3 4\n")
    assert created.send
    claim = taken(store, created.run_id)
    assert (claim.source, claim.stdin, claim.lesson_id) == (
        "print(2)",
        "3 4\n",
        "expert/scaled-dot-product",
    )
    assert not claim.replaced and claim.claims == 1
    assert isinstance(practice_runs.claim(store, created.run_id, 30, utcnow()), Held)
    assert practice_runs.finish(store, claim, FOUND, utcnow()) == practice_runs.After(True)
    assert practice_runs.finish(store, claim, FOUND, utcnow()).saved is False  # once
    assert practice_runs.claim(store, created.run_id, 30, utcnow()) is None  # done
    kept = row(store, created.run_id)
    assert (kept.status, kept.run_status, kept.duration_ms) == ("done", "passed", 16)
    assert [case["name"] for case in kept.cases] == ["output"]
    assert kept.on_input["stdout"] == "3 4\n" and kept.finished_at is not None
    assert kept.lease_token is None and not kept.replaced


def test_a_new_run_replaces_the_students_queued_one_at_once(store):
    placed = place(store)
    first = started(store, placed)
    second = started(store, placed)
    assert second.send  # nothing of theirs runs: it goes now
    old = row(store, first.run_id)
    assert (old.status, old.replaced) == ("done", True)
    assert practice_runs.claim(store, first.run_id, 30, utcnow()) is None  # its message: nothing
    assert taken(store, second.run_id).replaced is False


def test_a_new_run_waits_for_the_running_one_which_stops_for_it(store):
    placed = place(store)
    first = started(store, placed)
    claim = taken(store, first.run_id)
    assert not practice_runs.replaced(store, claim)
    second = started(store, placed)
    assert not second.send and row(store, second.run_id).enqueued_at is None
    assert practice_runs.replaced(store, claim)  # its worker stops at its next case
    ended = practice_runs.end_replaced(store, claim, utcnow())
    assert ended == practice_runs.After(True, then=second.run_id)
    assert ended.follows == (PracticeMessage(second.run_id),)
    assert row(store, second.run_id).enqueued_at is not None
    assert (row(store, first.run_id).status, row(store, first.run_id).replaced) == ("done", True)
    # a third Run while the second is queued: the second goes, the third is sent now
    third = started(store, placed)
    assert third.send and row(store, second.run_id).replaced


def test_a_running_run_whose_worker_is_gone_is_replaced_at_once(store):
    placed = place(store)
    first = started(store, placed)
    claim = taken(store, first.run_id, lease_s=1, now=utcnow() - timedelta(seconds=5))
    second = started(store, placed)
    assert second.send  # the lease ran out: nobody is running it
    assert row(store, first.run_id).replaced
    assert practice_runs.finish(store, claim, FOUND, utcnow()).saved is False  # fenced out


def test_a_run_claimed_after_a_newer_one_came_is_ended_unrun(store):
    placed = place(store)
    first = started(store, placed)
    claim = taken(store, first.run_id, lease_s=1, now=utcnow() - timedelta(seconds=5))
    with store.session() as session:  # a newer run written while its worker died
        session.add(PracticeRun(placement_id=placed.placement_id, user_id=placed.user_id,
                                source="x", created_at=utcnow(), enqueued_at=None))  # fmt: skip
    again = taken(store, first.run_id)
    assert again.replaced and again.claims == 2
    assert practice_runs.finish(store, claim, FOUND, utcnow()).saved is False


def test_the_students_runs_do_not_hold_each_others_turns(store):
    placed = place(store)
    other = add_student(store, placed, "other")
    mine = started(store, placed)
    theirs = started(store, placed, user_id=other)
    assert mine.send and theirs.send  # one each
    claim = taken(store, mine.run_id)
    assert started(store, placed, user_id=other).send  # theirs was only queued: replaced
    assert not started(store, placed).send  # mine runs: the new one waits
    assert practice_runs.finish(store, claim, FOUND, utcnow()).then is not None


def test_a_paused_run_keeps_its_runs_and_is_no_lost_claim(store):
    placed = place(store)
    created = started(store, placed, stdin="1\n")
    claim = taken(store, created.run_id)
    ran = RunResult(RunOutcome.TIMEOUT, stdout=b"\xff\x00 bytes", duration_ms=5003, cpu_ms=4990)
    assert practice_runs.pause(store, claim, [("", ran)], utcnow(), ["the lesson's example"])
    assert not practice_runs.pause(store, claim, [], utcnow())  # fenced: the claim is over
    again = taken(store, created.run_id)
    assert again.done == (("", ran),) and again.claims == 1
    assert again.tried == ("the lesson's example",)
    assert practice_runs.finish(store, again, FOUND, utcnow()).saved
    assert row(store, created.run_id).progress is None


def test_another_students_waiting_run_makes_a_long_grading_yield(store):
    placed = place(store)
    other = add_student(store, placed, "other")
    mine = submission(store, placed.placement_id, placed.user_id, "while True: pass")
    claim = submissions.claim(store, mine, 30, utcnow())
    own_run = started(store, placed)
    assert not submissions.others_wait(store, claim)  # the student's own run is no other's
    theirs = started(store, placed, user_id=other)
    assert submissions.others_wait(store, claim)
    assert not fair_share.others_wait(store, placed.user_id, Queue.REGRADE)  # runs are not there
    taken(store, theirs.run_id)  # running, no longer waiting
    assert not submissions.others_wait(store, claim)
    # and a run yields to another student's submission or run as a grading does
    run_claim = taken(store, own_run.run_id)
    assert not fair_share.others_wait(store, run_claim.user_id, Queue.GRADE)
    submission(store, placed.placement_id, other, "print(1)")
    assert fair_share.others_wait(store, run_claim.user_id, Queue.GRADE)


def test_the_sweep_sends_a_lost_run_again_first(store):
    placed = place(store)
    long_ago = utcnow() - timedelta(seconds=400)
    queued = started(store, placed, now=long_ago)  # its message was lost
    assert practice_runs.stuck(store, utcnow(), 300) == [
        PracticeMessage(queued.run_id, Order.FIRST)
    ]
    assert practice_runs.stuck(store, utcnow(), 300) == []  # taken: the next sweep leaves it
    other = add_student(store, placed, "other")
    running = started(store, placed, user_id=other, now=utcnow() - timedelta(seconds=10))
    taken(store, running.run_id, lease_s=1, now=utcnow() - timedelta(seconds=5))  # worker died
    assert practice_runs.stuck(store, utcnow(), 300) == [
        PracticeMessage(running.run_id, Order.FIRST)
    ]


def test_a_waiting_run_whose_turn_was_missed_is_sent_by_the_sweep_once(store):
    placed = place(store)
    first = started(store, placed)
    taken(store, first.run_id)
    second = started(store, placed)
    assert not second.send
    with store.session() as session:  # the running one is gone (deleted by hand)
        session.delete(session.get(PracticeRun, first.run_id))
    assert practice_runs.turns_due(store, utcnow()) == [PracticeMessage(second.run_id)]
    assert practice_runs.turns_due(store, utcnow()) == []


def test_runs_a_day_old_are_purged_and_the_rate_counts_the_window(store):
    placed = place(store)
    now = utcnow()
    old = started(store, placed, now=now - timedelta(days=2))
    recent = [started(store, placed, now=now - timedelta(seconds=s)) for s in (30, 10)]
    with store.transaction() as connection:
        count, oldest = practice_runs.recent(connection, placed.user_id, now - timedelta(minutes=1))
    assert count == 2 and oldest == now - timedelta(seconds=30)
    assert practice_runs.purge(store, now - timedelta(days=1)) == 1
    assert row_count(store, PracticeRun) == 2
    assert practice_runs.get(store, old.run_id) is None
    assert practice_runs.get(store, recent[1].run_id).status == PracticeStatus.QUEUED


def row_count(store, model):
    with store.session() as session:
        return session.scalar(select(func.count()).select_from(model))


def test_a_runs_whole_life_writes_no_submission_grade_or_sync(store):
    placed = place(store, line_item_url="https://lms.example/lineitems/1/lineitem")
    created = started(store, placed)
    claim = taken(store, created.run_id)
    assert practice_runs.finish(store, claim, FOUND, utcnow()).follows == ()
    lost = started(store, placed)
    claim = taken(store, lost.run_id)
    gave_up = verdict(RunStatus.ERROR, ms=0, feedback="The grader lost your run.")
    assert practice_runs.lose(store, claim, gave_up, "no end after 3 claims", utcnow()).saved
    kept = row(store, lost.run_id)
    assert (kept.run_status, kept.grader_error) == ("error", "no end after 3 claims")
    assert [row_count(store, model) for model in (Submission, Grade, GradeSync)] == [0, 0, 0]
