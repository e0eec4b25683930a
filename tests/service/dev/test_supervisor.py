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

from demo.browser import parse_form
from testkit import slowness
from testkit.devserver import dev_server
from testkit.factories import SCALED
from testkit.servers import free_port
from testkit.waits import wait_for
from tests.conftest import REPO
from tests.workers.sandbox.leftovers import WARM_LOCKS, lock_holders
from workers.sandbox import cgroups

pytestmark = pytest.mark.slow


def launch(browser, base, user, link_id):
    """Launch the demo LMS's link as `user`; return the page's session header and placement."""
    start = browser.get(
        f"{base}/demo/admin/launch", params={"user": user, "link": link_id}, timeout=10
    ).json()
    assert start["method"] == "POST"  # as Moodle starts a launch
    login = browser.post(
        start["login_url"], data=start["params"], allow_redirects=False, timeout=10
    )
    auth = browser.get(urljoin(base, login.headers["Location"]), timeout=10)
    form = parse_form(auth.text, auth.url)
    launched = browser.post(form.action, data=form.fields, allow_redirects=False, timeout=10)
    location = launched.headers["Location"]
    placement = int(urlsplit(location).path.rsplit("/", 1)[1])
    return {"X-CodeBlanks-Session": dict(parse_qsl(urlsplit(location).query))["s"]}, placement


def test_dev_runs_the_newcomer_path_and_stops_cleanly(tmp_path):
    with dev_server(tmp_path / "instance") as base:
        with requests.Session() as browser:
            course = browser.get(base + "/demo/", timeout=10).text
            link_id = re.search(r"/demo/launch/([\w-]+)", course).group(1)
            headers, placement = launch(browser, base, "ali", link_id)
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

            verdict = wait_for(graded, "the grading", 60, every=0.2)
            assert verdict["verdict"]["status"] == "passed", verdict

            def in_gradebook():
                scores = browser.get(base + "/demo/admin/scores", timeout=10).json()
                return [
                    s
                    for s in scores
                    if s["body"].get("gradingProgress") == "FullyGraded"
                    and s["body"]["scoreGiven"] == 5.0
                ]

            [score] = wait_for(in_gradebook, "the grade in the demo LMS", 60, every=0.2)[-1:]
            assert score["body"]["scoreMaximum"] == 8.0
    with pytest.raises(ConnectionRefusedError):  # nothing was left serving
        socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1])), timeout=2).close()
    leftovers = subprocess.run(["pgrep", "-f", str(tmp_path / "instance")], capture_output=True)
    assert leftovers.stdout == b""  # no redis-server, worker or web process of this run
    # the grade posts' own worker started, and stopped warmly with the rest
    syncs = (tmp_path / "instance" / "dev" / "sync-worker.log").read_text()
    assert " ready." in syncs and "Warm shutdown" in syncs, syncs[-2000:]


def test_a_grade_reaches_the_lms_while_the_grading_pool_runs_an_endless_loop(tmp_path):
    """Issue 27: with one worker pool for gradings and grade posts, a rush's scores reached
    the LMS minutes after their verdicts. dev's grading pool (one process) now runs a
    `while True: pass` through six cases of 5 s; meanwhile another student's right answer
    must reach the demo LMS's gradebook within 10 s: the sync worker posts it."""
    with dev_server(tmp_path / "instance") as base, requests.Session() as browser:
        [first, *_] = browser.get(base + "/demo/admin/links", timeout=10).json()
        made = browser.post(
            base + "/demo/admin/links",
            json={"client_id": first["client_id"], "title": "Scaled", "custom": {"lesson": SCALED},
                  "score_maximum": 10.0},
            timeout=10,
        )  # fmt: skip
        assert made.status_code == 201, made.text
        link_id = made.json()["id"]
        ali, placement = launch(browser, base, "ali", link_id)
        handed = browser.post(
            f"{base}/api/placements/{placement}/submissions",
            json={"source": "while True:\n    pass\n"},
            headers=ali,
            timeout=10,
        )
        assert handed.status_code == 202, handed.text
        endless = urljoin(base, handed.json()["url"])

        def status() -> str:
            return str(browser.get(endless, headers=ali, timeout=10).json()["status"])

        wait_for(lambda: status() == "running", "the endless loop's run", 60, every=0.2)
        berna, placement = launch(browser, base, "berna", link_id)
        answered = browser.post(
            f"{base}/api/placements/{placement}/answers",
            json={"question_id": "why-scale", "answer": 1},
            headers=berna,
            timeout=10,
        )
        assert answered.status_code == 201, answered.text
        since = time.time()

        def posted():
            scores = browser.get(base + "/demo/admin/scores", timeout=10).json()
            return [s for s in scores if s["applied"] and s["body"]["scoreGiven"] > 0]

        wait_for(posted, "the answer's score in the demo LMS", 60, every=0.2)
        landed_s = time.time() - since
        assert landed_s <= 10, f"the score reached the LMS {landed_s:.1f} s after the answer"
        assert status() == "running", "the grading pool was not busy all along"


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

        groups = wait_for(
            pool_armed, "the dev worker's pool arming", slowness.scaled(60), every=0.2
        )
        tree = _tree(dev.pid)
        programs = ("redis-server", "worker --queues grade", "worker --queues sync", "gunicorn")
        for program in programs:
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

        wait_for(
            swept,
            f"the sweep of the killed dev's run cgroups {groups}",
            slowness.scaled(30),
            every=0.2,
        )
