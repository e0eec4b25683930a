"""Real servers for tests: redis-server, a private PostgreSQL cluster, Celery workers.

Each runs on a free loopback port with its files in a temp dir, and is stopped after. A
missing server program fails the test with what to install: these tests never skip.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest

from testkit.waits import wait_for

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.2)
        return probe.connect_ex(("127.0.0.1", port)) == 0


class RedisServer:
    """A private redis-server, without persistence (a restart loses every message)."""

    def __init__(self, directory: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is missing: run scripts/setup.sh (apt package redis-server)")
        self.binary = binary
        self.directory = directory
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the server and wait until it takes connections."""
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1"]
        args += ["--save", "", "--appendonly", "no", "--dir", str(self.directory)]
        log = open(self.directory / "redis.log", "ab")  # noqa: SIM115  the child keeps it
        self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        wait_for(lambda: _answers(self.port), "redis-server taking connections", 10, every=0.05)

    def stop(self) -> None:
        """Stop the server at once (SIGKILL: whatever it held is gone)."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def restart(self) -> None:
        """Kill and start again on the same port, empty."""
        self.stop()
        self.start()


def _postgres_bin(name: str) -> str:
    found = shutil.which(name) or next(
        iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None
    )
    if found is None:
        pytest.fail(f"{name} is missing: run scripts/setup.sh (apt package postgresql)")
    return found


class PostgresCluster:
    """A private PostgreSQL cluster run by the postgres user in a temp dir, on a free port."""

    def __init__(self) -> None:
        self.initdb = _postgres_bin("initdb")
        self.pg_ctl = _postgres_bin("pg_ctl")
        if shutil.which("runuser") is None:
            pytest.fail("runuser is missing: apt-get install util-linux")
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            pytest.fail("there is no postgres user: run scripts/setup.sh (apt package postgresql)")
        self.directory = Path(tempfile.mkdtemp(prefix="codeblanks-pg-"))
        shutil.chown(self.directory, "postgres", "postgres")
        self.data = self.directory / "data"
        self.port = free_port()
        self._databases = 0

    def _as_postgres(self, *args: str) -> None:
        done = subprocess.run(
            ["runuser", "-u", "postgres", "--", *args], capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {done.stdout}{done.stderr}")

    def init(self) -> None:
        """Create the cluster (trust authentication on loopback only)."""
        self._as_postgres(
            self.initdb, "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8"
        )

    def start(self) -> None:
        """Start the server and wait until it takes connections."""
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 "
        options += "-c fsync=off -c synchronous_commit=off -c max_connections=200"
        self._as_postgres(
            self.pg_ctl, "-D", str(self.data), "-l", str(self.directory / "log"),
            "-o", options, "-w", "start",
        )  # fmt: skip

    def stop(self) -> None:
        """Stop the server, ending every connection (fast shutdown)."""
        self._as_postgres(self.pg_ctl, "-D", str(self.data), "-m", "fast", "-w", "stop")

    def url(self, database: str = "postgres") -> str:
        """Return the SQLAlchemy URL of one database of the cluster."""
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """Create an empty database and return its URL."""
        import psycopg

        self._databases += 1
        name = f"test_{os.getpid()}_{self._databases}"
        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user=postgres", autocommit=True
        ) as c:
            c.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def remove(self) -> None:
        """Stop the server if it runs, and delete the cluster."""
        subprocess.run(
            ["runuser", "-u", "postgres", "--", self.pg_ctl, "-D", str(self.data), "-m",
             "immediate", "stop"],
            capture_output=True,
        )  # fmt: skip
        shutil.rmtree(self.directory, ignore_errors=True)


class WorkerProcess:
    """`codeblanks worker` as a child process in a session of its own."""

    def __init__(self, env: Mapping[str, str], log: Path, queues: str = "grade,sync") -> None:
        self.env = env
        self.log = log
        self.queues = queues
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, concurrency: int = 2) -> None:
        """Start the worker; `wait_ready` tells when it consumes."""
        args = [sys.executable, "-m", "service", "worker", "--queues", self.queues]
        args += ["--concurrency", str(concurrency), "--loglevel", "info"]
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                args,
                env={**os.environ, **self.env},
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=REPO,
                start_new_session=True,  # its pool and sandboxes die with it in kill()
            )

    def wait_ready(self, timeout: float = 60) -> None:
        """Wait for the worker's 'ready' line in its log."""
        assert self.process is not None

        def ready() -> bool:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"the worker exited: {self.log.read_text()[-3000:]}")
            return self.log.exists() and " ready." in self.log.read_text()

        wait_for(ready, "the worker's ready line", timeout, every=0.05)

    def errors(self) -> list[str]:
        """Return the log's error records and tracebacks (none, for a worker that did well)."""
        if not self.log.exists():
            return []
        return [
            line
            for line in self.log.read_text().splitlines()
            if '"level": "error"' in line or line.startswith("Traceback")
        ]

    def pool_pids(self) -> list[int]:
        """Return the pids of the worker's pool processes."""
        assert self.process is not None
        done = subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(self.process.pid)], capture_output=True, text=True
        )
        return [int(pid) for pid in done.stdout.split()]

    def kill(self) -> None:
        """SIGKILL the worker and everything in its session, at once."""
        if self.process is not None:
            kill_session(self.process)
            self.process = None

    def stop(self, timeout: float = 20) -> None:
        """Shut down warmly (SIGTERM: finish the runs in hand), then kill what is left."""
        if self.process is None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


def kill_session(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL a process started with start_new_session, and all of its session; reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
