"""Celery's own retries, through a real worker: a grading that meets a database outage and a
grade sync that meets an LMS 503 each fail once and succeed on their retry.

Celery retries a task by sending it again through `app.send_task(name, args, kwargs, ...)`:
an override of send_task with another signature (ours had one) makes every retry raise
TypeError, and the message is rejected. The sweep is switched off here, so only the retry
can finish the work.
"""

import time

import pytest
import requests
from sqlalchemy import select

from service.queue import GradeMessage, send_grade
from service.store.models import Submission, User
from service.web import extensions
from testkit.factories import submission
from testkit.lms import answer, landed, lms_with_a_worker, signed_in_headers
from testkit.pipeline import SOLUTION, Pipeline
from testkit.servers import PostgresCluster
from testkit.slowness import scaled
from testkit.waits import wait_for

pytestmark = [pytest.mark.celery, pytest.mark.slow]

NO_SWEEP = {"sweep_interval_s": 3600, "queued_deadline_s": 3600, "lease_s": 60}


def retried(log, task):
    """Return whether the worker's log says Celery scheduled a retry of `task`."""
    return any(
        f"Task {task}[" in line and "retry: Retry in" in line
        for line in log.read_text().splitlines()
    )


def refusals(log):
    """Return the log's lines that say a retry went wrong (the old send_task fault)."""
    return [
        line
        for line in log.read_text().splitlines()
        if "TypeError" in line or "Reject" in line or "send_task()" in line
    ]


@pytest.mark.postgres
def test_a_grading_that_meets_a_database_outage_succeeds_on_its_retry(tmp_path, redis_server):
    cluster = PostgresCluster()
    cluster.init()
    cluster.start()
    pipeline = Pipeline(tmp_path, redis_server, cluster.new_database(), **NO_SWEEP)
    try:
        worker = pipeline.start_worker(concurrency=1, queues="grade")
        placed = pipeline.placed
        # the row first; its message goes out once the database is away, as a submission
        # taken just before an outage would be
        submission_id = submission(
            pipeline.store, placed.placement_id, placed.user_id, SOLUTION, late=False
        )
        pipeline.store.dispose()
        cluster.stop()
        assert send_grade(extensions.celery_app(pipeline.app), GradeMessage(submission_id))
        wait_for(lambda: retried(worker.log, "codeblanks.grade_submission"), "a retry", 60)
        down_for = time.monotonic()
        cluster.start()
        wait_for(
            lambda: pipeline.statuses([submission_id])[submission_id] == "graded",
            "the grading on its retry",
            90,
        )
        back_in = time.monotonic() - down_for
        with pipeline.store.session() as session:
            row = session.get(Submission, submission_id)
            assert (row.run_status, row.gradings, row.claims) == ("passed", 1, 1)
        assert refusals(worker.log) == []
        print(f"graded {back_in:.1f} s after the database came back")
    finally:
        pipeline.stop()
        cluster.remove()


def test_a_sync_that_meets_an_lms_503_succeeds_on_its_retry(tmp_path, redis_server):
    with (
        lms_with_a_worker(tmp_path, redis_server, "grade,sync", pool=1, **NO_SWEEP) as lms,
        requests.Session() as browser,
    ):
        worker = lms.worker
        headers, placement_id = signed_in_headers(browser, lms, "ali", lms.link())
        lms.platform.fail("ags", times=1, status=503)
        answered = answer(browser, lms, headers, placement_id, timeout=10)
        assert answered.status_code == 201, answered.text
        wait_for(lambda: retried(worker.log, "codeblanks.sync_grade"), "a retry", 60)
        wait_for(lambda: lms.platform.scores(user="ali"), "the score in the LMS", 60)
        [score] = lms.platform.scores(user="ali")
        assert score.body["scoreGiven"] == 1.0
        assert score.body["gradingProgress"] == "FullyGraded"
        assert lms.platform.knobs.hits["ags"] >= 2  # the refused post, then the retried one
        with lms.store.session() as session:
            assert session.scalar(select(User.sub)) == lms.platform.user_sub("ali")
        assert refusals(worker.log) == []


OUTAGE_S = 30.0
STAGGER_S = 2.0  # one answer every two seconds, from the outage's start


def test_grades_waiting_for_an_lms_that_was_down_land_within_10_s_of_its_return(
    tmp_path, redis_server
):
    """Issue 27.4: a Moodle whose PHP was stopped 30 s got its grade 35 s after it was back.

    Six grades (three students on two links) come in while the LMS answers 502 to every
    request, as Moodle's web server does with its PHP stopped; once it answers again, every
    one lands within 10 s, once, and the LMS saw a few requests while it was down, not a
    post per grade per backoff step.
    """
    with (
        lms_with_a_worker(tmp_path, redis_server, "grade,sync") as lms,
        requests.Session() as browser,
    ):
        worker = lms.worker
        links = [lms.link(title=f"Lesson {n}") for n in (1, 2)]
        pairs = [
            (who, link, *signed_in_headers(browser, lms, who, link))
            for link in links
            for who in ("ali", "berna", "can")
        ]
        lms.platform.down_for(OUTAGE_S)
        down_at, hits_before = time.monotonic(), sum(lms.platform.knobs.hits.values())
        for n, (_, _, headers, placement_id) in enumerate(pairs):
            time.sleep(max(0.0, down_at + n * STAGGER_S - time.monotonic()))
            answered = answer(browser, lms, headers, placement_id, timeout=10)
            assert answered.status_code == 201, answered.text
        time.sleep(max(0.0, down_at + OUTAGE_S - time.monotonic()))
        back_at = time.time()
        while_down = sum(lms.platform.knobs.hits.values()) - hits_before

        wanted = {
            (lms.platform.user_sub(who), lms.platform.lineitems_of(link)[0].id)
            for who, link, _, _ in pairs
        }
        wait_for(lambda: set(landed(lms.platform)) >= wanted, "every grade in the LMS", scaled(60))
        after = sorted(landed(lms.platform)[pair].received_at - back_at for pair in wanted)
        print(f"landed {after[0]:.1f} to {after[-1]:.1f} s after the LMS was back; "
              f"{while_down} requests while it was down")  # fmt: skip
        assert after[-1] <= scaled(10), f"the last grade landed {after[-1]:.1f} s after"
        applied = [(s.user_id, s.lineitem_id) for s in lms.platform.scores() if s.applied]
        assert sorted(applied) == sorted(wanted)  # each grade once
        # a probe every few seconds (2, then 4 s apart) and the posts in flight as it
        # began: not one post per grade per backoff step (18 before this, for six grades)
        assert while_down <= 12, f"{while_down} requests while the LMS was down"
        assert refusals(worker.log) == []
