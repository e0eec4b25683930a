"""The broker: a Celery app over Redis, and a direct path for the plain sends of the web app.

No Flask here: the web app and the workers each make their own app with `make_celery`.
"""

from __future__ import annotations

import base64
import json
import logging
import time
import uuid
from typing import Any
from urllib.parse import urlsplit

import redis
from celery import Celery
from celery.utils.nodenames import anon_nodename
from kombu.exceptions import OperationalError
from kombu.transport import redis as kombu_redis

from service.queue import Queue, TaskName
from service.settings import Settings

log = logging.getLogger(__name__)


def make_celery(settings: Settings) -> QueueApp:
    """Return a Celery app for these settings: the queues, routes and the direct publisher.

    A worker's app carries its context too (workers.context.WorkerContext.attach); the web
    app, which only sends, has none.
    """
    celery_app = QueueApp("codeblanks")
    celery_app.conf.update(celery_config(settings))
    if _is_redis(settings.broker):
        celery_app.direct = DirectPublisher(settings.broker)
    celery_app.set_default()
    return celery_app


class QueueApp(Celery):  # type: ignore[misc]
    """Celery, whose plain sends (a task by name, to run now) skip kombu's producer.

    A send through kombu cost a web request about a millisecond of CPU, half of all it did
    to take a submission: most of it in building, routing and wrapping the message. Sent
    now and to one queue, the message is the same one Celery would build (protocol 2, in
    kombu's Redis envelope: tests/service/test_queue.py compares them), pushed with one
    LPUSH. Anything else (a countdown, an expiry, a retry) goes through Celery as before.
    """

    direct: DirectPublisher | None = None

    def send_task(self, name: str, args: Any = None, kwargs: Any = None, **options: Any) -> Any:
        """Send a task by name; see Celery.send_task, whose signature this keeps.

        Celery's own callers pass `args` and `kwargs` by position (Task.retry, through
        apply_async), with a task id, a countdown and retry headers among the options: all
        of that goes to Celery. Only a plain send (positional arguments, a queue at most)
        takes the short path. `first=True` (not Celery's) puts that message at the head of
        its queue, to be taken next; Celery's own path ignores it.
        """
        first = bool(options.pop("first", False))  # ours: see service.queue.send_grade
        plain = not kwargs and set(options) <= {"queue"} and not self.conf.task_always_eager
        if self.direct is None or not plain:
            return super().send_task(name, args, kwargs, **options)
        queue = options.get("queue") or self._queue_of(name)
        task_id = self.direct.publish(name, list(args or ()), queue, self.thread_oid, first)
        return self.AsyncResult(task_id)

    def _queue_of(self, name: str) -> str:
        route = self.conf.task_routes.get(name) or {}
        return str(route.get("queue") or self.conf.task_default_queue)


class DirectPublisher:
    """Pushes Celery task messages onto the Redis lists that the workers pop."""

    _RETRIES = (0.0, 0.2)  # like task_publish_retry_policy: the sweep covers what is lost

    def __init__(self, url: str) -> None:
        self.client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=10)
        self.origin = anon_nodename()

    def publish(
        self, name: str, args: list[Any], queue: str, reply_to: str, first: bool = False
    ) -> str:
        """Push one message for task `name`; return its id. Raise OperationalError if Redis
        cannot be reached.

        The workers pop a queue's list from the right (BRPOP): a message pushed on the left
        waits behind the others, one pushed `first` on the right is taken next.
        """
        task_id = str(uuid.uuid4())
        message = json.dumps(self.message(task_id, name, args, queue, reply_to))
        push = self.client.rpush if first else self.client.lpush
        for pause in (*self._RETRIES, None):
            try:
                push(queue, message)
                return task_id
            except (redis.ConnectionError, redis.TimeoutError) as exc:
                if pause is None:
                    raise OperationalError(str(exc)) from exc
                time.sleep(pause)
        raise AssertionError("unreachable")

    def message(
        self, task_id: str, name: str, args: list[Any], queue: str, reply_to: str
    ) -> dict[str, Any]:
        """Return the message Celery's send_task would push for this task, run now."""
        embed = {"callbacks": None, "errbacks": None, "chain": None, "chord": None}
        body = json.dumps([args, {}, embed]).encode()
        headers = {
            "lang": "py",
            "task": name,
            "id": task_id,
            "shadow": None,
            "eta": None,
            "expires": None,
            "group": None,
            "group_index": None,
            "retries": 0,
            "timelimit": [None, None],
            "root_id": task_id,
            "parent_id": None,
            "argsrepr": repr(args),
            "kwargsrepr": "{}",
            "origin": self.origin,
            "ignore_result": None,
            "replaced_task_nesting": 0,
            "stamped_headers": None,
            "stamps": {},
        }
        return {
            "body": base64.b64encode(body).decode(),
            "content-encoding": "utf-8",
            "content-type": "application/json",
            "headers": headers,
            "properties": {
                "correlation_id": task_id,
                "reply_to": reply_to,
                "delivery_mode": 2,
                "delivery_info": {"exchange": "", "routing_key": queue},
                "priority": 0,
                "body_encoding": "base64",
                "delivery_tag": str(uuid.uuid4()),
            },
        }


