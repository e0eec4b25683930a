"""A student's submissions take turns in the students' queue (issue 27, "Fair share"):
one in the queue at a time, the next sent when it is graded; a grading that pauses keeps
its cases' results and goes back to the tail."""

from sqlalchemy import select

from core.runs import RunOutcome, RunResult, RunStatus
from service.queue import GradeMessage, Queue
from service.store import submissions
from service.store.models import Submission, SubmissionStatus, utcnow
from service.store.submissions import Claim
from testkit.factories import add_student, place, submission, verdict

DONE = verdict(RunStatus.TIMEOUT, ms=5000, feedback="Your program ran out of time.", exit_code=None)


def sent_now(store, ids):
    """Return which of the submissions have had their message sent (enqueued_at set)."""
    with store.session() as session:
        rows = session.execute(select(Submission.id, Submission.enqueued_at).where(
            Submission.id.in_(ids))).all()  # fmt: skip
    return {sid for sid, enqueued_at in rows if enqueued_at is not None}


def graded(store, submission_id):
    claim = submissions.claim(store, submission_id, 30, utcnow())
    assert isinstance(claim, Claim)
    return submissions.finish(store, claim, DONE, utcnow())


def test_a_students_next_submission_waits_until_the_one_before_is_graded(store):
    placed = place(store)
    other = add_student(store, placed, "other")
    mine = [submission(store, placed.placement_id, placed.user_id, f"# {n}") for n in range(3)]
    theirs = submission(store, placed.placement_id, other, "# theirs")
    assert sent_now(store, [*mine, theirs]) == {mine[0], theirs}  # one each in the queue
    assert graded(store, mine[0]).then == mine[1]
    assert sent_now(store, mine) == {mine[0], mine[1]}
    assert graded(store, theirs).then is None  # nothing of theirs waits
    assert graded(store, mine[1]).then == mine[2]
    assert graded(store, mine[2]).then is None


def test_a_regrade_and_a_running_grading_do_not_hold_a_students_turn_wrongly(store):
    placed = place(store)
    first = submission(store, placed.placement_id, placed.user_id, "# 1")
    claim = submissions.claim(store, first, 30, utcnow())  # running: still in the queue
    second = submission(store, placed.placement_id, placed.user_id, "# 2")
    bulk = submission(store, placed.placement_id, placed.user_id, "# r", queue=Queue.REGRADE)
    assert sent_now(store, [first, second, bulk]) == {first, bulk}  # regrades never wait
    assert submissions.finish(store, claim, DONE, utcnow()).then == second


def test_a_turn_the_store_missed_is_sent_by_the_sweep_once(store):
    placed = place(store)
    first = submission(store, placed.placement_id, placed.user_id, "# 1")
    second = submission(store, placed.placement_id, placed.user_id, "# 2")
    with store.session() as session:  # its first is gone (a placement's row deleted by hand)
        session.delete(session.get(Submission, first))
    assert submissions.turns_due(store, utcnow()) == [GradeMessage(second)]
    assert submissions.turns_due(store, utcnow()) == []
    assert sent_now(store, [second]) == {second}


def test_a_paused_grading_keeps_its_cases_and_is_no_lost_claim(store):
    placed = place(store)
    other = add_student(store, placed, "other")
    mine = submission(store, placed.placement_id, placed.user_id, "while True: pass")
    claim = submissions.claim(store, mine, 30, utcnow())
    assert not submissions.others_wait(store, claim)
    submission(store, placed.placement_id, other, "# theirs")
    assert submissions.others_wait(store, claim)
    ran = RunResult(RunOutcome.TIMEOUT, stdout=b"\xff\x00 bytes", duration_ms=5003, cpu_ms=4990)
    assert submissions.pause(store, claim, [("first case", ran)], utcnow(), ["second case"])
    assert not submissions.pause(store, claim, [], utcnow())  # fenced: the claim is over
    again = submissions.claim(store, mine, 30, utcnow())
    assert isinstance(again, Claim)
    assert again.done == (("first case", ran),) and again.claims == 1
    assert again.tried == ("second case",)  # its first try was cut short: it runs whole next
    submissions.finish(store, again, DONE, utcnow())
    with store.session() as session:
        kept = session.get(Submission, mine)
        assert kept.status == SubmissionStatus.GRADED and kept.progress is None
