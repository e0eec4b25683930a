"""Fair share on a real worker (issue 27, point 1): one student's endless loops do not hold
another student's verdict, and every submission is still graded, once, in its turn.

A real Celery worker with one pool process grades on the warm sandbox, as the demo's one
worker does. One student hands in ten `while True: pass` to the six-case lesson (a copy of
expert/scaled-dot-product whose time limit is 1 s, stretched to this host's slowness, so that
the test takes a minute, not five); another student then hands in a right answer. Before this
work the right answer waited for all ten (ten times six time limits).
"""

from __future__ import annotations

import shutil
import time

import pytest
from sqlalchemy import select

from core.runs import Limits
from service.store.models import Submission
from testkit.factories import SCALED
from testkit.pipeline import SOLUTION, Pipeline
from testkit.servers import REPO
from testkit.slowness import scaled, stretch

ENDLESS = "while True:\n    pass\n"


def write_lessons(root, time_s=1.0):
    """Copy the six-case lesson, with a short time limit."""
    lesson = root / SCALED
    shutil.copytree(REPO / "lessons" / SCALED, lesson)
    (root / "expert" / "track.yaml").write_text("title: Expert\nlessons:\n  - scaled-dot-product\n")
    exercise = lesson / "exercise.yaml"
    limit = stretch(Limits(time_s=time_s)).time_s
    exercise.write_text(exercise.read_text() + f"limits:\n  time_s: {limit}\n")
    return root


@pytest.fixture
def warm_pipeline(tmp_path, redis_server, database_url):
    """Make the test's pipeline: the warm pool, the six-case lesson at `time_s`, and a
    worker of one pool process; stopped after the test."""
    made = []

    def make(lease_s, time_s=1.0):
        lessons = write_lessons(tmp_path / "lessons", time_s=time_s)
        made.append(
            Pipeline(
                tmp_path, redis_server, database_url, sandbox="warm", lessons_dir=lessons,
                lease_s=lease_s,
            )
        )  # fmt: skip
        made[-1].start_worker(concurrency=1)
        return made[-1]

    yield make
    for pipeline in made:
        pipeline.stop()


def running(pipeline, submission_id, deadline, *others):
    """Wait until the submission is being graded (others: shown if it never is)."""
    while pipeline.statuses([submission_id])[submission_id] != "running":
        assert time.monotonic() < deadline, pipeline.explain([*others, submission_id])
        time.sleep(0.05)


def graded_rows(pipeline, ids):
    with pipeline.store.session() as session:
        rows = session.execute(
            select(Submission.id, Submission.graded_at, Submission.gradings, Submission.run_status)
            .where(Submission.id.in_(ids))
            .order_by(Submission.id)
        ).all()
    return [row for row in rows if row.graded_at is not None]


def test_ten_endless_loops_of_one_student_do_not_hold_anothers_verdict(warm_pipeline):
    pipeline = warm_pipeline(lease_s=30)
    pipeline.student()
    endless = [pipeline.submit(ENDLESS) for _ in range(10)]
    running(pipeline, endless[0], time.monotonic() + scaled(30), *endless[1:])
    pipeline.student()
    started = time.monotonic()
    right = pipeline.submit(SOLUTION)
    assert pipeline.wait_until([right], "graded", scaled(10)), pipeline.explain([right])
    waited = time.monotonic() - started
    ahead = graded_rows(pipeline, endless)
    assert len(ahead) <= 1, f"the right answer waited for {len(ahead)} endless loops"
    every = [*endless, right]
    assert pipeline.wait_until(every, "graded", scaled(240)), pipeline.explain(every)
    rows = graded_rows(pipeline, endless)
    assert [row.id for row in rows] == endless and all(row.gradings == 1 for row in rows)
    assert {row.run_status for row in rows} == {"timeout"}
    # in their turn: the student's submissions were graded in the order handed in
    assert [row.graded_at for row in rows] == sorted(row.graded_at for row in rows)
    counts = pipeline.counts(every)
    assert (counts.graded, counts.lost, counts.duplicated) == (11, 0, 0)
    print(f"the right answer's verdict came {waited:.1f} s after it was handed in")


def test_a_fresh_submission_goes_before_a_grading_whose_turn_is_over(warm_pipeline):
    # two students with an endless loop each take turns of a few cases; a right answer handed in
    # while one of them waits for its next turn is graded before that turn, not behind it
    pipeline = warm_pipeline(lease_s=30)
    pipeline.student()
    first = pipeline.submit(ENDLESS)
    deadline = time.monotonic() + scaled(30)
    running(pipeline, first, deadline)
    pipeline.student()
    second = pipeline.submit(ENDLESS)  # waits: the first pauses after its first case
    running(pipeline, second, deadline, first)
    paused_with = len(progress_rows(pipeline, first))  # its turn is over: it waits for the next
    assert 0 < paused_with < 6
    pipeline.student()
    right = pipeline.submit(SOLUTION)
    assert pipeline.wait_until([right], "graded", scaled(20)), pipeline.explain([right])
    # before this work the first one's next turn ran before the right answer (the row's
    # progress grows only when a turn ends: a turn that began just now has not)
    assert len(progress_rows(pipeline, first)) == paused_with, "the right answer waited for a turn"
    every = [first, second, right]
    assert pipeline.wait_until(every, "graded", scaled(120)), pipeline.explain(every)
    counts = pipeline.counts(every)
    assert (counts.graded, counts.lost, counts.duplicated) == (3, 0, 0)


def progress_rows(pipeline, submission_id):
    with pipeline.store.session() as session:
        found = session.scalar(select(Submission.progress).where(Submission.id == submission_id))
    return found or []


def test_an_endless_loop_at_the_head_of_a_rush_holds_the_sandbox_a_moment_not_its_limit(
    warm_pipeline,
):
    # the lesson's limit is 4 s: the first endless loop runs alone, so its first cases run
    # whole; the second begins its turn with others waiting, so its first try is cut to a
    # second (FIRST_TRY_S), and the right answer behind it goes before its whole run
    pipeline = warm_pipeline(lease_s=60, time_s=4.0)
    pipeline.student()
    first = pipeline.submit(ENDLESS)
    running(pipeline, first, time.monotonic() + scaled(30))
    pipeline.student()
    second = pipeline.submit(ENDLESS)
    pipeline.student()
    right = pipeline.submit(SOLUTION)
    assert pipeline.wait_until([right], "graded", scaled(30)), pipeline.explain([right])
    kept = progress_rows(pipeline, second)
    # before this work the second loop's first cases ran whole before the right answer
    assert kept and all(entry.get("tried") for entry in kept), kept
    every = [first, second, right]
    assert pipeline.wait_until(every, "graded", scaled(240)), pipeline.explain(every)
    with pipeline.store.session() as session:
        rows = session.execute(
            select(Submission.id, Submission.run_status, Submission.cases).where(
                Submission.id.in_([first, second])
            )
        ).all()
    for row in rows:  # each verdict is of whole runs: six timeouts at the lesson's limit
        assert row.run_status == "timeout" and len(row.cases) == 6
    counts = pipeline.counts(every)
    assert (counts.graded, counts.lost, counts.duplicated) == (3, 0, 0)
