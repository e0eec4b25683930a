"""End to end: HTTP POST -> Redis -> Celery worker -> sandbox -> grade saved, on this machine.

Usage: .venv/bin/python benchmarks/pipeline.py [--burst N] [--rounds R] [--seconds S]
                                              [--backend B] [--concurrency C] [--json]
Starts its own redis-server, gunicorn (`codeblanks serve`) and a worker (`codeblanks worker`,
one pool process per core) on a SQLite store in a temp dir, and stops them at the end.
R rounds (default 5), back to back:
  1. sandbox only: the same grading (grade_source) straight into the sandbox, one run per core
  2. maximum: a burst of N POSTs as fast as they go; graded per second, first POST to last save
  1. sandbox only again, and so on
Each round's share is its burst over the mean of the sandbox-only figures just before and
just after it (the machine's speed drifts); the figures are the medians over the rounds. Then:
  3. half load: POSTs at half the median maximum for S seconds; latency from POST to grade saved
With --json, ends with one JSON line: {"submitted", "graded", "lost", "duplicated",
"throughput_per_s", "sandbox_only_per_s", "share", "shares", "p50_ms", "p95_ms"}.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import func, select  # noqa: E402

from core.lessons import load_lesson  # noqa: E402
from core.runs import RunStatus  # noqa: E402
from core.verdicts import grade_source  # noqa: E402
from service.settings import Settings  # noqa: E402
from service.store.models import Submission, SubmissionStatus, User  # noqa: E402
from service.web import (
    create_app,  # noqa: E402
    extensions,
)
from testkit.factories import SCALED, place, settings_in  # noqa: E402
from testkit.pipeline import SOLUTION, Pipeline, fastest_sandbox  # noqa: E402
from testkit.servers import REPO, RedisServer, WorkerProcess, free_port  # noqa: E402
from testkit.sessions import launched  # noqa: E402
from workers.sandbox import make_sandbox  # noqa: E402

CORES = os.cpu_count() or 1


def sandbox_only(backend: str, settings: Settings, total: int) -> tuple[float, float]:
    """Return gradings per second straight into the sandbox, one concurrent run per core, and
    the machine's CPU ms per grading."""
    lesson = load_lesson(REPO / "lessons" / SCALED)
    assert lesson.exercise is not None
    exercise = lesson.exercise
    sandbox = make_sandbox(backend, settings.runtime_dir, settings.runner_image)

    def grade(_: int) -> None:
        verdict = grade_source(exercise, SOLUTION.encode(), sandbox)
        assert verdict.status is RunStatus.PASSED, verdict.feedback

    with ThreadPoolExecutor(CORES) as pool:
        list(pool.map(grade, range(CORES * 2)))  # warm up (a warm pool starts its zygotes)
        started, machine_before = time.perf_counter(), machine_cpu()
        list(pool.map(grade, range(total)))
        elapsed, machine_after = time.perf_counter() - started, machine_cpu()
    getattr(sandbox, "close", lambda: None)()
    return total / elapsed, (machine_after[0] - machine_before[0]) * 1000 / total


