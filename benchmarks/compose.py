"""End to end through the compose deployment: the demo stack in containers, a burst of
submissions through its real API, graded by its worker(s) on the warm pool.

Usage: .venv/bin/python benchmarks/compose.py [--burst N] [--rounds R] [--workers W] [--json]
Needs the images (docker/build.sh) and a Docker engine; brings up its own project (the demo
LMS, on a free loopback port), and takes it down at the end, volumes and all. The web app's
submit rate limit is lifted for the three demo students (an override file of its own).
R rounds (default 3), back to back:
  1. sandbox only, on this host: the same grading (grade_source, the lesson's six cases)
     straight into a warm pool here, one run per core (as benchmarks/pipeline.py)
  2. a burst of N POSTs to the stack as fast as they go; graded per second, from the first POST
     to the last grade saved (read in the stack's PostgreSQL)
  1. sandbox only again, and so on
Each round's share is its burst over the mean of the sandbox-only figures just before and after
it; the figures are the medians over the rounds. With --json, ends with one JSON line:
{"submitted", "graded", "lost", "duplicated", "throughput_per_s", "sandbox_only_per_s",
"share", "shares"}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.lessons import load_lesson  # noqa: E402
from core.runs import RunStatus  # noqa: E402
from core.verdicts import grade_source  # noqa: E402
from service.settings import Settings  # noqa: E402
from testkit.servers import REPO, free_port  # noqa: E402
from testkit.stacks import COMPOSE, DEMO, Stack, launch, submit  # noqa: E402
from workers.sandbox import make_sandbox  # noqa: E402

CORES = os.cpu_count() or 1
LESSON = "expert/scaled-dot-product"
TITLE = "Scaled dot-product attention"  # its link in the demo course
SOLUTION = (REPO / "lessons" / LESSON / "solution" / "model.py").read_text()
OVERRIDE = """services:
  web:
    environment:
      CODEBLANKS_SUBMIT_RATE: "1000000"
"""


def sandbox_only(total: int) -> float:
    """Return gradings per second straight into a warm pool on this host, one run per core."""
    exercise = load_lesson(REPO / "lessons" / LESSON).exercise
    assert exercise is not None
    sandbox = make_sandbox("warm", Settings.from_env().runtime_dir)

    def grade(_: int) -> None:
        verdict = grade_source(exercise, SOLUTION.encode(), sandbox)
        assert verdict.status is RunStatus.PASSED, verdict.feedback

    with ThreadPoolExecutor(CORES) as pool:
        list(pool.map(grade, range(CORES * 2)))  # its zygotes start
        started = time.perf_counter()
        list(pool.map(grade, range(total)))
        elapsed = time.perf_counter() - started
    getattr(sandbox, "close", lambda: None)()
    return total / elapsed


def burst(stack: Stack, students: list, count: int) -> tuple[list[int], float, float]:
    """POST `count` submissions as fast as they go; return their ids, the first POST's time
    and the last grade's (epoch seconds)."""
    local = threading.local()

    def post(n: int) -> tuple[int, float]:
        if not hasattr(local, "api"):
            local.api = requests.Session()
        at = time.time()
        return submit(stack, students[n % len(students)], SOLUTION, local.api), at

    with ThreadPoolExecutor(8) as pool:
        posted = list(pool.map(post, range(count)))
    ids = [sid for sid, _ in posted]
    last = wait_graded(stack, ids)
    return ids, min(at for _, at in posted), last


def wait_graded(stack: Stack, ids: list[int], timeout: float = 600) -> float:
    """Wait until every submission is graded; return when the last grade was saved."""
    where = f"id between {min(ids)} and {max(ids)}"
    deadline = time.monotonic() + timeout
    while True:
        ((done,),) = stack.sql(
            f"select count(*) from submissions where {where} and graded_at is not null"
        )
        if int(done) >= len(ids) or time.monotonic() > deadline:
            break
        time.sleep(1)
    ((last,),) = stack.sql(
        f"select extract(epoch from max(graded_at)) from submissions where {where}"
    )
    return float(last)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--burst", type=int, default=300, help="submissions in each burst")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of sandbox only + burst")
    parser.add_argument("--workers", type=int, default=1, help="worker containers")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    args = parser.parse_args()

    temp = Path(tempfile.mkdtemp(prefix="codeblanks-compose-bench-"))
    override = temp / "compose.bench.yml"
    override.write_text(OVERRIDE)
    files = [COMPOSE, DEMO, override]
    stack = Stack.make(temp, f"codeblanks-bench-{os.getpid()}", free_port(), files)
    only_runs = max(args.burst // 2, 40)
    shares, throughputs, onlies, everything = [], [], [], []
    try:
        started = time.monotonic()
        stack.up("--scale", f"worker={args.workers}")
        print(f"the stack was ready {time.monotonic() - started:.0f} s after `up`", flush=True)
        students = [launch(stack, user, TITLE) for user in ("ali", "berna", "can")]
        warm_up, _, _ = burst(stack, students, CORES * 4)
        everything += warm_up
        print(f"{args.workers} worker(s), {CORES} cores, {args.rounds} rounds of {args.burst}")
        print(f"\n{'round':<7}{'sandbox only/s':>16}{'compose end to end/s':>22}{'share':>8}")
        before = sandbox_only(only_runs)
        for number in range(1, args.rounds + 1):
            ids, first, last = burst(stack, students, args.burst)
            everything += ids
            after = sandbox_only(only_runs)
            only = (before + after) / 2
            throughput = len(ids) / (last - first)
            before = after
            shares.append(throughput / only)
            throughputs.append(throughput)
            onlies.append(only)
            print(
                f"{number:<7}{only:>16.1f}{throughput:>22.1f}{throughput / only:>8.0%}", flush=True
            )
        rows = stack.sql(
            f"select count(*) filter (where graded_at is not null), "
            f"count(*) filter (where gradings > 1), "
            f"count(*) filter (where run_status is distinct from 'passed') from submissions "
            f"where id between {min(everything)} and {max(everything)}"
        )
        graded, duplicated, not_passed = (int(v) for v in rows[0])
        cold = stack.logs("worker").count("cold sandbox")
    finally:
        stack.down()
    result = {
        "submitted": len(everything),
        "graded": graded,
        "lost": len(everything) - graded,
        "duplicated": duplicated,
        "throughput_per_s": round(statistics.median(throughputs), 1),
        "sandbox_only_per_s": round(statistics.median(onlies), 1),
        "share": round(statistics.median(shares), 3),
        "shares": [round(share, 3) for share in shares],
    }
    print(f"\n{'figure (median of the rounds)':<38}{'value':>10}")
    print(f"{'sandbox only, this host (gradings/s)':<38}{result['sandbox_only_per_s']:>10}")
    print(f"{'compose end to end (graded/s)':<38}{result['throughput_per_s']:>10}")
    print(f"{'  share of sandbox only':<38}{result['share']:>10.0%}")
    print(
        f"submitted {result['submitted']}, graded {graded}, lost {result['lost']}, duplicated "
        f"{duplicated}, not passed {not_passed}; runs sent cold in the worker's log: {cold}"
    )
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
