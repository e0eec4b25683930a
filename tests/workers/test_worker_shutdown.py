"""A stopped worker leaves nothing of its sandboxes behind (issues 25.6 and 26.2).

A Celery pool process exits by os._exit, which skipped the warm pool's exit handler: a worker
stopped by SIGTERM (Celery's warm shutdown, as `codeblanks dev` and systemd stop it) left its
armed runs' cgroups, empty, for the next worker's sweep. Now each pool process closes its
sandbox as it exits, so when the worker has exited its zygotes are gone and their cgroups too.
The worker runs as root for its sandbox, and says so instead of Celery's warning about root.
"""

import time

import pytest

from testkit import slowness
from testkit.pipeline import Pipeline
from tests.workers.sandbox.leftovers import WARM_LOCKS, lock_holders, processes
from workers.sandbox import cgroups

pytestmark = [pytest.mark.bwrap, pytest.mark.redis, pytest.mark.slow]


def test_a_stopped_worker_leaves_no_zygote_and_no_run_cgroup(tmp_path, redis_server, database_url):
    pipeline = Pipeline(tmp_path, redis_server, database_url, sandbox="warm")
    try:
        worker = pipeline.start_worker(concurrency=1)
        deadline = time.monotonic() + slowness.scaled(60)
        uids: set[int] = set()
        groups: set[str] = set()
        while len(groups) <= len(uids):  # until the pool holds a zygote and an armed run
            assert time.monotonic() < deadline, "the worker's pool never armed a run"
            pids = set(worker.pool_pids())
            uids = {uid for uid, held in lock_holders(WARM_LOCKS).items() if held & pids}
            groups = {g for uid in uids for g in cgroups.names(f"{uid}-")}
            time.sleep(0.05)
        seen = {(p.pid, p.started): str(p) for p in processes(uids)}
        assert worker.process is not None
        worker.process.terminate()  # SIGTERM to the worker alone: its warm shutdown
        worker.process.wait(timeout=slowness.scaled(30))
        alive = [seen[key] for p in processes(uids) if (key := (p.pid, p.started)) in seen]
        taken = set(lock_holders(WARM_LOCKS))  # another pool may take a freed uid at once
        left = sorted(
            g
            for g in groups
            if cgroups.members(g) is not None
            and not (g.endswith("-zygote") and int(g.split("-")[0]) in taken)
        )
        assert alive == [], "the stopped worker's zygote lives on"
        assert left == [], "the stopped worker left its runs' cgroups"
        log = worker.log.read_text()
        assert "superuser privileges" not in log
        assert "the worker runs as root: its warm sandbox makes a uid and cgroups per slot" in log
    finally:
        pipeline.stop()
