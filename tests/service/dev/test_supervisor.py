"""`codeblanks dev` for real: the newcomer's path from the demo LMS to a grade, then Ctrl-C."""

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qsl, urljoin, urlsplit

import pytest
import requests

from service.demo.browser import parse_form
from tests import slowness
from tests.conftest import REPO
from tests.devserver import dev_server, free_port
from tests.workers.sandbox.leftovers import WARM_LOCKS, lock_holders
from workers.sandbox import cgroups

pytestmark = pytest.mark.slow


def wait_for(predicate, timeout_s, message):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(message)


def test_dev_runs_the_newcomer_path_and_stops_cleanly(tmp_path):
    with dev_server(tmp_path / "instance") as base:
        with requests.Session() as browser:
            course = browser.get(base + "/demo/", timeout=10).text
            link_id = re.search(r"/demo/launch/([\w-]+)", course).group(1)
            start = browser.get(
                f"{base}/demo/admin/launch", params={"user": "ali", "link": link_id}, timeout=10
            ).json()
            assert start["method"] == "POST"  # as Moodle starts a launch
            login = browser.post(
                start["login_url"], data=start["params"], allow_redirects=False, timeout=10
            )
            auth = browser.get(urljoin(base, login.headers["Location"]), timeout=10)
            form = parse_form(auth.text, auth.url)
            launched = browser.post(
                form.action, data=form.fields, allow_redirects=False, timeout=10
            )
            location = launched.headers["Location"]
            placement = int(urlsplit(location).path.rsplit("/", 1)[1])
            headers = {"X-CodeBlanks-Session": dict(parse_qsl(urlsplit(location).query))["s"]}
            solution = (REPO / "lessons/expert/what-is-attention/solution/model.py").read_text()
            posted = browser.post(
                f"{base}/api/placements/{placement}/submissions",
                json={"source": solution},
                headers=headers,
                timeout=10,
            )
            assert posted.status_code == 202, posted.text
            url = urljoin(base, posted.json()["url"])

            def graded():
                body = browser.get(url, headers=headers, timeout=10).json()
                return body if body["status"] == "graded" else None

            verdict = wait_for(graded, 60, "the submission was not graded")
            assert verdict["verdict"]["status"] == "passed", verdict

            def in_gradebook():
                scores = browser.get(base + "/demo/admin/scores", timeout=10).json()
                return [
                    s
                    for s in scores
                    if s["body"].get("gradingProgress") == "FullyGraded"
                    and s["body"]["scoreGiven"] == 5.0
                ]

            [score] = wait_for(in_gradebook, 60, "the grade did not reach the demo LMS")[-1:]
            assert score["body"]["scoreMaximum"] == 8.0
    with pytest.raises(ConnectionRefusedError):  # nothing was left serving
        socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1])), timeout=2).close()
    leftovers = subprocess.run(["pgrep", "-f", str(tmp_path / "instance")], capture_output=True)
    assert leftovers.stdout == b""  # no redis-server, worker or web process of this run


def _tree(root: int) -> dict[tuple[int, str], str]:
    """Return every descendant of `root` now, keyed by (pid, start time), with its command."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = {}, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        if (key := _identity(pid)) is not None:
            found[key] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    return found


def _identity(pid: int) -> tuple[int, str] | None:
    """Return (pid, start time) for a live, not zombie, process; None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return None if fields[0] in ("Z", "X") else (pid, fields[19])


def test_a_killed_dev_takes_every_child_with_it_and_the_next_starts_clean(tmp_path):
    """Issue 25.6: a SIGKILLed `codeblanks dev` left its Celery worker (and redis and web)
    running, holding its queue and its warm slots. Now its children die with it, whatever
    they started dies with them, and the next dev sweeps what the killed one's runs left."""
    port = free_port()
    env = {**os.environ, "CODEBLANKS_INSTANCE_DIR": str(tmp_path / "first")}
    dev = subprocess.Popen(
        [sys.executable, "-m", "service", "dev", "--port", str(port)],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert dev.stdout is not None
        for line in dev.stdout:
            if "Press Ctrl-C" in line:
                break
        else:
            pytest.fail("codeblanks dev never served")

        def pool_armed() -> set[str]:
            pids = {pid for pid, _ in _tree(dev.pid)}
            uids = {uid for uid, held in lock_holders(WARM_LOCKS).items() if held & pids}
            groups = {g for uid in uids for g in cgroups.names(f"{uid}-")}
            return groups if len(groups) > len(uids) else set()  # a zygote's and a run's

        groups = wait_for(pool_armed, slowness.scaled(60), "the dev worker's pool never armed")
        tree = _tree(dev.pid)
        for program in ("redis-server", "workers.app worker", "gunicorn"):
            assert any(program in command for command in tree.values()), (program, tree)
    finally:
        dev.kill()  # SIGKILL: no handler of dev's runs
        dev.wait()
        dev.stdout.close()

    def alive() -> list[str]:
        return [command for key, command in tree.items() if _identity(key[0]) == key]

    deadline = time.monotonic() + slowness.scaled(10)
    while alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert alive() == [], "these outlived the killed codeblanks dev"
    with dev_server(tmp_path / "second"):

        def swept() -> bool:
            taken = set(lock_holders(WARM_LOCKS))
            return not [
                g
                for g in groups
                if cgroups.members(g) is not None and int(g.split("-")[0]) not in taken
            ]

        wait_for(swept, slowness.scaled(30), f"the killed dev's run cgroups stay: {groups}")
