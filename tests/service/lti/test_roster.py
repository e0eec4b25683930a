"""The course roster, read in the background from the demo LMS's NRPS: asked for by a teacher's
launch and by stale teacher pages, never read inside a page request, its failures shown."""

from urllib.parse import urljoin

import pytest
import requests
from celery.exceptions import Retry
from sqlalchemy import select, update

import workers.tasks  # registers the tasks by name
from demo.browser import run_launch
from demo.server import BackgroundServer
from service.lti.roster import MAX_AGE
from service.queue import TaskName
from service.store.models import Course, utcnow
from testkit.lms import make_lms, signed_in_headers
from tests.service.sessions import text_of
from tests.workers.contexts import attach_worker
from workers.tasks import RosterRead

READING = "The roster is being refreshed from the LMS; reload in a moment."


@pytest.fixture
def lms(tmp_path):
    """The tool, which records its sends (testkit.celery), and the demo LMS."""
    found, tool_server = make_lms(tmp_path, fake_celery=True)
    yield found
    found.demo.stop()
    tool_server.stop()
    found.store.dispose()


@pytest.fixture
def sent(lms):
    """What the tool has sent, in order."""
    return lms.celery_app.sent


def reads(sent):
    return [(m.args, m.options) for m in sent if m.name == TaskName.REFRESH_ROSTER]


def course_id(lms):
    with lms.store.session() as session:
        return session.scalar(select(Course.id))


def teacher_page(lms, link):
    """Launch as the course's teacher; return the lesson's teacher page URL."""
    with requests.Session() as browser:
        trace = run_launch(browser, lms.platform.launch("ada", link.id))
    return urljoin(trace.launch.url, trace.launch.headers["Location"])


def started_by(lms, link, *students):
    """Launch as each student and answer a question (each has started the lesson)."""
    for who in students:
        with requests.Session() as browser:
            headers, placement_id = signed_in_headers(browser, lms, who, link)
        answer = requests.post(
            f"{lms.tool_url}/api/placements/{placement_id}/answers",
            json={"question_id": "rnn-advantage", "answer": 1},
            headers=headers,
            timeout=10,
        )
        assert answer.status_code == 201, answer.text


def read_roster(lms):
    """Run the refresh task as a worker would, through Celery's own apply."""
    attach_worker(lms.app)
    task = lms.celery_app.tasks[TaskName.REFRESH_ROSTER]
    return task.apply(args=[course_id(lms)]).get()


def shown(url):
    return text_of(requests.get(url, timeout=10).text, spaced=True)


def test_a_lessons_teacher_page_counts_the_students_who_never_launched(lms, sent):
    link = lms.link()
    started_by(lms, link, "ali", "berna")
    page = teacher_page(lms, link)
    before = shown(page)
    assert "2 of 2 students have started" in before and READING in before
    assert reads(sent) == [([course_id(lms)], {"queue": "sync"})]

    assert read_roster(lms) is RosterRead.READ
    after = shown(page)
    assert "2 of 3 students have started" in after  # Can is on the roster, not launched yet
    assert READING not in after and "roster" not in after
    assert lms.platform.knobs.hits["nrps"] == 1


def test_a_teacher_launch_asks_for_one_read_however_many_come(lms, sent):
    link = lms.link()
    started_by(lms, link, "ali")
    assert reads(sent) == []  # students' launches ask for nothing
    page = teacher_page(lms, link)
    teacher_page(lms, link)
    shown(page)
    assert reads(sent) == [([course_id(lms)], {"queue": "sync"})]
    read_roster(lms)
    teacher_page(lms, link)
    assert len(reads(sent)) == 1  # read now: fresh until MAX_AGE
    with lms.store.session() as session:
        session.execute(update(Course).values(roster_read_at=utcnow() - MAX_AGE))
    teacher_page(lms, link)
    assert len(reads(sent)) == 1  # stale, but asked for a moment ago
    with lms.store.session() as session:
        session.execute(update(Course).values(roster_requested_at=utcnow() - MAX_AGE))
    teacher_page(lms, link)
    assert len(reads(sent)) == 2


