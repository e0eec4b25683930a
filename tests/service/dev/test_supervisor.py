"""`codeblanks dev` for real: the newcomer's path from the demo LMS to a grade, then Ctrl-C."""

import re
import socket
import subprocess
import time
from urllib.parse import parse_qsl, urljoin, urlsplit

import pytest
import requests

from service.demo.browser import parse_form
from tests.conftest import REPO
from tests.devserver import dev_server

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
