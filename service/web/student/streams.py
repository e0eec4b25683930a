"""Live status streams (Server-Sent Events) that no number of open pages can let hog the web app.

Under gunicorn's gthread worker a response holds a thread until its body ends, so a stream
that is open is a thread that is busy. Three rules keep that bounded:
- a stream is short: it sends the status at once, then each change, and ends when the
  submission is graded or after `stream_max_s`, with a `retry:` so that the browser's
  EventSource reconnects by itself and gets the status again (nothing is lost in between);
- a process serves at most `streams_per_process` streams at a time, and a signed-in user at
  most `streams_per_session` of them; over either cap the answer is one status and a `busy`
  event, at once, and the page polls `GET /api/submissions/<id>` instead;
- a stream of a graded submission is one answer (status, end) and is counted by no cap.
A slot is taken when the body starts and given back when it ends or is closed: gunicorn and
Werkzeug close the body when the client goes away (on the next write) or the response is
dropped, so a slot is never held past one stream's `stream_max_s`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from service.store.models import SubmissionStatus

RETRY_MS = 1000  # a short stream ends on purpose: reconnect soon
BUSY_RETRY_MS = 10_000  # the caps were full: an EventSource that does not poll waits longer
POLL_S = 0.25  # how often a stream looks at its submission
KEEPALIVE_S = 15.0  # a comment line, so that proxies keep an idle stream open

State = dict[str, Any]


class Slot:
    """One open stream's place under the caps; release() gives it back, once."""

    def __init__(self, streams: Streams, user_id: int) -> None:
        self._streams = streams
        self._user_id = user_id
        self._held = True

    def release(self) -> None:
        """Give the place back (again: nothing)."""
        self._streams._give_back(self)


class Streams:
    """The streams open in this process, counted in all and per user, under two caps."""

    def __init__(self, per_user: int, per_process: int) -> None:
        self.per_user = per_user
        self.per_process = per_process
        self._lock = threading.Lock()
        self._by_user: dict[int, int] = {}
        self._open = 0

    def take(self, user_id: int) -> Slot | None:
        """Count a new stream of the user; None when the user's or the process's cap is full."""
        with self._lock:
            held = self._by_user.get(user_id, 0)
            if self._open >= self.per_process or held >= self.per_user:
                return None
            self._by_user[user_id] = held + 1
            self._open += 1
            return Slot(self, user_id)

    def open(self, user_id: int | None = None) -> int:
        """Return how many streams are open: the user's, or all of them."""
        with self._lock:
            return self._open if user_id is None else self._by_user.get(user_id, 0)

    def _give_back(self, slot: Slot) -> None:
        with self._lock:
            if not slot._held:
                return
            slot._held = False
            self._open -= 1
            left = self._by_user[slot._user_id] - 1
            if left:
                self._by_user[slot._user_id] = left
            else:
                del self._by_user[slot._user_id]  # a user who leaves leaves nothing behind


def graded(state: State) -> bool:
    """Return whether a status is final: nothing will change, the stream has ended."""
    return state.get("status") == SubmissionStatus.GRADED


def follow(
    streams: Streams,
    user_id: int,
    first: State,
    look: Callable[[], State | None],
    hold_s: float,
    poll_s: float = POLL_S,
) -> Iterator[str]:
    """Yield one short stream: the status now, each change, then `end`, `timeout` or `busy`.

    `look` returns the status now, or None when it cannot tell (the database blinked). The
    slot is taken here, when the server starts the body, so a response that is never sent
    holds none; `finally` gives it back however the body ends, closed included.
    """
    if graded(first):
        yield _retry(RETRY_MS) + _event("status", first) + _event("end", {})
        return
    slot = streams.take(user_id)
    if slot is None:
        busy = {"retry_after_s": BUSY_RETRY_MS // 1000}
        yield _retry(BUSY_RETRY_MS) + _event("status", first) + _event("busy", busy)
        return
    try:
        yield _retry(RETRY_MS) + _event("status", first)
        shown = first
        started = last_sent = time.monotonic()
        while time.monotonic() - started < hold_s:
            time.sleep(poll_s)
            state = look()
            if state is not None and state != shown:
                shown = state
                last_sent = time.monotonic()
                yield _event("status", state)
                if graded(state):
                    yield _event("end", {})
                    return
            elif time.monotonic() - last_sent > KEEPALIVE_S:
                last_sent = time.monotonic()
                yield ": keep-alive\n\n"
        # EventSource reconnects after RETRY_MS and the new stream starts with the status
        yield _event("timeout", {"after_s": hold_s})
    finally:
        slot.release()


def _retry(ms: int) -> str:
    return f"retry: {ms}\n\n"


def _event(name: str, data: State) -> str:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"
