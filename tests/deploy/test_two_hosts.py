"""Two worker "hosts" (docker/compose.two-hosts.yml): each on a network of its own; one is
killed whole (`docker kill -s KILL`) during a burst, and the other grades everything it held,
each submission exactly once."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator

import pytest
import requests
import yaml

from testkit import slowness
from testkit.servers import free_port
from testkit.stacks import COMPOSE, TWO_HOSTS, Stack, launch, submit, volumes

pytestmark = pytest.mark.docker

SEED = "expert/what-is-attention"
BURST = 40
# about half a second per grading, so that a worker holds runs when it is killed; the output
# is the solution's, so every verdict must be "passed"
SLOW = "import time\ntime.sleep(0.5)\n"
RECOVERY_BOUND_S = 40  # issue 16 asks for 20 s; asserted generously on a shared machine
OVERRIDE = """services:
  web:
    environment:
      CODEBLANKS_SUBMIT_RATE: "1000000"
"""


def test_the_two_hosts_file_puts_each_worker_on_a_network_of_its_own(images, tmp_path):
    stack = Stack.make(tmp_path, "codeblanks-config", 8000, [COMPOSE, TWO_HOSTS])
    config = yaml.safe_load(stack.compose("config").stdout)["services"]
    assert list(config["worker"]["networks"]) == ["host-a"]
    assert list(config["worker-b"]["networks"]) == ["host-b"]
    for name in ("redis", "postgres", "web"):
        assert set(config[name]["networks"]) == {"default", "host-a", "host-b"}, name
    a, b = config["worker"], config["worker-b"]
    assert "sandbox-locks-a:/run/codeblanks/slots" in volumes(a)
    assert "sandbox-locks-b:/run/codeblanks/slots" in volumes(b)
    # host B is the same worker as host A: warm, no socket, the same few grants
    for key in ("entrypoint", "command", "cap_drop", "cap_add", "security_opt"):
        assert sorted(map(str, a[key])) == sorted(map(str, b[key])), key
    assert b["environment"]["CODEBLANKS_SANDBOX"] == "warm"
    assert not any("docker.sock" in v for v in volumes(a) + volumes(b))
    assert config["lms-a"]["network_mode"] == "service:worker"
    assert config["lms-b"]["network_mode"] == "service:worker-b"


@pytest.fixture(scope="module")
def stack(images, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The demo deployment with two worker hosts; torn down whatever happens."""
    workdir = tmp_path_factory.mktemp("two-hosts")
    (workdir / "rate.yml").write_text(OVERRIDE)
    files = [COMPOSE, TWO_HOSTS, workdir / "rate.yml"]
    running = Stack.make(workdir, f"codeblanks-hosts-{os.getpid()}", free_port(), files)
    try:
        running.up()
        running.remember_pools()
        yield running
    finally:
        running.down()


@pytest.mark.slow
def test_each_host_reaches_redis_and_postgres_but_not_the_other_host(stack: Stack):
    (b,) = stack.containers("worker-b")
    probe = "import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 3)"
    for host, port in (("redis", 6379), ("postgres", 5432)):
        reach = subprocess.run(["docker", "exec", b, "python3", "-c", probe, host, str(port)])
        assert reach.returncode == 0, host
    (a,) = stack.containers("worker")
    address = subprocess.run(
        ["docker", "inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}", a],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert address
    for target in ["worker", *address]:
        reach = subprocess.run(
            ["docker", "exec", b, "python3", "-c", probe, target, "9"], capture_output=True
        )
        assert reach.returncode != 0, target


@pytest.mark.slow
def test_a_host_killed_during_a_burst_loses_nothing_and_grades_nothing_twice(stack: Stack, catalog):
    exercise = catalog.lesson(SEED).exercise
    source = SLOW + exercise.solution[exercise.entrypoint]
    students = [launch(stack, user) for user in ("ali", "berna", "can")]
    api = requests.Session()
    # both hosts' pools started (each worker grades something first)
    warm_up = [submit(stack, students[n % 3], source, api) for n in range(8)]
    _wait_graded(stack, warm_up, timeout=120)
    (a,) = stack.containers("worker")
    subprocess.run(["docker", "update", "--restart", "no", a], check=True, capture_output=True)
    ids = [submit(stack, students[n % 3], source, api) for n in range(BURST)]
    _wait_graded(stack, ids, count=4, timeout=60)  # host A is mid-run now
    subprocess.run(["docker", "kill", "-s", "KILL", a], check=True, capture_output=True)
    killed_at = time.time()
    try:
        _wait_graded(stack, ids, timeout=180)
    except AssertionError:
        print(stack.logs("worker-b"))
        raise
    rows = stack.sql(
        "select id, status, run_status, gradings, claims, grader_error is null, "
        f"extract(epoch from graded_at) from submissions where id in ({','.join(map(str, ids))})"
    )
    assert len(rows) == BURST
    assert {row[1] for row in rows} == {"graded"}
    assert {row[2] for row in rows} == {"passed"}, rows
    assert {row[3] for row in rows} == {"1"}, "a submission was graded twice"
    assert {row[5] for row in rows} == {"t"}
    last = max(float(row[6]) for row in rows) - killed_at
    reclaimed = [float(row[6]) - killed_at for row in rows if int(row[4]) > 1]
    print(
        f"host A killed with {len(reclaimed)} submission(s) in hand; host B graded them by "
        f"{max(reclaimed, default=0):.1f} s after the kill, and the last of the burst by "
        f"{last:.1f} s"
    )
    assert reclaimed, "host A held no submission when it was killed"
    assert max(reclaimed) < RECOVERY_BOUND_S


def _wait_graded(stack: Stack, ids: list[int], timeout: float, count: int | None = None) -> None:
    """Wait until `count` (default: all) of the submissions are graded."""
    want = len(ids) if count is None else count
    query = (
        f"select count(*) from submissions where id in ({','.join(map(str, ids))}) "
        "and graded_at is not null"
    )
    timeout = slowness.scaled(timeout)
    deadline = time.monotonic() + timeout
    while True:
        ((done,),) = stack.sql(query)
        if int(done) >= want:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{done} of {len(ids)} graded after {timeout:g} s")
        time.sleep(0.2)
