"""Structured logs: one JSON object per line, with the request id and submission id in force.

`CODEBLANKS_LOG_FORMAT=text` gives plain lines instead (for a terminal). Request ids come from
an incoming X-Request-Id header or are made up, and are echoed in the response; workers set
the submission id while they grade it.
"""

from __future__ import annotations

import contextvars
import json
import logging
import secrets
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask, Response, g, request

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)
submission_id: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "submission_id", default=None
)
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """Format a record as one JSON object, with its extra fields and the ids in force."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if request_id.get():
            entry["request_id"] = request_id.get()
        if submission_id.get() is not None:
            entry["submission_id"] = submission_id.get()
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value if isinstance(value, int | float | bool | None) else str(value)
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def configure(log_format: str, level: int = logging.INFO) -> None:
    """Send the root logger's records to stderr as JSON (or plain text)."""
    handler = logging.StreamHandler(sys.stderr)
    if log_format == "text":
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    else:
        handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers = [h for h in root.handlers if getattr(h, "_codeblanks", False) is False]
    handler._codeblanks = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level)


def init_app(app: Flask) -> None:
    """Give every request an id, kept for its log lines and echoed in X-Request-Id."""

    @app.before_request
    def _start() -> None:
        incoming = request.headers.get("X-Request-Id", "")
        rid = incoming if 0 < len(incoming) <= 64 and incoming.isprintable() else None
        g.request_id = rid or secrets.token_hex(8)
        g.request_token = request_id.set(g.request_id)

    @app.after_request
    def _finish(response: Response) -> Response:
        if "request_id" in g:
            response.headers["X-Request-Id"] = g.request_id
        return response

    @app.teardown_request
    def _reset(_exc: BaseException | None) -> None:
        token = g.pop("request_token", None)
        if token is not None:
            request_id.reset(token)


@contextmanager
def grading(submission: int) -> Iterator[None]:
    """Mark the log lines written while a worker grades one submission."""
    token = submission_id.set(submission)
    try:
        yield
    finally:
        submission_id.reset(token)
