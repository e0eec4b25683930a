"""Running a stored practice run (workers/practicing.py): on the real warm pool, the student's
input and the visible cases, saved once; replaced by a newer Run at its next case; our
failures retried, then told as ours."""

import shutil
import threading
import time
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from core.lessons import load_catalog
from core.messages import from_json
from core.runs import Limits, RunOutcome, RunResult
from service.queue import Order, PracticeMessage
from service.store import practice_runs, submissions
from service.store.models import Grade, GradeSync, PracticeRun, Submission, utcnow
from testkit.factories import place
from testkit.servers import REPO
from testkit.slowness import scaled, stretch
from workers.practicing import Practiced, practice_stored
from workers.sandbox.fake import FakeSandbox

POSITIONAL = "expert/positional-encoding"
SOLUTION = (REPO / "lessons" / POSITIONAL / "solution" / "model.py").read_text()
EXPECTED = (REPO / "lessons" / POSITIONAL / "expected_output.txt").read_text()
ENDLESS = "while True:\n    pass\n"


def start(store, placed, source, stdin=None):
    with store.transaction() as connection:
        submissions.lock_author(connection, placed.user_id)
        created = practice_runs.queue_new(
            connection, placed.placement_id, placed.user_id, source, stdin, utcnow()
        )
    return created


def row(store, run_id):
    with store.session() as session:
        found = session.get(PracticeRun, run_id)
        session.expunge(found)
        return found


def count(store, model):
    with store.session() as session:
        return session.scalar(select(func.count()).select_from(model))


@pytest.mark.bwrap
def test_a_run_on_the_warm_pool_shows_the_input_run_and_the_visible_cases(
    store, catalog, settings, warm
):
    placed = place(store, POSITIONAL, line_item_url="https://lms.example/lineitems/1/lineitem")
    created = start(store, placed, SOLUTION, "3 4\n")
    ran = practice_stored(store, catalog, warm, settings, created.run_id)
    assert (ran.outcome, ran.follows) == (Practiced.DONE, ())
    kept = row(store, created.run_id)
    assert kept.status == "done" and kept.run_status == "passed"
    assert kept.on_input["stdout"] == EXPECTED and kept.on_input["exit_code"] == 0
    exercise = catalog.lesson(POSITIONAL).exercise
    shown = [case.name for case in exercise.cases if not case.hidden]
    assert [case["name"] for case in kept.cases] == shown and len(shown) < len(exercise.cases)
    assert {case["status"] for case in kept.cases} == {"passed"}
    # a practice run is no attempt: no submission, no grade, nothing for the LMS
    assert [count(store, model) for model in (Submission, Grade, GradeSync)] == [0, 0, 0]
    again = practice_stored(store, catalog, warm, settings, created.run_id)
    assert again.outcome is Practiced.NOTHING_TO_DO  # a message delivered twice: once


def one_second_catalog(root):
    """The positional-encoding lesson with a one-second limit (stretched to this host)."""
    shutil.copytree(REPO / "lessons" / POSITIONAL, root / POSITIONAL)
    (root / "expert" / "track.yaml").write_text(
        "title: Expert\nlessons:\n  - positional-encoding\n"
    )
    exercise = root / POSITIONAL / "exercise.yaml"
    limit = stretch(Limits(time_s=1.0)).time_s
    exercise.write_text(exercise.read_text() + f"limits:\n  time_s: {limit}\n")
    return load_catalog(root)


@pytest.mark.bwrap
def test_a_newer_run_stops_an_endless_one_at_its_next_case(store, settings, warm, tmp_path):
    catalog = one_second_catalog(tmp_path / "lessons")
    placed = place(store, POSITIONAL)
    first = start(store, placed, ENDLESS, "3 4\n")
    ended = {}
    worker = threading.Thread(
        target=lambda: ended.update(
            ran=practice_stored(store, catalog, warm, settings, first.run_id)
        )
    )
    worker.start()
    deadline = time.monotonic() + scaled(10)
    while row(store, first.run_id).status != "running":
        assert time.monotonic() < deadline
        time.sleep(0.02)
    second = start(store, placed, SOLUTION, "3 4\n")
    assert not second.send  # it waits for the endless one to stop
    worker.join(scaled(30))
    runs = len(catalog.lesson(POSITIONAL).exercise.cases)  # the input run and 4 visible cases
    assert ended["ran"].outcome is Practiced.REPLACED
    assert ended["ran"].follows == (PracticeMessage(second.run_id),)
    old = row(store, first.run_id)
    assert old.replaced and old.cases is None  # ended unrun: no half result
    # it stopped after its turn's first runs, not after every one of its endless runs
    assert (old.finished_at - old.created_at).total_seconds() < (runs - 1) * stretch(
        Limits(time_s=1.0)
    ).time_s
    assert practice_stored(store, catalog, warm, settings, second.run_id).outcome is Practiced.DONE
    assert row(store, second.run_id).on_input["stdout"] == EXPECTED


def test_our_failure_is_retried_then_told_as_ours(store, catalog, settings):
    def breaks(request):
        raise OSError("the sandbox broke")

    placed = place(store, POSITIONAL)
    created = start(store, placed, SOLUTION, "3 4\n")
    sandbox = FakeSandbox(breaks)
    outcomes = [
        practice_stored(store, catalog, sandbox, settings, created.run_id).outcome
        for _ in range(settings.grade_attempts)
    ]
    assert outcomes == [Practiced.RETRY] * (settings.grade_attempts - 1) + [Practiced.LOST]
    kept = row(store, created.run_id)
    assert kept.status == "done" and kept.grader_error == "OSError: the sandbox broke"
    assert str(from_json(kept.message)).startswith("The grader lost your run (3 tries).")


def test_a_run_its_workers_died_on_ends_as_lost(store, catalog, settings):
    placed = place(store, POSITIONAL)
    created = start(store, placed, SOLUTION)
    long_ago = utcnow() - timedelta(minutes=5)
    for n in range(settings.grade_attempts):  # claimed, and never ended: the worker died
        practice_runs.claim(store, created.run_id, 1, long_ago + timedelta(seconds=10 * n))
    ran = practice_stored(store, catalog, FakeSandbox(), settings, created.run_id)
    assert ran.outcome is Practiced.LOST
    assert row(store, created.run_id).grader_error == "no end after 3 claims"


def test_a_run_whose_turn_is_over_goes_back_behind_fresh_work(store, catalog, settings):
    placed = place(store, POSITIONAL)
    other = place(store, POSITIONAL)  # another student, on another placement
    created = start(store, placed, ENDLESS, "1 2\n")
    waiting = start(store, other, SOLUTION)
    assert waiting.send

    def endless(request):
        return RunResult(RunOutcome.TIMEOUT, duration_ms=int(request.limits.time_s * 1000))

    ran = practice_stored(store, catalog, FakeSandbox(endless), settings, created.run_id)
    assert ran.outcome is Practiced.PAUSED
    assert ran.follows == (PracticeMessage(created.run_id, Order.LATER),)
    assert [kept["run"] for kept in row(store, created.run_id).progress] == [""]