class _RedisChannel(kombu_redis.Channel):
    """kombu's Redis channel, with one client per connection pool, not one per command.

    kombu makes a new redis.Redis for every publish, delivery and ack, and redis-py copies
    its table of response callbacks into each: a tenth of a worker consumer's CPU. A client
    holds no connection of its own (each command takes one from the pool), so one serves all.
    """

    _pooled: tuple[object, object] | None = None  # (pool, its client)

    def _create_client(self, asynchronous: bool = False) -> object:
        if asynchronous:
            return super()._create_client(asynchronous=True)  # type: ignore[no-untyped-call]
        pool = self.pool  # a new one after a fork or a reconnection: then a new client too
        if self._pooled is None or self._pooled[0] is not pool:
            self._pooled = (pool, super()._create_client())  # type: ignore[no-untyped-call]
        return self._pooled[1]


class RedisTransport(kombu_redis.Transport):
    """kombu's Redis transport with _RedisChannel."""

    Channel = _RedisChannel


def list_keys(queue: Queue) -> list[str]:
    """Return the Redis lists that hold the queue's messages: one per kombu priority step."""
    steps = kombu_redis.Channel.priority_steps
    return [queue.value, *(f"{queue.value}{kombu_redis.Channel.sep}{step}" for step in steps[1:])]


def _is_redis(url: str) -> bool:
    return urlsplit(url).scheme in ("redis", "rediss")


def celery_config(settings: Settings) -> dict[str, Any]:
    """Return Celery's configuration: late acks, one message per process, JSON only."""
    return {
        "broker_url": settings.broker,
        "broker_transport": "service.queue.broker:RedisTransport"
        if _is_redis(settings.broker)
        else None,
        "broker_connection_retry_on_startup": True,
        # A message taken and never acknowledged (its worker died) comes back after the
        # visibility timeout, looked for every second by each live worker. A live worker's
        # message comes back too once it is older: a grading that runs longer, or a wait in
        # the broker (tasks keep theirs under half the timeout, see workers.tasks.wait_s).
        # Delivering twice is harmless: a claim (or a grade sync's turn) lets one through.
        "broker_transport_options": {
            "visibility_timeout": settings.visibility_timeout_s,
            "unacked_restore_interval": 1,
            "unacked_restore_throttle": 1,
            "socket_connect_timeout": 2,
        },
        "task_default_queue": Queue.GRADE.value,
        "task_routes": {
            TaskName.SYNC_GRADE.value: {"queue": Queue.SYNC.value},
            TaskName.SWEEP.value: {"queue": Queue.SYNC.value},
            TaskName.REFRESH_ROSTER.value: {"queue": Queue.SYNC.value},
            TaskName.CHECK_PLATFORM.value: {"queue": Queue.SYNC.value},
            TaskName.MAKE_LINE_ITEM.value: {"queue": Queue.SYNC.value},
        },
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        # our JSON logging (service.logs) stays in place; Celery's records go through it
        "worker_hijack_root_logger": False,
        "worker_concurrency": settings.worker_concurrency or None,
        "task_ignore_result": True,
        "task_serializer": "json",
        "accept_content": ["json"],
        # a short retry: the row is committed already, and the sweep enqueues what was missed
        "task_publish_retry_policy": {
            "max_retries": 2,
            "interval_start": 0,
            "interval_step": 0.2,
            "interval_max": 0.5,
        },
        # on a lost broker connection, let running gradings finish: their fenced save is
        # right whether or not their message comes back
        "worker_cancel_long_running_tasks_on_connection_loss": False,
        "enable_utc": True,
        # the last resort against a grading that hangs: a worker raises it to its catalog's
        # longest grading (workers/app.py), for the lease is renewed while a grading runs
        "task_time_limit": settings.lease_s,
        "codeblanks_sweep_interval_s": settings.sweep_interval_s,
    }
