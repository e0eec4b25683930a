import threading
from datetime import timedelta

import pytest
from sqlalchemy import update

from service.store import roster_reads
from service.store.models import Course, Placement, utcnow
from testkit.factories import place

MAX_AGE, EVERY = timedelta(minutes=5), timedelta(minutes=2)
NOW = utcnow()
URL = "https://lms.example/members"


def course(store, **values):
    placed = place(store)
    with store.session() as session:
        course_id = session.get(Placement, placed.placement_id).course_id
        if values:
            session.execute(update(Course).where(Course.id == course_id).values(**values))
    return course_id


@pytest.mark.parametrize(
    ("values", "asks"),
    [
        ({}, False),  # the LMS offers no roster
        ({"memberships_url": URL}, True),  # never read
        ({"memberships_url": URL, "roster_read_at": NOW - timedelta(minutes=1)}, False),
        ({"memberships_url": URL, "roster_read_at": NOW - MAX_AGE}, True),
        ({"memberships_url": URL, "roster_requested_at": NOW - timedelta(seconds=30)}, False),
        ({"memberships_url": URL, "roster_requested_at": NOW - EVERY}, True),
        (
            {
                "memberships_url": URL,
                "roster_read_at": NOW - timedelta(hours=1),
                "roster_requested_at": NOW - timedelta(hours=1),
                "roster_error": "HTTP 503",
            },
            True,
        ),  # a failed read is asked for again, once the last ask is old enough
    ],
)
def test_a_read_is_asked_for_when_offered_stale_and_not_asked_lately(store, values, asks):
    course_id = course(store, **values)
    assert roster_reads.ask(store, course_id, NOW, MAX_AGE, EVERY) is asks
    assert roster_reads.ask(store, course_id, NOW, MAX_AGE, EVERY) is False  # never twice
    with store.reading() as session:
        found = roster_reads.state(session, course_id)
    assert found.pending is (asks or "roster_requested_at" in values)


def test_many_asking_at_once_make_one_read(store):
    course_id = course(store, memberships_url=URL)
    answers = []

    def ask():
        answers.append(roster_reads.ask(store, course_id, NOW, MAX_AGE, EVERY))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) == [False] * 7 + [True]


def test_a_failure_stands_until_a_read_succeeds(store):
    course_id = course(store, memberships_url=URL)
    roster_reads.ask(store, course_id, NOW, MAX_AGE, EVERY)
    roster_reads.failed(store, course_id, "the LMS roster could not be read: " + "x" * 900)
    with store.reading() as session:
        failed = roster_reads.state(session, course_id)
    assert failed.error.startswith("the LMS roster") and len(failed.error) == 500
    assert failed.pending and failed.stale(NOW, MAX_AGE)
    with store.session() as session:
        roster_reads.read(session, course_id, NOW + timedelta(seconds=1))
    with store.reading() as session:
        read = roster_reads.state(session, course_id)
    assert read.error is None and not read.pending and not read.stale(NOW, MAX_AGE)
    with store.reading() as session:
        assert roster_reads.state(session, course_id + 1) is None
