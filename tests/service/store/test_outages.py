"""A platform that is away: its outage row, its probe, and the syncs it releases."""

from datetime import timedelta

from service.queue import SyncMessage
from service.store import grades, outages
from service.store.models import GradeSync, SyncStatus, utcnow
from testkit.factories import add_student, place

LATE = timedelta(seconds=10)


def waiting(store, placed, now):
    with store.session() as session:
        grades.needs_sync(session, placed.placement_id, placed.user_id, now)


def test_an_outage_spaces_its_probes_and_one_sync_takes_each(store):
    placed, now = place(store), utcnow()
    pair = SyncMessage(placed.user_id, placed.placement_id)
    with store.session() as session:
        first = outages.down(session, placed.platform_id, pair, now, "HTTP 502 Bad Gateway")
        second = outages.down(session, placed.platform_id, pair, now, "HTTP 502 Bad Gateway")
        assert (first - now, second - now) == (timedelta(seconds=2), timedelta(seconds=4))
        found = outages.outage(session, placed.platform_id)
        assert (found.probes, found.user_id, found.since) == (2, placed.user_id, now)
        # not due yet; then due, and of two syncs at once, one probes
        assert not outages.take_probe(session, placed.platform_id, pair, now, now + LATE)
        assert outages.take_probe(session, placed.platform_id, pair, second, second + LATE)
        assert not outages.take_probe(session, placed.platform_id, pair, second, second + LATE)


def test_its_end_releases_the_waiting_syncs_of_that_platform_only(store):
    now = utcnow()
    away, other = place(store), place(store)
    classmate = add_student(store, away, "student-2")
    for placed in (away, other):
        waiting(store, placed, now - timedelta(minutes=5))
    with store.session() as session:
        grades.needs_sync(session, away.placement_id, classmate, now - timedelta(minutes=5))
        pair = SyncMessage(away.user_id, away.placement_id)
        outages.down(session, away.platform_id, pair, now, "the connection failed")
    with store.session() as session:
        released = outages.end(session, away.platform_id, now)
        assert released == [pair, SyncMessage(classmate, away.placement_id)]
        assert outages.end(session, away.platform_id, now) == []  # one release per outage
        due = {row.user_id: row.next_attempt_at for row in session.query(GradeSync)}
    assert due[away.user_id] == due[classmate] == now
    assert due[other.user_id] == now - timedelta(minutes=5)


def test_a_lost_probe_goes_to_a_waiting_pair_and_an_outage_nobody_waits_for_ends(store):
    now = utcnow()
    placed = place(store)
    classmate = add_student(store, placed, "student-2")
    with store.session() as session:
        grades.needs_sync(session, placed.placement_id, classmate, now)
        # the probe's own pair has nothing left to post: its worker died after it settled
        gone = SyncMessage(placed.user_id, placed.placement_id)
        outages.down(session, placed.platform_id, gone, now, "timed out")
    with store.session() as session:
        assert outages.lost_probes(session, now + timedelta(seconds=5), LATE) == []  # on time
        later = now + timedelta(seconds=30)
        assert outages.lost_probes(session, later, LATE) == [
            SyncMessage(classmate, placed.placement_id)
        ]
        assert outages.lost_probes(session, later, LATE) == []  # taken once
        assert outages.outage(session, placed.platform_id).probe_at == later
        session.query(GradeSync).update({"status": SyncStatus.SENT})
        assert outages.lost_probes(session, later + timedelta(minutes=1), LATE) == []
        assert outages.outage(session, placed.platform_id) is None
