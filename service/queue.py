"""The queues: a Celery app over Redis, the stable task names, and enqueueing by name.

The service never imports task bodies (they live in workers.tasks); it sends by name.
Queues: `grade` (students' runs), `regrade` (bulk regrades, served by workers of their own
so that they never delay a student), `sync` (grade posts to the LMS, and the sweep).
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from celery import Celery, Task
from flask import Flask
from kombu.exceptions import OperationalError
from kombu.transport import redis as kombu_redis

from service.settings import Settings

GRADE_SUBMISSION = "codeblanks.grade_submission"
SYNC_GRADE = "codeblanks.sync_grade"
SWEEP = "codeblanks.sweep"
GRADE_QUEUE, REGRADE_QUEUE, SYNC_QUEUE = "grade", "regrade", "sync"

log = logging.getLogger(__name__)


def celery_init_app(app: Flask) -> Celery:
    """Attach a Celery app whose tasks run inside this Flask app's context."""

    class FlaskTask(Task):  # type: ignore[misc]
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            with app.app_context():
                return self.run(*args, **kwargs)

    celery_app = Celery(app.name, task_cls=FlaskTask)
    celery_app.conf.update(celery_config(app.config["SETTINGS"]))
    celery_app.set_default()
    app.extensions["celery"] = celery_app
    return celery_app


class _RedisChannel(kombu_redis.Channel):  # type: ignore[misc]
    """kombu's Redis channel, with one client per connection pool, not one per command.

    kombu makes a new redis.Redis for every publish, delivery and ack, and redis-py copies
    its table of response callbacks into each: a tenth of a worker consumer's CPU. A client
    holds no connection of its own (each command takes one from the pool), so one serves all.
    """

    _pooled: tuple[object, object] | None = None  # (pool, its client)

    def _create_client(self, asynchronous: bool = False) -> object:
        if asynchronous:
            return super()._create_client(asynchronous=True)
        pool = self.pool  # a new one after a fork or a reconnection: then a new client too
        if self._pooled is None or self._pooled[0] is not pool:
            self._pooled = (pool, super()._create_client())
        return self._pooled[1]


class RedisTransport(kombu_redis.Transport):  # type: ignore[misc]
    """kombu's Redis transport with _RedisChannel."""

    Channel = _RedisChannel


def celery_config(settings: Settings) -> dict[str, Any]:
    """Return Celery's configuration: late acks, one message per process, JSON only."""
    redis = urlsplit(settings.broker).scheme in ("redis", "rediss")
    return {
        "broker_url": settings.broker,
        "broker_transport": "service.queue:RedisTransport" if redis else None,
        "broker_connection_retry_on_startup": True,
        # an unacked message comes back after this long; the sweep recovers sooner, and a
        # redelivered submission is a no-op, so the timeout only needs to be long
        "broker_transport_options": {"visibility_timeout": 3600, "socket_connect_timeout": 2},
        "task_default_queue": GRADE_QUEUE,
        "task_routes": {SYNC_GRADE: {"queue": SYNC_QUEUE}, SWEEP: {"queue": SYNC_QUEUE}},
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
        # a running grade is killed at its lease's end: another worker may take it over then
        "task_time_limit": settings.lease_s,
        "codeblanks_sweep_interval_s": settings.sweep_interval_s,
    }


def enqueue(celery_app: Celery, name: str, args: list[Any], **options: Any) -> bool:
    """Send a task by name; return False (and log) when the broker cannot be reached.

    `options` go to Celery's send_task (queue, countdown, expires).
    """
    try:
        celery_app.send_task(name, args=args, **options)
    except (OperationalError, OSError) as exc:
        # the database holds the work; the sweep enqueues it once the broker is back
        log.warning("could not enqueue %s%r: %s", name, args, exc)
        return False
    return True
