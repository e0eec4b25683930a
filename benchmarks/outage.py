"""How soon grades that waited for an LMS that was down land once it answers again.

Usage: .venv/bin/python benchmarks/outage.py [--grades N] [--outage-s S] [--sync-pool K] [--json]

A real tool (its web app on a port of its own), a real redis-server, the workers as
`codeblanks dev` runs them (one on `grade`, two pool processes; one on `sync` alone, K pool
processes, CODEBLANKS_SYNC_CONCURRENCY by default; with K = 0, one worker of two on both, as
before) and the demo LMS in another thread. The demo LMS goes down (502 to
every call, as Moodle's web server does with its PHP stopped) for S seconds; N grades (the
demo's three students on N/3 links, one right answer each) come in meanwhile. Printed: the
requests the LMS got while down, and the time from its return to each grade in its
gradebook (p50, max). Issue 27.4 asks for every grade within 10 s, with a few requests a
minute while it is down.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from service.web import extensions
from testkit.lms import answer, landed, make_lms, signed_in_headers  # noqa: E402
from testkit.pipeline import Pipeline, add_sync_pool  # noqa: E402
from testkit.servers import RedisServer, WorkerProcess  # noqa: E402
from testkit.waits import until  # noqa: E402

STUDENTS = ("ali", "berna", "can")
LANDED_WITHIN_S = 300.0  # give up waiting then (today's backoff reaches minutes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grades", type=int, default=200)
    parser.add_argument("--outage-s", type=float, default=30.0)
    add_sync_pool(parser)
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        figures = measure(Path(tmp), args.grades, args.outage_s, args.sync_pool)
    print(f"grades waiting           {figures['grades']}")
    print(f"sync pool                {figures['sync_pool'] or 'none (grade,sync on one worker)'}")
    print(f"outage                   {figures['outage_s']:g} s (502 to every request)")
    print(f"requests while down      {figures['requests_while_down']}")
    print(f"landed after its return  p50 {figures['p50_s']} s, max {figures['max_s']} s")
    print(f"not landed in {LANDED_WITHIN_S:g} s     {figures['missing']}")
    if args.json:
        print(json.dumps(figures))
    return 0


def measure(tmp: Path, grades: int, outage_s: float, sync_pool: int = 4) -> dict[str, object]:
    """Run one outage with `grades` waiting; return the figures."""
    redis = RedisServer(tmp)
    redis.start()
    lms, tool_server = make_lms(tmp, settings_changes={"redis_url": redis.url})
    env = Pipeline.env_of(extensions.settings(lms.app))
    worker = WorkerProcess(env, tmp / "worker.log", queues="grade" if sync_pool else "grade,sync")
    syncs = WorkerProcess(env, tmp / "sync-worker.log", queues="sync")
    browser = requests.Session()
    try:
        worker.start(concurrency=2)
        if sync_pool:
            syncs.start(concurrency=sync_pool)
            syncs.wait_ready()
        links = [lms.link(title=f"Lesson {n}") for n in range(math.ceil(grades / 3))]
        pairs = [(who, link) for link in links for who in STUDENTS][:grades]
        signed = [(who, link, *signed_in_headers(browser, lms, who, link)) for who, link in pairs]
        worker.wait_ready()
        platform = lms.platform
        platform.down_for(outage_s)
        down_at, hits_before = time.monotonic(), sum(platform.knobs.hits.values())
        for _, _, headers, placement_id in signed:
            answered = answer(browser, lms, headers, placement_id)
            answered.raise_for_status()
        time.sleep(max(0.0, down_at + outage_s - time.monotonic()))
        back_at = time.time()
        while_down = sum(platform.knobs.hits.values()) - hits_before
        items = {link.id: platform.lineitems_of(link)[0].id for link in links}
        wanted = {(platform.user_sub(who), items[link.id]) for who, link in pairs}
        until(lambda: set(landed(platform)) >= wanted, LANDED_WITHIN_S, every=0.2)
        after = sorted(
            score.received_at - back_at for key, score in landed(platform).items() if key in wanted
        )
    finally:
        browser.close()
        syncs.stop()
        worker.stop()
        lms.demo.stop()
        tool_server.stop()
        lms.store.dispose()
        redis.stop()
    return {
        "grades": grades,
        "outage_s": outage_s,
        "sync_pool": sync_pool,
        "requests_while_down": while_down,
        "p50_s": round(statistics.median(after), 2) if after else None,
        "max_s": round(after[-1], 2) if after else None,
        "missing": len(wanted) - len(after),
    }


if __name__ == "__main__":
    sys.exit(main())