class Client:
    """POSTs submissions over HTTP/1.1 keep-alive, one connection per thread, as many students.

    The requests are prebuilt bytes on a plain socket: the load generator shares the machine
    with what it measures, so it should take as little of it as it can.
    """

    def __init__(self, port: int, placement_id: int, cookies: list[str]) -> None:
        self.port = port
        self.local = threading.local()
        body = json.dumps({"source": SOLUTION}).encode()
        self.requests = [
            (
                f"POST /api/placements/{placement_id}/submissions HTTP/1.1\r\n"
                f"Host: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                f"Cookie: {cookie}\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode()
            + body
            for cookie in cookies
        ]

    def post(self, n: int) -> tuple[int, float]:
        """Submit as student n; return (submission id, wall time the POST started)."""
        if not hasattr(self.local, "reader"):
            connection = socket.create_connection(("127.0.0.1", self.port))
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.local.connection = connection
            self.local.reader = connection.makefile("rb")
        started = time.time()
        self.local.connection.sendall(self.requests[n % len(self.requests)])
        reader = self.local.reader
        status = reader.readline()
        length = 0
        while (line := reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        body = json.loads(reader.read(length))
        assert status.split()[1] == b"202", (status, body)
        return int(body["id"]), started


def wait_graded(app: object, ids: list[int], timeout: float) -> dict[int, tuple[float, int]]:
    """Wait for the submissions' grades; return {id: (graded at, gradings)} of those graded."""
    store = extensions.store(app)  # type: ignore[attr-defined]
    deadline = time.monotonic() + timeout
    wanted = set(ids)
    in_range = Submission.id.between(min(ids), max(ids))
    graded = Submission.status == SubmissionStatus.GRADED
    counting = select(func.count()).select_from(Submission).where(in_range, graded)
    # a cheap count while waiting (the polling shares the machine too), then one full read
    while True:
        with store.session() as session:
            done = session.scalar(counting)
        if done >= len(ids) or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    with store.session() as session:
        rows = session.execute(
            select(Submission.id, Submission.graded_at, Submission.gradings).where(in_range, graded)
        ).all()
    return {sid: (at.timestamp(), gradings) for sid, at, gradings in rows if sid in wanted}


def cpu_s(pids: list[int]) -> tuple[float, float]:
    """Return the CPU seconds the processes used themselves, and their reaped children used."""
    tick = os.sysconf("SC_CLK_TCK")
    own = reaped = 0.0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        own += (int(stat[11]) + int(stat[12])) / tick
        reaped += (int(stat[13]) + int(stat[14])) / tick
    return own, reaped


def machine_cpu() -> tuple[float, float]:
    """Return the machine's busy and idle CPU seconds since boot (all cores)."""
    tick = os.sysconf("SC_CLK_TCK")
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    return (sum(values[:8]) - idle) / tick, idle / tick


def percentile(values: list[float], share: float) -> float:
    """Return the value below which `share` of the values fall."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


@dataclass
class Round:
    """One round: the sandbox alone, then a burst through the whole pipeline, back to back."""

    sandbox_only: float  # gradings per second, the mean of the runs just before and after
    throughput: float  # graded per second, first POST to last save
    busy: float  # share of the machine's CPU in use during the burst
    machine_ms: float  # the machine's CPU per submission in the burst
    sandbox_machine_ms: float  # and per grading in sandbox only (the mean, like sandbox_only)
    cpu_ms: dict[str, tuple[float, float]]  # per submission: (own, reaped) by process group
    graded: dict[int, tuple[float, int]]
    submitted: int

    @property
    def share(self) -> float:
        """Return end to end as a share of sandbox only."""
        return self.throughput / self.sandbox_only


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--burst", type=int, default=300, help="submissions in each burst")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of sandbox only + burst")
    parser.add_argument("--seconds", type=float, default=20, help="length of the half load")
    parser.add_argument("--backend", help="sandbox backend (default: the fastest here)")
    parser.add_argument("--concurrency", type=int, default=CORES, help="worker pool processes")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    args = parser.parse_args()

    temp = Path(tempfile.mkdtemp(prefix="codeblanks-bench-"))
    backend = args.backend or fastest_sandbox(Settings.from_env())
    only_runs = max(args.burst // 2, 40)
    redis = RedisServer(temp)
    redis.start()
    settings = settings_in(
        temp,
        "bench.db",
        redis_url=redis.url,
        sandbox=backend,
        submit_rate=1_000_000,
    )
    env = Pipeline.env_of(settings)
    app = create_app({"SETTINGS": settings})
    store = extensions.store(app)
    placed = place(store)
    signer = app.session_interface.get_signing_serializer(app)  # type: ignore[attr-defined]
    cookies = []
    students = args.burst * args.rounds + int(args.seconds * 200) + 100
    with store.session() as session:  # a student per submission: no grade sync coalesces
        users = [User(platform_id=placed.platform_id, sub=f"bench-{n}") for n in range(students)]
        session.add_all(users)
        session.flush()
        for user in users:  # the session each one's launch leaves (service.web.auth)
            session_data = launched(app, user.id, [placed.placement_id])
            cookies.append(f"session={signer.dumps(session_data)}")

    port = free_port()
    web_log = open(temp / "web.log", "ab")  # noqa: SIM115  the child keeps it
    web = subprocess.Popen(
        [sys.executable, "-m", "service", "serve", "--port", str(port), "--workers", "1",
         "--threads", "8"],
        env={**os.environ, **env}, stdout=web_log, stderr=subprocess.STDOUT, cwd=REPO,
        start_new_session=True,
    )  # fmt: skip
    worker = WorkerProcess(env, temp / "worker.log")
    worker.start(args.concurrency)
    client = Client(port, placed.placement_id, cookies)
    students_used = iter(range(len(cookies)))
    rounds: list[Round] = []
    print(f"sandbox {backend}, {CORES} cores, {args.rounds} rounds of {args.burst}", flush=True)
    print(f"\n{'round':<7}{'sandbox only/s':>16}{'end to end/s':>14}{'share':>8}{'busy':>7}")
    try:
        worker.wait_ready()
        _wait_http(port)
        warm_up = [client.post(next(students_used)) for _ in range(args.concurrency * 2)]
        wait_graded(app, [sid for sid, _ in warm_up], timeout=120)
        assert worker.process is not None
        processes = {
            "web": [web.pid, *_children(web.pid)],
            "worker": [worker.process.pid],
            "pool": worker.pool_pids(),
            "redis": [redis.process.pid] if redis.process else [],
            "client": [os.getpid()],  # this script: the students' POSTs, and the polling
        }
        only_before, cpu_before = sandbox_only(backend, Settings.from_env(), only_runs)
        for number in range(1, args.rounds + 1):
            batch = [next(students_used) for _ in range(args.burst)]
            last = _burst(app, client, processes, batch)
            # the sandbox just before and just after: the machine's drift cancels out
            only_after, cpu_after = sandbox_only(backend, Settings.from_env(), only_runs)
            last.sandbox_only = (only_before + only_after) / 2
            last.sandbox_machine_ms = (cpu_before + cpu_after) / 2
            only_before, cpu_before = only_after, cpu_after
            rounds.append(last)
            print(
                f"{number:<7}{last.sandbox_only:>16.1f}{last.throughput:>14.1f}"
                f"{last.share:>8.0%}{last.busy:>7.0%}",
                flush=True,
            )
        rate = statistics.median(r.throughput for r in rounds) / 2
        print(f"\nhalf load: {rate:.1f}/s for {args.seconds:g} s ...", flush=True)
        steady = _steady(client, students_used, rate, args.seconds)
        settled = wait_graded(app, [sid for sid, _ in steady], timeout=600)
        latencies = [(settled[sid][0] - at) * 1000 for sid, at in steady if sid in settled]
    finally:
        worker.stop()
        web.terminate()
        web.wait(20)
        redis.stop()
        store.dispose()

    everything = dict(settled)
    for r in rounds:
        everything.update(r.graded)
    submitted = sum(r.submitted for r in rounds) + len(steady)
    share = statistics.median(r.share for r in rounds)
    result = {
        "submitted": submitted,
        "graded": len(everything),
        "lost": submitted - len(everything),
        "duplicated": sum(1 for _, gradings in everything.values() if gradings > 1),
        "throughput_per_s": round(statistics.median(r.throughput for r in rounds), 1),
        "sandbox_only_per_s": round(statistics.median(r.sandbox_only for r in rounds), 1),
        "share": round(share, 3),
        "shares": [round(r.share, 3) for r in rounds],
        "p50_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(percentile(latencies, 0.95), 1),
    }
    print(f"\n{'figure (median of the rounds)':<34}{'value':>10}")
    print(f"{'sandbox only (gradings/s)':<34}{result['sandbox_only_per_s']:>10}")
    print(f"{'end to end, maximum (graded/s)':<34}{result['throughput_per_s']:>10}")
    print(f"{'  share of sandbox only':<34}{share:>10.0%}")
    print(f"{'latency at half load, p50 (ms)':<34}{result['p50_ms']:>10}")
    print(f"{'latency at half load, p95 (ms)':<34}{result['p95_ms']:>10}")
    cost = {
        name: [statistics.mean(r.cpu_ms[name][i] for r in rounds) for i in (0, 1)]
        for name in processes
    }
    print(
        f"CPU ms per submission in the bursts: web {cost['web'][0]:.1f}, worker consumer "
        f"{cost['worker'][0]:.1f}, pool processes {cost['pool'][0]:.1f} (+ "
        f"{cost['pool'][1]:.1f} in sandboxes they reaped); redis-server {cost['redis'][0]:.1f}, "
        f"this client {cost['client'][0]:.1f}; the machine was "
        f"{statistics.mean(r.busy for r in rounds):.0%} busy"
    )
    pipeline_ms = statistics.median(r.machine_ms for r in rounds)
    alone_ms = statistics.median(r.sandbox_machine_ms for r in rounds)
    print(
        f"the machine's CPU per submission: {pipeline_ms:.1f} ms end to end, {alone_ms:.1f} ms "
        f"in sandbox only ({alone_ms / pipeline_ms:.0%}; steadier than the throughputs)"
    )
    print(
        f"submitted {submitted}, graded {result['graded']}, lost {result['lost']}, "
        f"duplicated {result['duplicated']}; sandbox {backend}; logs in {temp}"
    )
    if args.json:
        print(json.dumps(result))


def _burst(
    app: object,
    client: Client,
    processes: dict[str, list[int]],
    students: list[int],
) -> Round:
    """POST for every student as fast as it goes; wait for the grades; return the round."""
    before = {name: cpu_s(pids) for name, pids in processes.items()}
    machine_before = machine_cpu()
    with ThreadPoolExecutor(8) as pool:
        burst = list(pool.map(client.post, students))
    saved = wait_graded(app, [sid for sid, _ in burst], timeout=600)
    after = {name: cpu_s(pids) for name, pids in processes.items()}
    busy, idle = (a - b for a, b in zip(machine_cpu(), machine_before, strict=True))
    first_post = min(at for _, at in burst)
    last_save = max((at for at, _ in saved.values()), default=first_post)
    cpu_ms = {
        name: (
            (after[name][0] - before[name][0]) * 1000 / len(burst),
            (after[name][1] - before[name][1]) * 1000 / len(burst),
        )
        for name in processes
    }
    return Round(
        sandbox_only=0.0,  # measured around it by the caller
        throughput=len(saved) / (last_save - first_post),
        busy=busy / (busy + idle),
        machine_ms=busy * 1000 / len(burst),
        sandbox_machine_ms=0.0,
        cpu_ms=cpu_ms,
        graded=saved,
        submitted=len(burst),
    )


def _steady(
    client: Client, students: Iterator[int], rate: float, seconds: float
) -> list[tuple[int, float]]:
    """POST at a fixed rate (open loop: a slow answer does not delay the next POST)."""
    total = max(int(rate * seconds), 1)
    started = time.monotonic()
    futures = []
    with ThreadPoolExecutor(16) as pool:
        for n in range(total):
            time.sleep(max(0.0, started + n / rate - time.monotonic()))
            futures.append(pool.submit(client.post, next(students)))
    return [future.result() for future in futures]


def _children(pid: int) -> list[int]:
    done = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(child) for child in done.stdout.split()]


def _wait_http(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError("the web app did not come up")


if __name__ == "__main__":
    main()
