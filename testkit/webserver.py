"""The web app for real: `codeblanks serve` (gunicorn) on a free port over a seeded store, and
a plain HTTP client for its live status streams that reads them as they come.

Used by tests/service/web/student/test_streams.py, benchmarks/streams.py and benchmarks/rush.py.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from service.settings import PREFIX
from service.web import extensions
from testkit.factories import add_student, place, settings_in, submission
from testkit.servers import REPO, free_port, kill_session
from testkit.sessions import session_token


@dataclass(frozen=True)
class Student:
    """A signed-in student with a queued submission that nobody will grade."""

    user_id: int
    token: str  # the signed session, for the X-CodeBlanks-Session header
    submission_id: int

    @property
    def events(self) -> str:
        """Return the path of the submission's live status stream."""
        return f"/api/submissions/{self.submission_id}/events"


def seed(directory: Path, students: int) -> tuple[dict[str, str], list[Student]]:
    """Migrate a SQLite store in `directory`, give `students` students a queued submission each.

    Returns the environment that points `codeblanks serve` at that store (and at a Redis that
    refuses connections: nothing is ever graded), and the students.
    """
    from service.web import create_app

    settings = settings_in(directory, "web.db")
    app = create_app({"TESTING": True, "SETTINGS": settings})
    store = extensions.store(app)
    placed = place(store)
    found = []
    for n in range(students):
        user_id = placed.user_id if n == 0 else add_student(store, placed, f"student-{n + 1}")
        submission_id = submission(store, placed.placement_id, user_id, "print(1)\n", False)
        token = session_token(app, user_id, [placed.placement_id])
        found.append(Student(user_id, token, submission_id))
    store.dispose()
    env = {
        PREFIX + "INSTANCE_DIR": str(settings.instance_dir),
        PREFIX + "DATABASE_URL": settings.database_url,
        PREFIX + "REDIS_URL": settings.redis_url,
        PREFIX + "LOG_FORMAT": "text",
    }
    return env, found


class WebServer:
    """`codeblanks serve` as a child process in a session of its own, on a free port."""

    def __init__(
        self, env: Mapping[str, str], log: Path, *options: str, port: int | None = None
    ) -> None:
        self.env = env
        self.log = log
        self.options = options  # e.g. "--workers", "1"; none: the command's own defaults
        self.port = port or free_port()  # given: the app's base URL was made with it
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60) -> WebServer:
        """Start it and wait until /healthz answers."""
        args = [sys.executable, "-m", "service", "serve", "--port", str(self.port)]
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [*args, *self.options],
                env={**os.environ, **self.env},
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=REPO,
                start_new_session=True,  # its worker processes go with it in stop()
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the web app exited: {self.log.read_text()[-3000:]}")
            try:
                if self.get("/healthz", timeout=1).status == 200:
                    return self
            except OSError:
                time.sleep(0.1)
        raise TimeoutError(f"the web app did not answer in {timeout:g} s")

    def get(self, path: str, timeout: float, token: str | None = None) -> Answer:
        """GET a path on a connection of its own and read the whole answer."""
        stream = Stream(self.port, path, token, timeout)
        try:
            return stream.read(timeout)
        finally:
            stream.close()

    def stop(self) -> None:
        """Stop it: SIGTERM, then SIGKILL to its whole session after a grace period."""
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(10)
        except (subprocess.TimeoutExpired, ProcessLookupError):
            pass
        kill_session(self.process)
        self.process = None


@dataclass
class Answer:
    """What came back: the status, the events by name and data, and whether the body ended."""

    status: int
    events: list[tuple[str, object]] = field(default_factory=list)
    ended: bool = False

    def names(self) -> list[str]:
        """Return the events' names, in order."""
        return [name for name, _ in self.events]


class Stream:
    """One GET on a connection of its own, sent at once and read later (or never)."""

    def __init__(self, port: int, path: str, token: str | None, timeout: float) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        headers = {"Accept": "text/event-stream"}
        if token is not None:
            headers["X-CodeBlanks-Session"] = token
        self.connection.request("GET", path, headers=headers)
        self.response: http.client.HTTPResponse | None = None
        self.answer: Answer | None = None
        self._buffer = b""

    def head(self, timeout: float) -> Answer:
        """Wait for the status line and headers."""
        if self.answer is None:
            assert self.connection.sock is not None
            self.connection.sock.settimeout(timeout)
            self.response = self.connection.getresponse()
            self.answer = Answer(self.response.status)
        return self.answer

    def until(self, name: str, timeout: float) -> Answer:
        """Read events until one named `name` (or the end of the body) has come, in `timeout`."""
        deadline = time.monotonic() + timeout
        answer = self.head(timeout)
        assert self.response is not None and self.connection.sock is not None
        while not answer.ended and name not in answer.names():
            left = deadline - time.monotonic()
            if left <= 0:  # a keep-alive now and then must not stretch the wait
                raise TimeoutError(f"no {name!r} event in {timeout:g} s")
            self.connection.sock.settimeout(left)
            chunk = self.response.read1(65536)
            if not chunk:
                answer.ended = True
            self._buffer += chunk
            *done, self._buffer = self._buffer.split(b"\n\n")
            for block in done:
                lines = dict(
                    line.split(": ", 1)
                    for line in block.decode().splitlines()
                    if line[:1] not in ("", ":") and ": " in line
                )
                if "event" in lines:
                    answer.events.append((lines["event"], json.loads(lines.get("data", "null"))))
        return answer

    def read(self, timeout: float) -> Answer:
        """Read to the end of the body."""
        return self.until("\0", timeout)

    def close(self) -> None:
        """Drop the connection, read or not."""
        self.connection.close()
