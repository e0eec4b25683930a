"""Structured logs: one JSON object per line, with the request id and submission id in force.

`CODEBLANKS_LOG_FORMAT=text` gives plain lines instead (for a terminal). The web app sets the
request id (service.web.ops.request_ids); workers set the submission id while they grade it.
No Flask here.
"""

from __future__ import annotations

import contextvars
import json
import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

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


@contextmanager
def grading(submission: int) -> Iterator[None]:
    """Mark the log lines written while a worker grades one submission."""
    token = submission_id.set(submission)
    try:
        yield
    finally:
        submission_id.reset(token)
