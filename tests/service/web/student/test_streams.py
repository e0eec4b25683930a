"""Live status streams: capped per user and per process, short, and never a thread hog."""

import threading
import time

import pytest

from service.web import extensions
from service.web.student.streams import BUSY_RETRY_MS, Streams, follow
from testkit.factories import add_student, place, submission
from testkit.sessions import sign_in
from testkit.webserver import Stream, WebServer, seed

QUEUED = {"id": 1, "status": "queued", "verdict": None}
GRADED = {"id": 1, "status": "graded", "verdict": {"status": "passed"}}
# a generous bound for an answer that should take milliseconds: the code before the caps
# kept /healthz waiting for minutes (until some stream's 120 s ended)
PROMPT_S = 15


# ---- the caps -------------------------------------------------------------------------------


def test_caps_count_per_user_and_per_process():
    streams = Streams(per_user=2, per_process=3)
    first, second = streams.take(1), streams.take(1)
    assert first and second and streams.take(1) is None  # the user's cap
    third = streams.take(2)
    assert third and streams.take(3) is None  # the process's cap, whoever asks
    assert (streams.open(), streams.open(1), streams.open(2)) == (3, 2, 1)
    first.release()
    first.release()  # a second release gives nothing back twice
    assert (streams.open(), streams.open(1)) == (2, 1)
    assert streams.take(3) is not None
    for slot in (second, third):
        slot.release()
    assert streams.open(1) == streams.open(2) == 0


def test_caps_hold_under_threads():
    streams = Streams(per_user=5, per_process=8)
    taken = []

    def grab(user):
        for _ in range(50):
            slot = streams.take(user)
            if slot:
                taken.append(slot)

    workers = [threading.Thread(target=grab, args=(n % 3,)) for n in range(12)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(taken) == streams.open() == 8
    assert max(streams.open(user) for user in range(3)) <= 5


def events(body):
    return [chunk.split("\n")[0] for chunk in "".join(body).split("\n\n") if "event:" in chunk]


def test_a_stream_gives_its_slot_back_however_it_ends():
    streams = Streams(per_user=1, per_process=4)
    states = iter([QUEUED, GRADED])
    ended = list(follow(streams, 7, QUEUED, lambda: next(states), hold_s=5, poll_s=0.01))
    assert events(ended) == ["event: status", "event: status", "event: end"]
    assert streams.open() == 0
    timed_out = list(follow(streams, 7, QUEUED, lambda: QUEUED, hold_s=0.05, poll_s=0.01))
    assert events(timed_out) == ["event: status", "event: timeout"]
    assert streams.open() == 0

    dropped = follow(streams, 7, QUEUED, lambda: QUEUED, hold_s=60, poll_s=0.01)
    next(dropped)  # the server has sent the first status; then the client goes away
    assert streams.open(7) == 1
    dropped.close()  # what gunicorn and Werkzeug do when a write fails
    assert streams.open() == 0

    follow(streams, 7, QUEUED, lambda: QUEUED, hold_s=60)  # a body never started
    assert streams.open() == 0


def test_over_the_cap_the_answer_is_one_status_and_busy_at_once():
    streams = Streams(per_user=1, per_process=4)
    held = follow(streams, 7, QUEUED, lambda: QUEUED, hold_s=60, poll_s=0.01)
    next(held)
    busy = list(follow(streams, 7, QUEUED, lambda: QUEUED, hold_s=60))
    assert events(busy) == ["event: status", "event: busy"]
    assert busy[0].startswith(f"retry: {BUSY_RETRY_MS}\n")
    assert streams.open() == 1
    # a graded submission needs no stream: one answer, under no cap
    assert events(follow(streams, 7, GRADED, lambda: GRADED, 60)) == ["event: status", "event: end"]
    held.close()


# ---- through the app --------------------------------------------------------------------------


def test_the_app_counts_a_stream_until_its_response_is_closed(app, client):
    store = extensions.store(app)
    placed = place(store)
    other = add_student(store, placed, "student-2")
    mine = submission(store, placed.placement_id, placed.user_id, "print(1)\n", False)
    sign_in(client, placed.user_id, [placed.placement_id])
    url = f"/api/submissions/{mine}/events"
    responses = [client.get(url, buffered=False) for _ in range(3)]
    firsts = [next(iter(response.response)).decode() for response in responses]
    assert ["event: busy" in first for first in firsts] == [False, False, True]
    streams = extensions.streams(app)
    assert (streams.open(placed.user_id), streams.open(other)) == (2, 0)
    for response in responses:
        response.close()
    assert streams.open() == 0
    assert client.get(url, buffered=False).status_code == 200


# ---- the attack, on a real gunicorn ------------------------------------------------------------


@pytest.fixture
def served(tmp_path):
    """`codeblanks serve` with its defaults, and 41 students with a queued submission each."""
    env, students = seed(tmp_path, 41)
    server = WebServer(env, tmp_path / "web.log")
    try:
        yield server.start(), students
    finally:
        server.stop()


@pytest.mark.slow
def test_a_hundred_streams_leave_health_and_pages_answering(served):
    server, (greedy, *others) = served
    opened = [Stream(server.port, greedy.events, greedy.token, PROMPT_S) for _ in range(20)]
    for student in others:  # 80 more, two per student
        opened += [Stream(server.port, student.events, student.token, PROMPT_S) for _ in range(2)]
    try:
        health = server.get("/healthz", PROMPT_S)
        assert health.status == 200
        firsts = [stream.until("status", PROMPT_S) for stream in opened]
        assert {answer.status for answer in firsts} == {200}  # a 429 or a 5xx is no answer here
        for _ in range(5):  # while the streams that were let in are open
            assert server.get("/healthz", PROMPT_S).status == 200
        page = server.get(f"/api/submissions/{greedy.submission_id}", PROMPT_S, greedy.token)
        assert page.status == 200
        answers = [stream.read(PROMPT_S) for stream in opened]
    finally:
        for stream in opened:
            stream.close()
    assert all(answer.ended for answer in answers)  # every stream ends by itself, soon
    live = [answer.names()[-1] == "timeout" for answer in answers]
    busy = [answer.names() == ["status", "busy"] for answer in answers]
    assert all(a or b for a, b in zip(live, busy, strict=True)), answers
    # 2 processes: the greedy student holds at most 2 streams in each, everyone at most 8 in each
    assert sum(live[:20]) <= 2 * 2
    assert 1 <= sum(live) <= 2 * 8


@pytest.mark.slow
def test_a_slot_comes_back_when_its_client_goes_away(tmp_path):
    env, [student] = seed(tmp_path, 1)
    env["CODEBLANKS_STREAM_MAX_S"] = "2"
    server = WebServer(env, tmp_path / "web.log", "--workers", "1").start()
    try:
        held = [Stream(server.port, student.events, student.token, PROMPT_S) for _ in range(2)]
        for stream in held:
            assert stream.until("status", PROMPT_S).names() == ["status"]
        refused = server.get(student.events, PROMPT_S, student.token)
        assert refused.names() == ["status", "busy"]
        for stream in held:
            stream.close()  # the page went away mid-stream
        deadline = time.monotonic() + PROMPT_S
        while server.get(student.events, PROMPT_S, student.token).names()[-1] == "busy":
            assert time.monotonic() < deadline, "the slots of closed streams never came back"
            time.sleep(0.2)
    finally:
        server.stop()
