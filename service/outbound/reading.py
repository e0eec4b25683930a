"""Reading an answer: its head and its body each within a cap, its JSON in one way.

http.client alone reads up to 100 header lines of 64 KiB each: 90 headers of 60 KB (5.4 MB)
were accepted before any body cap applied. `Head` reads the status line and headers (and any
interim 1xx answers) through a stream that refuses past MAX_HEAD_BYTES or MAX_HEAD_LINES, so
a larger head is refused after that many bytes, not after all of it.

Every answer of the client is an `Answer`, whose `json()` (what pylti1p3 calls) is `parse`:
JSON nested deeper than Python recurses raised RecursionError, which no caller caught.
"""

from __future__ import annotations

import http.client
import json
from typing import Any, BinaryIO

import requests

from service.outbound.refusals import Fault, Reason, Stopped, Unreadable

# an LMS's answers carry a few KiB of headers (cookies, CSP, an NRPS page's Link header):
# 64 KiB is ample, and as much as http.client allows for a single line
MAX_HEAD_BYTES = 64 * 1024
MAX_HEAD_LINES = 100  # http.client's own limit, here a refusal of ours rather than its error
# key sets, configurations, tokens, line items and rosters nest a few levels: deeper is not
# what a platform sends, and would recurse in whatever walks it next
MAX_DEPTH = 32


class _HeadStream:
    """A response's stream while its head is read: every line counted against the caps."""

    def __init__(self, stream: BinaryIO, origin: str) -> None:
        self._stream = stream
        self._origin = origin
        self._left = MAX_HEAD_BYTES
        self._lines = 0

    def readline(self, size: int = -1) -> bytes:
        """Read one line of the head, refusing a head larger than the caps."""
        budget = self._left + 1
        line = self._stream.readline(budget if size < 0 else min(size, budget))
        self._left -= len(line)
        self._lines += 1
        if self._left < 0 or self._lines > MAX_HEAD_LINES:
            raise Stopped(
                Reason.TOO_LARGE,
                f"refused: the headers of the answer to {self._origin} are over "
                f"{MAX_HEAD_BYTES} bytes or {MAX_HEAD_LINES} lines",
            )
        return line

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class Head(http.client.HTTPResponse):
    """http.client's response, whose status line and headers are read within the caps."""

    def __init__(self, sock: Any, *args: Any, origin: str, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        self.origin = origin  # the host the caller asked for: never one a redirect named

    def begin(self) -> None:
        """Read the status line and headers through a capped stream, then the plain one."""
        if self.fp is None or self.headers is not None:
            return super().begin()
        stream = self.fp
        self.fp = _HeadStream(stream, self.origin)
        try:
            super().begin()
        finally:
            if isinstance(self.fp, _HeadStream):
                self.fp = stream


def read_body(response: requests.Response, origin: str, limit: int) -> None:
    """Read the whole answer now, refusing one larger than `limit` bytes."""
    too_large = Stopped(
        Reason.TOO_LARGE, f"refused: the answer from {origin} is over {limit} bytes"
    )
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:
        response.close()
        raise too_large
    body = bytearray()
    for chunk in response.iter_content(64 * 1024):
        body += chunk
        if len(body) > limit:
            response.close()
            raise too_large
    response._content = bytes(body)


def parse(content: bytes) -> Any:
    """Return the JSON value of an answer's bytes; raise Unreadable naming what is wrong."""
    try:
        value = json.loads(content)
    except RecursionError:
        raise Unreadable(Fault.TOO_DEEP) from None
    except ValueError:  # not JSON, or not UTF-8/16/32
        raise Unreadable(Fault.NOT_JSON) from None
    if not _shallow(value):
        raise Unreadable(Fault.TOO_DEEP)
    return value


def document(response: requests.Response) -> dict[str, Any]:
    """Return an answer's JSON object; raise Unreadable if it is anything else."""
    value = parse(response.content)
    if not isinstance(value, dict):
        raise Unreadable(Fault.NOT_OBJECT)
    return value


def _shallow(value: Any) -> bool:
    """Return whether `value` nests at most MAX_DEPTH arrays and objects, without recursing."""
    stack = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return False
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return True


class Answer(requests.Response):
    """A response of the outbound client: read whole, within the caps."""

    def json(self, **kwargs: Any) -> Any:
        """Return the answer's JSON (see `parse`): a ValueError, never a RecursionError."""
        return parse(self.content)
