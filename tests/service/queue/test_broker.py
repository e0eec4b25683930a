import base64
import json
import subprocess
import sys
from dataclasses import replace

import pytest
import redis

from service.queue import GradeMessage, Order, Queue, TaskName, send_grade
from service.queue.broker import list_keys
from service.web import create_app, extensions


def test_the_service_never_imports_task_bodies(tmp_path):
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from service.web import create_app\n"
        "from service.settings import Settings\n"
        f"create_app({{'SETTINGS': Settings(instance_dir=Path({str(tmp_path)!r}))}})\n"
        "print(sorted(m for m in sys.modules if m.startswith('workers')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_enqueue_says_false_when_the_broker_is_unreachable(app):
    assert send_grade(extensions.celery_app(app), GradeMessage(1)) is False


@pytest.fixture
def queues(settings, redis_server):
    """A Celery app on a real redis-server, and a client to read its lists."""
    app = create_app({"TESTING": True, "SETTINGS": replace(settings, redis_url=redis_server.url)})
    yield extensions.celery_app(app), redis.Redis.from_url(redis_server.url)
    extensions.store(app).dispose()


def _pushed(reader: redis.Redis, queue: str) -> list[dict]:
    return [json.loads(raw) for raw in reversed(reader.lrange(queue, 0, -1))]


def _shape(message: dict) -> dict:
    """Return what must match between two messages: every key, and the values that are not
    per message (ids, tags, the sender's name)."""
    per_message = {"id", "root_id", "correlation_id", "delivery_tag", "origin"}

    def strip(value):
        if isinstance(value, dict):
            return {k: ("*" if k in per_message else strip(v)) for k, v in value.items()}
        return value

    return strip(message)


@pytest.mark.parametrize(
    "name, args, options, queue",
    [
        (TaskName.GRADE_SUBMISSION, [17], {}, Queue.GRADE),
        (TaskName.GRADE_SUBMISSION, [18], {"queue": Queue.REGRADE}, Queue.REGRADE),
        (TaskName.SYNC_GRADE, [3, 4], {}, Queue.SYNC),  # routed by task_routes
    ],
)
def test_a_direct_send_pushes_the_message_celery_would(queues, name, args, options, queue):
    celery_app, reader = queues
    assert celery_app.direct is not None
    direct = celery_app.direct
    celery_app.direct = None  # Celery's own producer first
    celery_app.send_task(name, args=args, **options)
    celery_app.direct = direct
    result = celery_app.send_task(name, args=args, **options)

    theirs, ours = _pushed(reader, queue)
    assert _shape(ours) == _shape(theirs)
    assert ours["headers"]["id"] == ours["properties"]["correlation_id"] == result.id
    assert ours["properties"]["delivery_tag"] != theirs["properties"]["delivery_tag"]
    body = json.loads(base64.b64decode(ours["body"]))
    assert body[0] == args


def test_a_send_with_a_countdown_goes_through_celery(queues):
    celery_app, reader = queues
    celery_app.send_task(TaskName.SYNC_GRADE, args=[1, 2], countdown=30)
    (message,) = _pushed(reader, Queue.SYNC)
    assert message["headers"]["eta"] is not None  # the worker holds it until then


def test_a_direct_send_to_a_stopped_redis_says_false(queues, redis_server):
    celery_app, _ = queues
    redis_server.stop()
    assert send_grade(celery_app, GradeMessage(1)) is False


def test_a_direct_send_after_a_redis_restart_reconnects(queues, redis_server):
    celery_app, reader = queues
    assert send_grade(celery_app, GradeMessage(1)) is True
    redis_server.restart()  # the pooled connection is dead now; the list is gone with it
    assert send_grade(celery_app, GradeMessage(2)) is True
    assert [json.loads(base64.b64decode(m["body"]))[0] for m in _pushed(reader, Queue.GRADE)] == [
        [2]
    ]


def _delivered(celery_app, count):
    """Return the submission ids of the next `count` messages kombu's consumer takes."""
    with celery_app.connection_for_read() as connection:
        taken = connection.SimpleQueue(Queue.GRADE.value, no_ack=True)
        try:
            return [taken.get(timeout=5).payload[0][0] for _ in range(count)]
        finally:
            taken.close()


def test_a_message_sent_first_is_the_one_kombu_delivers_next(queues):
    celery_app, _ = queues
    for submission_id in (1, 2, 3):
        assert send_grade(celery_app, GradeMessage(submission_id)) is True
    assert send_grade(celery_app, GradeMessage(99, order=Order.FIRST)) is True
    # kombu's own consumer (what a worker runs) takes them in this order
    order = _delivered(celery_app, 4)
    assert order == [99, 1, 2, 3]


def test_a_message_sent_later_waits_behind_every_fresh_one(queues):
    celery_app, reader = queues
    assert send_grade(celery_app, GradeMessage(7, order=Order.LATER)) is True
    for submission_id in (1, 2):
        assert send_grade(celery_app, GradeMessage(submission_id)) is True
    assert send_grade(celery_app, GradeMessage(8, order=Order.LATER)) is True
    assert sum(map(reader.llen, list_keys(Queue.GRADE))) == 4  # what the metrics count
    order = _delivered(celery_app, 4)
    assert order == [1, 2, 7, 8]


def test_first_is_ignored_on_celerys_own_path(queues):
    celery_app, reader = queues
    # a countdown goes through Celery, which must not see (nor put in the message) our option
    celery_app.send_task(TaskName.GRADE_SUBMISSION, args=[5], countdown=30, first=True)
    (message,) = _pushed(reader, Queue.GRADE)
    assert message["headers"]["eta"] is not None
    assert "first" not in json.dumps(message)
