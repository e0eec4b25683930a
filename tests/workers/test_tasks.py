import os
from datetime import timedelta

import pytest
from kombu import serialization
from sqlalchemy import func, select

import workers.sweep
import workers.tasks  # noqa: F401  registers the tasks by name
from core.runs import RunOutcome, RunResult
from service.queue import TaskName
from service.queue.broker import celery_config
from service.store import grades
from service.store.models import Grade, GradeSync, Submission, utcnow
from service.web import extensions
from testkit.celery import Sent
from testkit.factories import SEED, place, submission
from tests.service import sessions
from tests.workers.contexts import attach_worker
from workers.grading import Outcome
from workers.practicing import Practiced
from workers.sandbox.fake import FakeSandbox
from workers.sweep import find_stuck
from workers.syncing import Synced
from workers.tasks import RosterRead

celery_app, sent = sessions.celery_app, sessions.sent  # its tasks run here, every send recorded


@pytest.fixture
def worker(app):
    """The worker context the tasks read, over the app's store and catalog."""
    return attach_worker(app)


@pytest.fixture
def store(app):
    return extensions.store(app)


@pytest.mark.parametrize(
    ("name", "acks_late", "reject_on_worker_lost"),
    [
        (TaskName.GRADE_SUBMISSION, True, True),
        (TaskName.RUN_PRACTICE, True, True),
        (TaskName.SYNC_GRADE, True, None),
        (TaskName.SWEEP, None, None),
        (TaskName.MAKE_LINE_ITEM, True, None),
    ],
)
def test_tasks_have_stable_names_and_late_acks(celery_app, name, acks_late, reject_on_worker_lost):
    task = celery_app.tasks[name]
    assert task.name == name
    if acks_late:
        assert task.acks_late is True
    if reject_on_worker_lost:
        assert task.reject_on_worker_lost is True


def test_celery_takes_one_message_at_a_time_and_routes_by_queue(settings):
    config = celery_config(settings)
    assert config["worker_prefetch_multiplier"] == 1
    assert config["task_acks_late"] and config["task_reject_on_worker_lost"]
    assert config["task_default_queue"] == "grade"
    assert config["task_routes"][TaskName.SYNC_GRADE] == {"queue": "sync"}
    assert config["accept_content"] == ["json"]  # nothing from a message is unpickled


def test_grade_submission_grades_then_sends_the_sync(worker, celery_app, store, sent, catalog):
    expected = catalog.lesson(SEED).exercise.expected_output.encode()
    fake = FakeSandbox(lambda request: RunResult(RunOutcome.EXITED, expected, exit_code=0))
    worker.sandboxes[os.getpid()] = fake
    placed = place(store, SEED, line_item_url="https://lms.example/lineitems/1/lineitem")
    sid = submission(store, placed.placement_id, placed.user_id, "print(1)", late=False)
    task = celery_app.tasks[TaskName.GRADE_SUBMISSION]
    assert task.apply(args=[sid]).get() is Outcome.GRADED
    args = [placed.user_id, placed.placement_id]
    assert sent == [Sent(TaskName.SYNC_GRADE, args, options={"queue": "sync"})]
    assert task.apply(args=[sid]).get() is Outcome.NOTHING_TO_DO
    assert len(fake.requests) == 1
    with store.session() as session:
        assert session.get(Submission, sid).run_status == "passed"


def test_run_practice_runs_once_and_sends_the_students_next_run(worker, celery_app, store, sent):
    from service.store import practice_runs, submissions
    from service.store.models import PracticeRun

    worker.sandboxes[os.getpid()] = FakeSandbox()
    placed = place(store, SEED, line_item_url="https://lms.example/lineitems/1/lineitem")

    def run_of(source):
        with store.transaction() as connection:
            submissions.lock_author(connection, placed.user_id)
            return practice_runs.queue_new(
                connection, placed.placement_id, placed.user_id, source, None, utcnow()
            ).run_id

    first = run_of("# prints: hello")
    practice_runs.claim(store, first, 30, utcnow())  # a worker has it: the next one waits
    second = run_of("# prints: again")
    task = celery_app.tasks[TaskName.RUN_PRACTICE]
    with store.session() as session:  # its worker died long ago: the lease ran out
        session.get(PracticeRun, first).lease_expires_at = utcnow() - timedelta(seconds=1)
    assert task.apply(args=[first]).get() is Practiced.REPLACED
    assert sent == [Sent(TaskName.RUN_PRACTICE, [second], options={"queue": "grade"})]
    assert task.apply(args=[second]).get() is Practiced.DONE
    with store.session() as session:
        assert session.get(PracticeRun, second).cases[0]["stdout"] == "again"
        assert session.scalar(select(GradeSync)) is None  # nothing for the LMS


