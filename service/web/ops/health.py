"""Health checks for the load balancer: alive (/healthz) and ready to grade (/readyz)."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify
from redis import Redis
from redis.exceptions import RedisError
from sqlalchemy.exc import SQLAlchemyError

from service.web import extensions

bp = Blueprint("health", __name__)

_TIMEOUT_S = 0.5


@bp.get("/healthz")
def healthz() -> Response:
    """Answer 200 while the web process runs."""
    return jsonify(status="ok")


@bp.get("/readyz")
def readyz() -> tuple[Response, int]:
    """Answer 200 when the database and Redis answer and at least one worker is up; else 503."""
    checks = {"database": _database(), "redis": _redis()}
    # a worker answers through Redis: without Redis there is nothing to ask
    checks["workers"] = _workers() if checks["redis"] == "ok" else "not asked: no redis"
    ready = all(value == "ok" for value in checks.values())
    return jsonify(status="ok" if ready else "unavailable", checks=checks), 200 if ready else 503


def _database() -> str:
    store = extensions.store()
    try:
        store.ping()
    except SQLAlchemyError as exc:
        return f"unreachable: {type(exc).__name__}"
    return "ok"


def _redis() -> str:
    client = Redis.from_url(
        extensions.settings().broker,
        socket_timeout=_TIMEOUT_S,
        socket_connect_timeout=_TIMEOUT_S,
    )
    try:
        client.ping()
    except RedisError as exc:
        return f"unreachable: {type(exc).__name__}"
    finally:
        client.close()
    return "ok"


def _workers() -> str:
    try:
        replies = extensions.celery_app().control.ping(timeout=_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001  kombu raises from several roots; all mean "no"
        return f"unreachable: {type(exc).__name__}"
    return "ok" if replies else "no worker answered"
