"""`/metrics` in Prometheus's text format, computed from the database and Redis.

The database is the truth for every counter here, so the figures are the same whichever web
process answers, and they survive restarts; queue depth comes from Redis. The figures say how
busy the tool is and which grades fail to reach LMSs: they are for the operator's scraper
only, which sends `Authorization: Bearer $CODEBLANKS_METRICS_TOKEN`; without a token set,
/metrics is off.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable

from flask import Blueprint, Response, abort, request
from redis import Redis
from redis.exceptions import RedisError
from sqlalchemy.exc import SQLAlchemyError

from service.queue import Queue
from service.queue.broker import list_keys
from service.store import metrics_reads
from service.web import extensions

bp = Blueprint("metrics", __name__)
LATENCY_BUCKETS_S = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


@bp.before_request
def require_token() -> Response | None:
    """Answer 404 while no metrics token is set, 401 to a caller without it."""
    wanted = extensions.settings().metrics_token
    if not wanted:
        abort(404, "/metrics is off: set CODEBLANKS_METRICS_TOKEN to turn it on.")
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode(), wanted.encode()
    ):
        return Response(
            "The metrics token is needed.\n",
            401,
            {"WWW-Authenticate": 'Bearer realm="codeblanks metrics"'},
            mimetype="text/plain",
        )
    return None


@bp.get("/metrics")
def metrics() -> Response:
    """Answer the service's figures for Prometheus."""
    lines: list[str] = []
    store = extensions.store()
    try:
        found = metrics_reads.figures(store)
    except SQLAlchemyError:
        lines += _gauge("codeblanks_database_up", "Whether the database answers.", [({}, 0)])
        return _text(lines)
    lines += _gauge("codeblanks_database_up", "Whether the database answers.", [({}, 1)])
    lines += _gauge(
        "codeblanks_submissions",
        "Submissions by status.",
        [({"status": status}, count) for status, count in found.submissions],
    )
    lines += _counter(
        "codeblanks_sandbox_runs_total",
        "Graded runs by outcome.",
        [({"outcome": outcome}, count) for outcome, count in found.runs],
    )
    lines += _counter(
        "codeblanks_grade_syncs_total",
        "Grade syncs to the LMS by result.",
        [({"result": status}, count) for status, count in found.syncs],
    )
    lines += _histogram(
        "codeblanks_grading_latency_seconds",
        "From submission to saved grade (the latest 10,000 graded).",
        found.latencies,
    )
    lines += _queue_depths()
    return _text(lines)


def _queue_depths() -> list[str]:
    client = Redis.from_url(
        extensions.settings().broker, socket_timeout=0.5, socket_connect_timeout=0.5
    )
    depths: list[tuple[dict[str, object], float]]
    try:
        depths = [({"queue": q.value}, sum(map(client.llen, list_keys(q)))) for q in Queue]
        up = 1
    except RedisError:
        depths, up = [], 0
    finally:
        client.close()
    return _gauge("codeblanks_redis_up", "Whether Redis answers.", [({}, up)]) + _gauge(
        "codeblanks_queue_depth", "Messages waiting in each queue.", depths
    )


def _labels(labels: dict[str, object]) -> str:
    if not labels:
        return ""
    escaped = (
        f'{k}="{str(v).replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
        for k, v in labels.items()
    )
    return "{" + ",".join(escaped) + "}"


def _series(
    name: str, kind: str, help_text: str, samples: Iterable[tuple[dict[str, object], float]]
) -> list[str]:
    lines = [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
    lines += [f"{name}{_labels(labels)} {value:g}" for labels, value in samples]
    return lines


def _gauge(
    name: str, help_text: str, samples: Iterable[tuple[dict[str, object], float]]
) -> list[str]:
    return _series(name, "gauge", help_text, samples)


def _counter(
    name: str, help_text: str, samples: Iterable[tuple[dict[str, object], float]]
) -> list[str]:
    return _series(name, "counter", help_text, samples)


def _histogram(name: str, help_text: str, values: list[float]) -> list[str]:
    lines = [f"# HELP {name} {help_text}", f"# TYPE {name} histogram"]
    for bound in LATENCY_BUCKETS_S:
        lines.append(f'{name}_bucket{{le="{bound:g}"}} {sum(1 for v in values if v <= bound)}')
    lines.append(f'{name}_bucket{{le="+Inf"}} {len(values)}')
    lines.append(f"{name}_sum {sum(values):g}")
    lines.append(f"{name}_count {len(values)}")
    return lines


def _text(lines: list[str]) -> Response:
    return Response("\n".join(lines) + "\n", mimetype="text/plain; version=0.0.4")
