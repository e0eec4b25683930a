"""Fair share: how long a right answer waits behind one student's endless loops.

Usage: .venv/bin/python benchmarks/fair_share.py [--endless N] [--others K] [--concurrency C]
Starts its own redis-server and one worker (`codeblanks worker`, C pool processes, default 1:
the demo's one worker) on the warm pool and a SQLite store in a temp dir. One student hands
in N `while True: pass` (default 10) to the six-case lesson expert/scaled-dot-product, with
its own time limit (5 s a case); once the first runs, K other students (default 3) hand in a
right answer, one every 2 s. Prints each right answer's wait (hand-in to verdict), then the
time until the last endless loop was graded, and graded / lost / duplicated.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from testkit.pipeline import SOLUTION, Pipeline  # noqa: E402
from testkit.servers import RedisServer  # noqa: E402

ENDLESS = "while True:\n    pass\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endless", type=int, default=10)
    parser.add_argument("--others", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cb-fair-") as tmp:
        root = Path(tmp)
        redis = RedisServer(root)
        redis.start()
        database = f"sqlite:///{root / 'codeblanks.db'}"
        pipeline = Pipeline(root, redis, database, sandbox="warm", lease_s=30)
        try:
            pipeline.start_worker(concurrency=args.concurrency)
            pipeline.student()
            started = time.monotonic()
            endless = [pipeline.submit(ENDLESS) for _ in range(args.endless)]
            while pipeline.statuses(endless[:1])[endless[0]] != "running":
                time.sleep(0.05)
            waits = []
            for _ in range(args.others):
                pipeline.student()
                handed_in = time.monotonic()
                right = pipeline.submit(SOLUTION)
                if not pipeline.wait_until([right], "graded", 600):
                    sys.exit(f"a right answer was not graded: {pipeline.explain([right])}")
                waits.append(time.monotonic() - handed_in)
                time.sleep(max(0.0, 2.0 - (time.monotonic() - handed_in)))
            if not pipeline.wait_until(endless, "graded", 3600):
                sys.exit(f"the endless loops were not all graded: {pipeline.explain(endless)}")
            ended = time.monotonic() - started
            counts = pipeline.counts(endless)
        finally:
            pipeline.stop()
            redis.stop()
    print(f"{args.endless} endless loops of one student, {args.others} right answers of others,")
    print(f"one worker with {args.concurrency} pool process(es), warm pool, 5 s a case:")
    print("right answer waits (s): " + ", ".join(f"{wait:.1f}" for wait in waits))
    print(f"  median {statistics.median(waits):.1f} s, max {max(waits):.1f} s")
    print(f"every endless loop graded {ended:.0f} s after the first was handed in")
    print(f"endless: graded {counts.graded}/{counts.submitted}, lost {counts.lost}, "
          f"duplicated {counts.duplicated}")  # fmt: skip


if __name__ == "__main__":
    main()
