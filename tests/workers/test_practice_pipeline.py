"""Practice runs on real processes, on the demo LMS's path: a student launched from the demo
LMS runs code through the JSON API, a real Celery worker runs it on the warm pool, and the
run's result comes back; the LMS gets nothing, and a submission afterwards is the student's
first attempt. Then fair share with real workers: one student's endless runs and endless
submissions do not hold another student's run or submission (issue 30: "goes through the
fair share like any work"; pattern: tests/workers/test_fair_share.py)."""

from __future__ import annotations

import time

import pytest
import requests
from sqlalchemy import select

from service.store.models import GradeSync, PracticeRun, Submission
from testkit.lms import lms_with_a_worker, signed_in_headers
from testkit.pipeline import SOLUTION, Pipeline
from testkit.servers import REPO
from testkit.slowness import scaled
from testkit.waits import wait_for
from tests.workers.test_fair_share import ENDLESS, running, write_lessons

pytestmark = [pytest.mark.celery, pytest.mark.slow]

POSITIONAL = "expert/positional-encoding"
POSITIONAL_SOLUTION = (REPO / "lessons" / POSITIONAL / "solution" / "model.py").read_text()
EXPECTED = (REPO / "lessons" / POSITIONAL / "expected_output.txt").read_text()


def followed(session, url, headers, timeout):
    """Poll a practice run as the page does until it is done; return its JSON."""
    deadline = time.monotonic() + timeout
    while True:
        body = session.get(url, headers=headers, timeout=30).json()
        if body["status"] == "done":
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.05)


def test_a_run_through_a_real_worker_reaches_no_lms(tmp_path, redis_server):
    changes = {"sandbox": "warm"}
    with (
        lms_with_a_worker(tmp_path, redis_server, "grade,sync", **changes) as lms,
        requests.Session() as student,
    ):
        link = lms.link(lesson=POSITIONAL, title="A table of waves")
        headers, placement_id = signed_in_headers(student, lms, "ali", link)
        api = f"{lms.tool_url}/api/placements/{placement_id}"
        body = {"source": POSITIONAL_SOLUTION, "stdin": "3 4\n"}
        started = student.post(f"{api}/runs", json=body, headers=headers, timeout=30)
        assert started.status_code == 202, started.text
        done = followed(student, lms.tool_url + started.json()["url"], headers, scaled(30))
        result = done["result"]
        assert result["stdout"] == result["input"]["stdout"] == EXPECTED
        assert result["status"] == "passed" and result["figures"] == []
        assert [case["status"] for case in result["cases"]] == ["passed"] * 4
        # nothing reached the LMS, nothing was counted: the next submission is the first
        time.sleep(1)  # a sync sent by mistake would have posted by now
        assert lms.platform.scores() == []
        with lms.store.session() as session:
            assert session.scalar(select(GradeSync)) is None
            assert session.scalar(select(Submission)) is None
        submitted = student.post(
            f"{api}/submissions", json={"source": POSITIONAL_SOLUTION}, headers=headers, timeout=30
        )
        assert submitted.status_code == 202
        wait_for(lambda: len(lms.platform.scores()) == 1, "the submission's score", 60)
        assert lms.worker.errors() == []


@pytest.fixture
def pipeline(tmp_path, redis_server, database_url):
    """The six-case lesson at a two-second limit (stretched), the warm pool, and a worker of
    one pool process (the demo's one worker): the fair share's test bed."""
    lessons = write_lessons(tmp_path / "lessons", time_s=2.0)
    made = Pipeline(
        tmp_path, redis_server, database_url, sandbox="warm", lessons_dir=lessons, lease_s=30,
        run_rate=1_000_000,
    )  # fmt: skip
    made.start_worker(concurrency=1)
    yield made
    made.stop()


def start_run(pipeline, source):
    url = f"/api/placements/{pipeline.placed.placement_id}/runs"
    response = pipeline.client.post(url, json={"source": source})
    assert response.status_code == 202, response.get_json()
    return int(response.get_json()["id"])


