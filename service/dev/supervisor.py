"""`codeblanks dev`: everything on one machine, started in order and stopped together.

A private redis-server (its own port and directory, no persistence: the database is the
truth), a Celery worker that grades on the warm sandbox, another that posts grades to the LMS
(the `sync` queue, no sandbox), and the web app with the demo LMS mounted at /demo. Progress
and the URLs go to the terminal; each program's log goes to a file in the instance dir. Ctrl-C
(or SIGTERM) stops everything, the web app first: each program is asked to stop (SIGTERM to it
alone: the worker's pool processes then close their sandboxes), and whatever is left of its
process group is killed.

Each program dies with `codeblanks dev` even when that is killed outright (SIGKILL, an OOM
kill): its parent-death signal is SIGKILL. Without it, a killed dev left its redis-server, web
app and worker running (each in a session of its own, so that Ctrl-C reaches dev alone), the
worker holding its warm slots and queue.
"""

from __future__ import annotations

import ctypes
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from service.settings import Settings

Say = Callable[[str], None]
_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


@dataclass
class Program:
    """One child process and where its log goes."""

    name: str
    argv: list[str]
    log: Path
    env: dict[str, str]
    process: subprocess.Popen[bytes] | None = None
    _log_file: IO[bytes] | None = field(default=None, repr=False)

    def start(self) -> None:
        """Start the program, its output appended to its log file."""
        self._log_file = self.log.open("ab")
        self.process = subprocess.Popen(
            self.argv,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            env=self.env,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_dies_with(os.getpid()),
        )

    def alive(self) -> bool:
        """Return whether the program is still running."""
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout_s: float = 10.0) -> None:
        """Ask the program to stop (SIGTERM to it), then kill what is left of its group.

        The program alone is asked, so that it stops its own children in its order: Celery's
        pool processes, killed by the group's SIGTERM, never closed their sandboxes.
        """
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(timeout=timeout_s)
                except subprocess.TimeoutExpired:
                    pass
            _signal_group(self.process.pid, signal.SIGKILL)
            self.process.wait()
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None


def _dies_with(parent: int) -> Callable[[], None]:
    """Return what a child runs before exec: SIGKILL for it when `parent` dies, however."""

    def arm() -> None:
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the prctl: no signal would come
            os.kill(os.getpid(), signal.SIGKILL)

    return arm


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_dev(settings: Settings, port: int, say: Say, stop_after_s: float | None = None) -> int:
    """Start redis, two workers and the web app with the demo LMS; wait for Ctrl-C; stop all."""
    redis_server = shutil.which("redis-server")
    if redis_server is None:
        say("codeblanks dev: redis-server is missing (scripts/setup.sh installs it)")
        return 2
    if not _port_free(port):
        say(f"codeblanks dev: port {port} is taken; choose another with --port")
        return 2
    instance_dir = settings.instance_dir.resolve()
    logs = instance_dir / "dev"
    logs.mkdir(parents=True, exist_ok=True, mode=0o700)
    base = f"http://127.0.0.1:{port}"
    redis_port = free_port()
    env = {
        **os.environ,
        "CODEBLANKS_INSTANCE_DIR": str(instance_dir),
        "CODEBLANKS_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "CODEBLANKS_BASE_URL": base,
        "CODEBLANKS_DEMO": "1",
        # /metrics answers only with a token: one for this run, printed below
        "CODEBLANKS_METRICS_TOKEN": settings.metrics_token or secrets.token_urlsafe(16),
    }
    python = sys.executable
    programs = [
        Program(
            "redis",
            [
                redis_server,
                "--port",
                str(redis_port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(logs),
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            logs / "redis.log",
            env,
        ),
        Program(
            "worker",
            [python, "-m", "service", "worker", "--queues", "grade", "--concurrency", "1"],
            logs / "worker.log",
            env,
        ),
        # grade posts (and roster reads, and the sweep) with a pool of their own: behind the
        # gradings, a rush's scores reached the LMS minutes after their verdicts
        Program(
            "sync worker",
            [python, "-m", "service", "worker", "--queues", "sync"],
            logs / "sync-worker.log",
            env,
        ),
        Program(
            "web",
            [
                python,
                "-m",
                "service",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                "1",
            ],
            logs / "web.log",
            env,
        ),
    ]
    stopping: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        stopping.append(signum)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        for program in programs:
            say(f"codeblanks dev: starting {program.name} (log: {program.log})")
            program.start()
            ready = _wait_ready(program, base, redis_port, stopping)
            if not ready:
                say(f"codeblanks dev: {program.name} did not start; see {program.log}")
                return 1
        say(_banner(base, logs, env["CODEBLANKS_METRICS_TOKEN"]))
        started = time.monotonic()
        while not stopping:
            dead = [p for p in programs if not p.alive()]
            if dead:
                say(f"codeblanks dev: {dead[0].name} stopped unexpectedly; see {dead[0].log}")
                return 1
            if stop_after_s is not None and time.monotonic() - started > stop_after_s:
                break
            time.sleep(0.2)
        say("codeblanks dev: stopping")
        return 0
    finally:
        for program in reversed(programs):
            program.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        say("codeblanks dev: stopped")


def _wait_ready(program: Program, base: str, redis_port: int, stopping: list[int]) -> bool:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not stopping:
        if not program.alive():
            return False
        if program.name == "redis" and _redis_answers(redis_port):
            return True
        if program.name.endswith("worker") and "ready." in program.log.read_text(errors="replace"):
            return True
        # the web app registers its demo LMS by dynamic registration once it serves: the
        # demo is ready when it lists its links
        if program.name == "web" and _http_ok(base + "/healthz") and _demo_links(base):
            return True
        time.sleep(0.2)
    return False


def _banner(base: str, logs: Path, metrics_token: str) -> str:
    return "\n".join(
        [
            "",
            "codeblanks dev is running.",
            f"  Demo LMS:  {base}/demo/   launch a lesson as a student or as the teacher",
            f"  Tool:      {base}/        health {base}/readyz",
            f'  Metrics:   curl -H "Authorization: Bearer {metrics_token}" {base}/metrics',
            f"  LTI URLs:  {base}/lti/login  {base}/lti/launch  {base}/lti/jwks  "
            f"{base}/lti/register  {base}/lti/config.json",
            f"  Logs:      {logs}/",
            "Press Ctrl-C to stop.",
            "",
        ]
    )


def _redis_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:  # noqa: S310  our own URL
            return bool(response.status == 200)
    except OSError:
        return False


def _demo_links(base: str) -> bool:
    try:
        with urllib.request.urlopen(base + "/demo/admin/links", timeout=1) as response:  # noqa: S310
            return bool(json.loads(response.read()))
    except (OSError, ValueError):
        return False


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _signal_group(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)
    except ProcessLookupError:
        pass