def test_without_an_lms_line_item_the_grade_is_kept_at_once(
    worker, celery_app, store, sent, catalog
):
    expected = catalog.lesson(SEED).exercise.expected_output.encode()
    fake = FakeSandbox(lambda request: RunResult(RunOutcome.EXITED, expected, exit_code=0))
    worker.sandboxes[os.getpid()] = fake
    placed = place(store, SEED)  # no line item, no line items URL: nothing to post to
    sid = submission(store, placed.placement_id, placed.user_id, "print(1)", late=False)
    assert celery_app.tasks[TaskName.GRADE_SUBMISSION].apply(args=[sid]).get() is Outcome.GRADED
    assert sent == []  # no sync message: its task could only have recorded a skip
    with store.session() as session:
        grade = session.scalar(select(Grade))
        sync = session.scalar(select(GradeSync))
    assert grade.score_given == 5.0 and grade.score_maximum == 8.0
    assert sync.status == "skipped" and "no line item" in sync.last_error


def test_sync_grade_records_a_skip_without_a_poster(worker, celery_app, store, sent):
    placed = place(store)
    with store.session() as session:  # as an answer leaves it (a verdict settles its own)
        grades.needs_sync(session, placed.placement_id, placed.user_id, utcnow())
    task = celery_app.tasks[TaskName.SYNC_GRADE]
    assert task.apply(args=[placed.user_id, placed.placement_id]).get() is Synced.SKIPPED


@pytest.mark.parametrize("ended", [*Outcome, *Practiced, *Synced, *RosterRead])
def test_a_task_result_is_json_as_its_word(ended):
    """A task returns its enum's member; were Celery to keep results, its JSON is the word."""
    _content_type, _encoding, body = serialization.dumps(ended, serializer="json")
    assert body == f'"{ended.value}"'
    assert serialization.loads(body, "application/json", "utf-8") == ended.value


def test_sweep_task_enqueues_what_is_stuck_on_its_queue(worker, celery_app, store, sent, settings):
    placed = place(store)
    sid = submission(store, placed.placement_id, placed.user_id, "x", late=False)
    old = utcnow() - timedelta(seconds=settings.queued_deadline_s + 1)
    with store.session() as session:
        session.get(Submission, sid).enqueued_at = old
    assert celery_app.tasks[TaskName.SWEEP].apply().get() == {
        "submissions": 1,
        "turns": 0,
        "runs": 0,
        "syncs": 0,
        "purged": 0,
    }
    # at the head of its queue: it has waited longest
    assert sent == [
        Sent(TaskName.GRADE_SUBMISSION, [sid], options={"queue": "grade", "first": True})
    ]
    assert find_stuck(store, settings).submissions == []  # taken: the next sweep leaves it


def test_the_sweep_purges_expired_logins_and_nonces(worker, celery_app, store, sent, monkeypatch):
    from service.store.models import LtiLogin, UsedNonce

    monkeypatch.setattr(workers.sweep, "_purged_at", None)  # no purge yet in this process
    placed = place(store)
    past, future = utcnow() - timedelta(minutes=1), utcnow() + timedelta(minutes=5)
    with store.session() as session:
        for n, expires in enumerate([past, past, future]):
            session.add(LtiLogin(state=f"s{n}", platform_id=placed.platform_id, nonce="n",
                                 browser_hash="h", params={}, expires_at=expires))  # fmt: skip
            session.add(UsedNonce(issuer="https://lms.example", nonce=f"n{n}", expires_at=expires))
    assert celery_app.tasks[TaskName.SWEEP].apply().get()["purged"] == 4
    with store.session() as session:
        assert [login.state for login in session.scalars(select(LtiLogin))] == ["s2"]
        assert [nonce.nonce for nonce in session.scalars(select(UsedNonce))] == ["n2"]
    # the sweep runs every few seconds; expired rows go once a minute
    with store.session() as session:
        session.add(UsedNonce(issuer="https://lms.example", nonce="n3", expires_at=past))
    assert celery_app.tasks[TaskName.SWEEP].apply().get()["purged"] == 0
    monkeypatch.setattr(workers.sweep, "_purged_at", -workers.sweep.PURGE_EVERY_S)
    assert celery_app.tasks[TaskName.SWEEP].apply().get()["purged"] == 1


def test_the_sweep_deletes_practice_runs_a_day_old(worker, celery_app, store, sent, monkeypatch):
    from service.store import practice_runs, submissions
    from service.store.models import PracticeRun

    monkeypatch.setattr(workers.sweep, "_purged_at", None)  # no purge yet in this process
    placed = place(store)
    kept_s = worker.settings.run_kept_s  # a day
    for age_s in (kept_s + 60, 60):
        with store.transaction() as connection:
            submissions.lock_author(connection, placed.user_id)
            practice_runs.queue_new(
                connection, placed.placement_id, placed.user_id, "x", None,
                utcnow() - timedelta(seconds=age_s),
            )  # fmt: skip
    swept = celery_app.tasks[TaskName.SWEEP].apply().get()
    assert swept["purged"] == 1
    with store.session() as session:
        assert session.scalar(select(func.count()).select_from(PracticeRun)) == 1