def run_rows(pipeline, ids):
    with pipeline.store.session() as session:
        rows = session.execute(
            select(PracticeRun.id, PracticeRun.status, PracticeRun.progress).where(
                PracticeRun.id.in_(ids)
            )
        )
        return {row.id: row for row in rows}


def test_endless_runs_and_submissions_of_one_student_do_not_hold_anothers(pipeline):
    # one student keeps the only worker busy: endless submissions, and an endless run queued
    pipeline.student()
    endless = [pipeline.submit(ENDLESS) for _ in range(3)]
    running(pipeline, endless[0], time.monotonic() + scaled(30), *endless[1:])
    hog_run = start_run(pipeline, ENDLESS)
    # another student's run is answered before the endless grading ends: it yields to a
    # waiting run as to a waiting submission (before this work a run counted for nothing)
    pipeline.student()
    asked = time.monotonic()
    theirs = start_run(pipeline, SOLUTION)
    assert wait_for_runs(pipeline, [theirs], scaled(60)), run_rows(pipeline, [theirs])
    run_wait = time.monotonic() - asked
    assert pipeline.statuses(endless[:1])[endless[0]] != "graded", "the run waited for it"
    # and a third student's submission goes before both the endless grading and the endless
    # run, which has had a turn and yielded (its first try cut short, to run whole later)
    pipeline.student()
    asked = time.monotonic()
    right = pipeline.submit(SOLUTION)
    assert pipeline.wait_until([right], "graded", scaled(60)), pipeline.explain([right])
    submit_wait = time.monotonic() - asked
    assert pipeline.statuses(endless[:1])[endless[0]] != "graded", "it waited for a grading"
    hog = run_rows(pipeline, [hog_run])[hog_run]
    assert hog.status != "done" and hog.progress, "the endless run held the worker, or never ran"
    # everything ends, once: the endless run and submissions too, each in its turn
    assert wait_for_runs(pipeline, [hog_run], scaled(240)), run_rows(pipeline, [hog_run])
    every = [*endless, right]
    assert pipeline.wait_until(every, "graded", scaled(240)), pipeline.explain(every)
    counts = pipeline.counts(every)
    assert (counts.graded, counts.lost, counts.duplicated) == (4, 0, 0)
    with pipeline.store.session() as session:
        kept = session.get(PracticeRun, hog_run)
        # its four visible cases, each run whole at the lesson's limit: none is the cut one
        assert kept.run_status == "timeout" and len(kept.cases) == 4
        assert {case["status"] for case in kept.cases} == {"timeout"}
    print(f"another student's run came {run_wait:.1f} s, a submission {submit_wait:.1f} s after")


def wait_for_runs(pipeline, ids, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if {row.status for row in run_rows(pipeline, ids).values()} == {"done"}:
            return True
        time.sleep(0.1)
    return False


def test_a_run_whose_worker_was_killed_is_done_once_by_another(
    tmp_path, redis_server, database_url
):
    pipeline = Pipeline(tmp_path, redis_server, database_url, sandbox="warm")
    try:
        first = pipeline.start_worker(concurrency=1)
        pipeline.student()
        run_id = start_run(pipeline, "import time\ntime.sleep(2.5)\n" + SOLUTION)
        deadline = time.monotonic() + scaled(30)
        while run_rows(pipeline, [run_id])[run_id].status != "running":
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.05)
        time.sleep(0.5)
        first.kill()  # SIGKILL to the worker, its pool and its sandboxes, mid-run
        pipeline.start_worker(concurrency=1)
        assert wait_for_runs(pipeline, [run_id], scaled(60)), run_rows(pipeline, [run_id])
        with pipeline.store.session() as session:
            kept = session.get(PracticeRun, run_id)
            # the sweep sent it again once its lease ran out; its new worker ran it whole
            assert (kept.run_status, kept.claims, kept.replaced) == ("passed", 2, False)
            assert kept.grader_error is None and len(kept.cases) == 4
    finally:
        pipeline.stop()
