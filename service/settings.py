"""Configuration, read once from defaults plus CODEBLANKS_* environment variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path

PREFIX = "CODEBLANKS_"
_REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Settings:
    """Every setting of every command; each field is CODEBLANKS_<FIELD NAME IN CAPITALS>."""

    instance_dir: Path = Path("instance")
    lessons_dir: Path = _REPO / "lessons"
    runtime_dir: Path = Path("/var/lib/codeblanks/runtime/bookworm")
    sandbox: str = "warm"  # forked from warm zygotes; "bwrap" runs cold (and is its fallback)
    base_url: str = "http://127.0.0.1:5000"
    database_url: str = ""  # empty: SQLite in the instance dir (the embedded setup)
    redis_url: str = ""  # empty: redis://127.0.0.1:6379/0
    # the submission pipeline (see ARCHITECTURE.md "How a submission flows")
    submit_rate: int = 10  # submissions a student may make per submit_window_s
    submit_window_s: int = 60
    # practice runs (the Run button): no attempt, no score, so a rate of their own, and kept
    # a day (the sweep deletes older ones); one in flight per student whatever the rate
    run_rate: int = 30  # practice runs a student may start per run_window_s
    run_window_s: int = 60
    run_kept_s: int = 86_400
    # live status streams (Server-Sent Events) are short and capped, so that no number of
    # open pages can hold every web thread (see service/web/student/streams.py). A stream holds a
    # gthread thread while open: `codeblanks serve` runs 2 processes x 16 threads, and at
    # most half of each process's threads stream; the rest serve pages, submits and health
    stream_max_s: int = 10  # a thread is held at most this long; the browser then reconnects
    streams_per_session: int = 2  # one user's open streams in a process: a page and one window
    streams_per_process: int = 8  # open streams in one web process: half its 16 threads
    # Recovery from a dead worker (docs/operations.md "When a worker dies"): a grading renews
    # its lease every quarter of it while its run is alive, so a dead worker's lease lapses
    # within lease_s, and the next sweep (every sweep_interval_s) enqueues it again, first
    lease_s: int = 8
    queued_deadline_s: int = 300  # a submission queued this long is enqueued again
    grade_attempts: int = 3  # grader failures before a submission ends as an `error` grade
    sync_attempts: int = 8  # LMS posts before a grade sync is marked failed
    sweep_interval_s: int = 2
    # a message a worker took and never acknowledged (it died) is delivered again after this
    # long; a live worker's waits in the broker are kept under half of it (longer ones hop),
    # so the broker never hands a message of a live worker to another but while it runs
    visibility_timeout_s: int = 10
    worker_concurrency: int = 0  # 0: one sandbox run per core
    # pool processes of a worker on the `sync` queue alone (`codeblanks worker --queues sync`),
    # each one post at a time: the posts in flight to one LMS. A post mostly waits for the LMS
    # (28 of 50 ms per post to the demo LMS, more to a real one), so more than the cores; and
    # few enough for what an LMS takes from one client (Canvas throttles with 403s)
    sync_concurrency: int = 4
    demo: int = 0  # 1: mount the demo LMS at /demo, registered with the tool (codeblanks dev)
    log_format: str = "json"  # one JSON object per line; "text" for plain lines
    admin_password: str = ""  # turns on /admin/platforms (HTTP Basic, user "admin")
    metrics_token: str = ""  # /metrics answers "Authorization: Bearer <token>"; off when empty
    # outbound requests (registration, key sets, tokens, AGS, NRPS) reach public addresses
    # only, unless listed here: hosts, host:port pairs and CIDR ranges, comma-separated
    outbound_allow: str = ""
    outbound_deadline_s: int = 10  # the whole of one outbound request, redirects included
    # the reverse proxy in front of `codeblanks serve`: its X-Forwarded-For and -Proto are
    # believed, anyone else's dropped (service/web/proxies.py); addresses and CIDR ranges
    trusted_proxies: str = "127.0.0.1,::1"
    # the compose worker's user namespace (workers/sandbox/userns_entry.py): slot uid u inside
    # is host uid u + this, apart from the uids of a codeblanks running on the host itself
    slot_uid_shift: int = 1_000_000
    # the docker backend's image (runtime/build-image.sh builds it from runtime_dir's tree)
    runner_image: str = "codeblanks-runner:latest"
    # 1: the warm zygotes import matplotlib ahead: a run that draws takes ~90 ms instead of
    # ~310, every other run ~1.5 ms more, each zygote 28 MB more (workers/sandbox/zygote)
    warm_drawing: int = 0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Return the defaults overridden by CODEBLANKS_* variables of `environ`."""
        environ = os.environ if environ is None else environ
        changes: dict[str, object] = {}
        for field in fields(cls):
            raw = environ.get(PREFIX + field.name.upper())
            if raw is None or raw == "":
                continue
            try:
                changes[field.name] = _PARSE.get(str(field.type), str)(raw)
            except ValueError:
                raise ValueError(f"{PREFIX}{field.name.upper()}: {raw!r} is not a number") from None
        return replace(cls(), **changes)  # type: ignore[arg-type]

    @property
    def database(self) -> str:
        """Return the SQLAlchemy URL of the store (SQLite in the instance dir by default)."""
        return self.database_url or f"sqlite:///{self.instance_dir.resolve() / 'codeblanks.db'}"

    @property
    def broker(self) -> str:
        """Return the Redis URL that carries the queues."""
        return self.redis_url or "redis://127.0.0.1:6379/0"


_PARSE: dict[str, type] = {"Path": Path, "int": int}