def test_the_teachers_pages_never_wait_on_the_lms(lms, sent):
    link = lms.link()
    page = teacher_page(lms, link)
    with lms.store.session() as session:
        session.execute(update(Course).values(roster_requested_at=utcnow() - MAX_AGE))
    gradebook = urljoin(page, f"/teach/courses/{course_id(lms)}?{page.split('?', 1)[1]}")
    text = shown(gradebook)
    assert "Gradebook" in text and READING in text
    assert "What is attention?" in shown(page)
    assert lms.platform.knobs.hits["nrps"] == 0
    assert len(reads(sent)) == 2  # the launch's, and the gradebook's once it was stale again


def test_an_lms_that_fails_the_roster_read_is_retried_then_shown(lms, sent):
    link = lms.link()
    started_by(lms, link, "ali")
    page = teacher_page(lms, link)
    tries = workers.tasks.ROSTER_RETRIES + 1
    lms.platform.fail("nrps", times=tries)  # the first try and every retry
    assert read_roster(lms) is RosterRead.FAILED
    assert lms.platform.knobs.hits["nrps"] == tries
    text = shown(page)
    assert "The roster could not be refreshed (the LMS roster could not be read: HTTP 500" in text
    assert "showing the students known so far" in text and "1 of 1 student has started" in text

    lms.platform.fail("nrps", times=1)  # one failure, then the retry reads it
    assert read_roster(lms) is RosterRead.READ
    text = shown(page)
    assert "could not be refreshed" not in text and "1 of 3 students have started" in text


def retried_as_a_worker_would(lms):
    """Run the roster task as a worker runs it (not eager, so that Celery's retry sends a
    message with a countdown), and expect it to retry."""
    attach_worker(lms.app)
    task = lms.celery_app.tasks[TaskName.REFRESH_ROSTER]
    task.push_request(id="read-1", args=[course_id(lms)], kwargs={}, retries=0,
                      called_directly=False, delivery_info={"routing_key": "sync"})  # fmt: skip
    try:
        with pytest.raises(Retry):
            task(course_id(lms))
    finally:
        task.pop_request()


def test_a_failed_read_is_retried_through_celery_with_a_backoff(lms, sent):
    teacher_page(lms, lms.link())
    sent.clear()
    lms.platform.fail("nrps", times=1)
    retried_as_a_worker_would(lms)
    [message] = sent  # Celery's retry, through send_task(name, args, kwargs, ...)
    assert (message.name, message.args, message.kwargs) == (
        TaskName.REFRESH_ROSTER,
        [course_id(lms)],
        {},
    )
    assert message.options["retries"] == 1 and 4 <= message.options["countdown"] <= 6


def test_a_read_that_meets_a_database_outage_is_retried(lms, sent, monkeypatch):
    from sqlalchemy.exc import OperationalError

    def database_away(lti, course):
        raise OperationalError("SELECT 1", {}, Exception("connection refused"))

    teacher_page(lms, lms.link())
    sent.clear()
    monkeypatch.setattr(workers.tasks, "sync_roster", database_away)
    retried_as_a_worker_would(lms)
    [message] = sent
    assert (message.name, message.args) == (TaskName.REFRESH_ROSTER, [course_id(lms)])
    assert message.options["retries"] == 1


def test_a_roster_nested_too_deeply_is_a_clear_failure(tmp_path):
    """pylti1p3 reads the roster with response.json(): the client's one reader, in a worker."""

    def nested(environ, start_response):
        start_response("200 OK", [("Content-Type", "application/json")])
        return [b"[" * 100_000]

    deep = BackgroundServer(nested).start()
    lms, tool_server = make_lms(tmp_path, allow=deep.url.removeprefix("http://"), fake_celery=True)
    try:
        page = teacher_page(lms, lms.link())
        with lms.store.session() as session:
            session.execute(update(Course).values(memberships_url=deep.url + "/members"))
        assert read_roster(lms) is RosterRead.FAILED
        assert "the LMS roster could not be read: the answer is JSON nested too deeply" in shown(
            page
        )
    finally:
        deep.stop()
        lms.demo.stop()
        tool_server.stop()
        lms.store.dispose()
