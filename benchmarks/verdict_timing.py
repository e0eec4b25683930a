"""How much a verdict's arrival time says of its hidden cases: the jitter it hides a delay in.

Usage: .venv/bin/python benchmarks/verdict_timing.py [--rounds N] [--delays MS,...]
                                                     [--backend B] [--json]
Starts its own redis-server and one worker (`codeblanks worker`, one pool process, the warm
pool by default) on a SQLite store in a temp dir, the app in this process. It submits, one at
a time, the sample solution of expert/scaled-dot-product (two hidden cases) with a sleep of D ms
in each hidden case (the program tells them by the expression it reads), D taken in turn from
--delays, N times each, and reads each verdict's `graded_at - created_at` from the student's
own JSON API (the stamps every student sees; polling sees no more). For D = 0 that spread is
the noise a delay must stand out of; a delay of w = the noise's p99 - p1 is told apart from
the next one most of the time, so a hidden case's time limit L carries about log2(L / w + 1)
bits a submission, and each hidden case one more (whether it passed); printed with what the
submission rate limit lets through in an hour. With --json, ends with one JSON line:
{"rounds", "noise_ms": {"median", "p1", "p99", "stdev"}, "shift_ms": {D: median - median
at 0}, "timing_bits", "hidden_cases", "bits_per_submission", "bits_per_hour"}.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.lessons import load_lesson  # noqa: E402
from service.settings import Settings  # noqa: E402
from testkit.factories import SCALED  # noqa: E402
from testkit.pipeline import SOLUTION, Pipeline  # noqa: E402
from testkit.servers import REPO, RedisServer  # noqa: E402

SLEEPER = """import json as _json, os as _os, time as _time

_CONFIG = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "__codeblanks_case__.json")
if _os.path.exists(_CONFIG):
    with open(_CONFIG) as _file:
        if _json.load(_file).get("expr") not in {visible!r}:
            _time.sleep({delay_s!r})

"""


def sources(delays_ms: list[int]) -> dict[int, str]:
    """Return, per delay, the sample solution sleeping that long in each hidden case."""
    lesson = load_lesson(REPO / "lessons" / SCALED)
    assert lesson.exercise is not None
    visible = [case.expr for case in lesson.exercise.cases if case.expr and not case.hidden]
    return {
        delay: SLEEPER.format(visible=visible, delay_s=delay / 1000) + SOLUTION
        for delay in delays_ms
    }


def arrival_ms(pipeline: Pipeline, source: str) -> float:
    """Submit `source` and wait for its verdict; return graded_at - created_at, as shown."""
    submission_id = pipeline.submit(source)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        state = pipeline.client.get(f"/api/submissions/{submission_id}").get_json()
        if state["status"] == "graded":
            created = datetime.fromisoformat(state["created_at"])
            graded = datetime.fromisoformat(state["graded_at"])
            return (graded - created).total_seconds() * 1000
        time.sleep(0.02)
    raise TimeoutError(f"submission {submission_id} was not graded in 60 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="submissions per delay")
    parser.add_argument("--delays", default="0,20,50,100,200", help="delays in ms, comma-separated")
    parser.add_argument("--backend", default="warm", help="the worker's sandbox backend")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    args = parser.parse_args()
    delays = [int(d) for d in args.delays.split(",")]
    assert 0 in delays, "the noise is measured at delay 0"

    temp = Path(tempfile.mkdtemp(prefix="codeblanks-bench-timing-"))
    redis = RedisServer(temp)
    redis.start()
    pipeline = Pipeline(temp, redis, f"sqlite:///{temp / 'timing.db'}", sandbox=args.backend)
    measured: dict[int, list[float]] = {delay: [] for delay in delays}
    try:
        pipeline.start_worker(concurrency=1)
        pipeline.student()
        code = sources(delays)
        for _ in range(3):  # warm up: the pool's zygotes, the store's first queries
            arrival_ms(pipeline, code[0])
        for _ in range(args.rounds):
            for delay in delays:  # interleaved: the machine's drift touches every delay alike
                measured[delay].append(arrival_ms(pipeline, code[delay]))
    finally:
        pipeline.stop()
        redis.stop()
        shutil.rmtree(temp, ignore_errors=True)  # the figures are all it leaves

    noise = sorted(measured[0])
    p1, p99 = _quantile(noise, 0.01), _quantile(noise, 0.99)
    median = statistics.median(noise)
    width = max(p99 - p1, 1.0)
    lesson = load_lesson(REPO / "lessons" / SCALED)
    assert lesson.exercise is not None
    time_limit_ms = lesson.exercise.limits.time_s * 1000
    timing = math.log2(time_limit_ms / width + 1)
    hidden = sum(case.hidden for case in lesson.exercise.cases)  # a bit each: pass or fail
    bits = timing + hidden
    settings = Settings.from_env()
    per_hour = settings.submit_rate * 3600 / settings.submit_window_s
    result = {
        "rounds": args.rounds,
        "noise_ms": {
            "median": round(median, 1),
            "p1": round(p1, 1),
            "p99": round(p99, 1),
            "stdev": round(statistics.stdev(noise), 1),
        },
        "shift_ms": {
            str(d): round(statistics.median(measured[d]) - median, 1) for d in delays if d
        },
        "timing_bits": round(timing, 2),
        "hidden_cases": hidden,
        "bits_per_submission": round(bits, 2),
        "bits_per_hour": round(bits * per_hour),
    }
    print(f"verdict arrival (graded_at - created_at), {args.rounds} submissions per delay, "
          f"backend {args.backend}")  # fmt: skip
    print(f"\n{'delay in hidden cases':<24}{'median ms':>10}{'p1 ms':>8}{'p99 ms':>8}"
          f"{'shift ms':>10}")  # fmt: skip
    for delay in delays:
        row = sorted(measured[delay])
        shift = statistics.median(row) - median
        print(f"{f'{delay} ms':<24}{statistics.median(row):>10.1f}{_quantile(row, 0.01):>8.1f}"
              f"{_quantile(row, 0.99):>8.1f}{shift:>10.1f}")  # fmt: skip
    print(f"\nnoise p99 - p1: {width:.1f} ms; a hidden case's time limit: {time_limit_ms:.0f} ms;"
          f" about {timing:.1f} bits a submission in its time and {hidden} in its hidden cases'"
          f" pass or fail; {per_hour:.0f} submissions an hour at the rate limit"
          f" ({settings.submit_rate} per {settings.submit_window_s} s): about"
          f" {bits * per_hour:.0f} bits an hour")  # fmt: skip
    if args.json:
        print(json.dumps(result))


def _quantile(ordered: list[float], q: float) -> float:
    """Return the q-quantile of a sorted list (nearest rank)."""
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


if __name__ == "__main__":
    main()
