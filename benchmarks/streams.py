"""/healthz latency while N live status streams (Server-Sent Events) are open.

Usage: .venv/bin/python benchmarks/streams.py [--streams N] [--per-student K] [--json]
Starts `codeblanks serve` with its defaults (gunicorn, threaded, 2 processes x 16 threads) on a
SQLite store in a temp dir, with one queued submission per student that nobody grades, and
stops it at the end. Then:
  1. idle: /healthz, one request after another, with no stream open
  2. streams: N streams (K per student) sent at once, each read to its first event; meanwhile
     and until the streams that were let in end, /healthz one request after another
Prints the latencies (median, p95, max; no answer in 30 s counts as 30 s) and how many streams
were let in (`live`), answered at once with `busy`, or neither (`other`: no answer within 30 s).
With --json, ends with one JSON line: {"streams", "live", "busy", "other", "server_errors",
"opened_s", "idle": {"median_ms", "p95_ms", "max_ms", "probes"}, "open": {...}}.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from testkit.webserver import Answer, Stream, WebServer, seed  # noqa: E402

# the longest wait for one answer, counted as that long: the code before the caps kept
# /healthz waiting for minutes, until some stream's 120 s ended
TIMEOUT_S = 30.0


def probe(server: WebServer, until: threading.Event, at_least: int) -> list[float]:
    """Return /healthz latencies in ms, one request after another, until `until` is set."""
    found: list[float] = []
    while not until.is_set() or len(found) < at_least:
        started = time.perf_counter()
        try:
            answer = server.get("/healthz", TIMEOUT_S)
            if answer.status != 200:
                raise RuntimeError(f"/healthz answered {answer.status}")
        except TimeoutError:
            pass  # its latency is TIMEOUT_S: no answer in that long
        found.append((time.perf_counter() - started) * 1000)
        time.sleep(0.02)
    return found


def read(streams: list[Stream], name: str) -> list[Answer]:
    """Read each stream up to an event, or to its end, all within TIMEOUT_S; what is not there
    by then is an empty answer."""
    deadline = time.monotonic() + TIMEOUT_S
    answers = []
    for stream in streams:
        try:
            answers.append(stream.until(name, max(0.01, deadline - time.monotonic())))
        except TimeoutError:
            answers.append(Answer(0))
    return answers


def figures(latencies: list[float]) -> dict[str, float]:
    """Return the median, 95th percentile and maximum of latencies in ms."""
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "median_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(p95, 1),
        "max_ms": round(ordered[-1], 1),
        "probes": len(ordered),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--streams", type=int, default=100, help="streams opened at once")
    parser.add_argument("--per-student", type=int, default=2, help="streams per student")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    args = parser.parse_args()

    temp = Path(tempfile.mkdtemp(prefix="codeblanks-bench-streams-"))
    students = -(-args.streams // args.per_student)
    env, seeded = seed(temp, students)
    server = WebServer(env, temp / "web.log").start()
    streams: list[Stream] = []
    try:
        idle = threading.Event()
        idle.set()
        idle_ms = probe(server, idle, 50)

        done = threading.Event()
        during: list[float] = []
        prober = threading.Thread(target=lambda: during.extend(probe(server, done, 20)))
        prober.start()
        started = time.perf_counter()
        for n in range(args.streams):
            student = seeded[n // args.per_student]
            streams.append(Stream(server.port, student.events, student.token, TIMEOUT_S))
        firsts = read(streams, "status")
        opened_s = time.perf_counter() - started
        answers = read(streams, "\0")  # the live ones end by themselves
        done.set()
        prober.join()
    finally:
        for stream in streams:
            stream.close()
        server.stop()

    live = sum(1 for a in answers if a.names()[-1:] == ["timeout"])
    busy = sum(1 for a in answers if a.names()[-1:] == ["busy"])
    quiet, loaded = figures(idle_ms), figures(during)
    result = {
        "streams": args.streams,
        "live": live,
        "busy": busy,
        "other": args.streams - live - busy,
        "server_errors": sum(1 for a in firsts if a.status >= 500),
        "opened_s": round(opened_s, 3),
        "idle": quiet,
        "open": loaded,
    }
    print(f"{args.streams} streams, {args.per_student} per student: {live} live, {busy} busy, "
          f"{result['other']} other, {result['server_errors']} 5xx; all answered in "
          f"{opened_s:.2f} s")  # fmt: skip
    print(f"\n{'/healthz':<22}{'median ms':>10}{'p95 ms':>9}{'max ms':>9}{'probes':>8}")
    for name, row in (("idle", quiet), ("with streams open", loaded)):
        print(f"{name:<22}{row['median_ms']:>10}{row['p95_ms']:>9}{row['max_ms']:>9}"
              f"{row['probes']:>8}")  # fmt: skip
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
