"""A hidden case's run time and way of failing reach its student nowhere (issue 25, point 1),
on real processes: the JSON API, a Celery worker grading on the warm sandbox, the live
status stream, the lesson page and the AGS post to the demo LMS.

The attack: a program reads its case's expression and, for a case it was not shown, sleeps
for each character of it; the verdict's time then spelled out the hidden input. Two students
hand in the same function, one of them with the sleep, and see the same verdict; two more hand
in code that gets a hidden case wrong, one by a wrong value and one by running out of time,
and see the same verdict. "The same" leaves out ids and timestamps, and the visible cases' own
run times (measured, so they jitter): each of those is checked to be a visible case's, and the
verdict's time their sum. What still differs is when the verdict arrives (docs/security.md).
"""

from __future__ import annotations

import json
import re
import time

import pytest
import requests
from sqlalchemy import select

from service.store.models import Submission
from service.web import extensions
from service.web.rendering import duration_ms
from testkit.lms import make_lms, signed_in_headers
from testkit.pipeline import Pipeline
from testkit.servers import WorkerProcess
from testkit.waits import wait_for

LESSON = "leak/timed"
VISIBLE = ("f(1)", "f(2)")
EXERCISE = """\
title: Twice
prompt: Write f(x), twice x.
entrypoint: main.py
compare: exact
points: 6
limits: {time_s: 3}
cases:
  - name: f of one
    expr: f(1)
    expected: 2
  - name: f of two
    expr: f(2)
    expected: 4
    weight: 2
  - name: f of ten
    expr: f(10)
    expected: 20
    hidden: true
  - name: f of a hundred
    expr: f(100)
    expected: 200
    weight: 2
    hidden: true
"""
RIGHT = "def f(x):\n    return 2 * x\n"
# the attack: 0.15 s for each character of a hidden case's expression (0.75 s and 0.9 s)
SLEEPS = f"""import json, os, time

_HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_HERE, "__codeblanks_case__.json")) as _config:
    _EXPR = json.load(_config)["expr"]
if _EXPR not in {VISIBLE!r}:
    time.sleep(0.15 * len(_EXPR))

{RIGHT}"""
WRONG = "def f(x):\n    return 2 * x if x < 50 else -1\n"
ENDLESS = "def f(x):\n    while x >= 50:\n        pass\n    return 2 * x\n"


def write_lesson(root):
    lesson = root / "leak" / "timed"
    (lesson / "starter").mkdir(parents=True)
    (lesson / "solution").mkdir()
    (root / "leak" / "track.yaml").write_text("title: Leaks\nlessons:\n  - timed\n")
    (lesson / "lesson.md").write_text("---\ntitle: Twice\n---\nTwice x.\n")
    (lesson / "starter" / "main.py").write_text("def f(x):\n    pass\n")
    (lesson / "solution" / "main.py").write_text(RIGHT)
    (lesson / "exercise.yaml").write_text(EXERCISE)
    return root


class Tool:
    """The tool (the app on a real HTTP server), the demo LMS and a real worker on the warm pool."""

    def __init__(self, tmp_path, redis_server):
        changes = {
            "redis_url": redis_server.url,
            "lessons_dir": write_lesson(tmp_path / "lessons"),
            "sandbox": "warm",
            "submit_rate": 1_000_000,
        }
        self.lms, self.server = make_lms(tmp_path, settings_changes=changes)
        env = Pipeline.env_of(extensions.settings(self.lms.app))
        self.worker = WorkerProcess(env, tmp_path / "worker.log")
        self.browsers: list[requests.Session] = []

    def close(self):
        for browser in self.browsers:
            browser.close()
        self.worker.stop()
        self.lms.demo.stop()
        self.server.stop()
        self.lms.store.dispose()

    def hand_in(self, who, link, source):
        """Launch as `who`, submit `source`, follow its stream to the verdict; what it saw."""
        browser = requests.Session()
        self.browsers.append(browser)
        headers, placement_id = signed_in_headers(browser, self.lms, who, link)
        url = f"{self.lms.tool_url}/api/placements/{placement_id}/submissions"
        submitted = browser.post(url, json={"source": source}, headers=headers)
        assert submitted.status_code == 202, submitted.text
        graded = self._followed(browser, submitted.json()["events"], headers)
        token = headers["X-CodeBlanks-Session"]
        api = browser.get(f"{self.lms.tool_url}{submitted.json()['url']}", headers=headers)
        page = browser.get(f"{self.lms.tool_url}/lessons/{placement_id}", params={"s": token})
        progress = browser.get(
            f"{self.lms.tool_url}/lessons/{placement_id}/progress", params={"s": token}
        )
        assert (api.status_code, page.status_code, progress.status_code) == (200, 200, 200)
        return {"api": api.json(), "stream": graded, "page": page.text, "progress": progress.json()}

    def _followed(self, browser, events, headers):
        """Read the live status stream (again after each short one) until it says graded."""
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            url = f"{self.lms.tool_url}{events}"
            with browser.get(url, headers=headers, stream=True, timeout=30) as answer:
                assert answer.status_code == 200, answer.text
                states = [
                    json.loads(line.removeprefix("data: "))
                    for line in answer.iter_lines(decode_unicode=True)
                    if line.startswith("data: {") and '"status"' in line
                ]
            if states and states[-1]["status"] == "graded":
                return states[-1]
        raise AssertionError("the stream never said graded")

    def posted(self, who, count):
        """Return the AGS scores the demo LMS took for `who` once `count` came: their bodies."""
        wait_for(
            lambda: len([s for s in self.lms.platform.scores(user=who) if s.applied]) >= count,
            f"{count} scores of {who} in the LMS",
            60,
        )
        scores = [s for s in self.lms.platform.scores(user=who) if s.applied]
        # who it is for and when it was sent are the post's own; the rest is the grade
        return [
            {k: v for k, v in s.body.items() if k not in ("userId", "timestamp")} for s in scores
        ]


def untimed(state):
    """Return a submission's state without its ids and times, and its visible cases' times.

    The verdict's time is taken out only when it is the sum of its visible cases' times: any
    other number stays, to be told apart.
    """
    shown = {k: v for k, v in state.items() if k not in ("id", "created_at", "graded_at")}
    verdict = dict(shown["verdict"])
    timed = [case for case in verdict["cases"] if "duration_ms" in case]
    assert not any(case["hidden"] for case in timed)  # no reveal here: a hidden case, no time
    times = [case["duration_ms"] for case in timed]
    verdict["cases"] = [
        {**case, "duration_ms": "(a visible case's time)"} if "duration_ms" in case else case
        for case in verdict["cases"]
    ]
    if verdict["duration_ms"] == sum(times):
        verdict["duration_ms"] = "(the visible cases' time)"
    return {**shown, "verdict": verdict}, times


def student_data(tool, seen):
    """Return what a student saw, untimed, to compare two students' views."""
    api, times = untimed(seen["api"])
    stream, _ = untimed(seen["stream"])
    with tool.lms.app.test_request_context():
        total = duration_ms(sum(times))  # as the page writes it
    results = []
    for html in (seen["page"], seen["progress"]["results"]):
        verdict = html.split('id="verdict"')[1].split("</section>")[0]
        attempts = html.split('<table class="attempts"')[1].split("</table>")[0]
        verdict = re.sub(r"Ran in [\d.,]+ m?s\b", "Ran in (a visible case's time)", verdict)
        attempts = re.sub(r"(<tr><td>\d+</td><td>)[^<]*(</td>)", r"\1(when)\2", attempts)
        # an attempt's links name its submission and carry the reader's session
        attempts = re.sub(r"attempts/\d+(\?s=[^\"]+)?", "attempts/(id)", attempts)
        attempts = attempts.replace(f"<td>{total}</td>", "<td>(the visible cases' time)</td>")
        results.append((verdict, attempts))
    return {"api": api, "stream": stream, "page": results[0], "progress": results[1]}


@pytest.fixture
def tool(tmp_path, redis_server):
    started = Tool(tmp_path, redis_server)
    try:
        started.worker.start(concurrency=1)
        started.worker.wait_ready()
        yield started
    finally:
        started.close()


@pytest.mark.celery
@pytest.mark.slow
def test_a_verdict_tells_nothing_of_how_long_or_how_a_hidden_case_ran(tool):
    lms = tool.lms
    timed = lms.link(lesson=LESSON, title="Twice", score=6.0)
    failed = lms.link(lesson=LESSON, title="Twice again", score=6.0)
    fast = student_data(tool, tool.hand_in("ali", timed, RIGHT))
    slow = student_data(tool, tool.hand_in("berna", timed, SLEEPS))
    wrong = student_data(tool, tool.hand_in("ali", failed, WRONG))
    endless = student_data(tool, tool.hand_in("berna", failed, ENDLESS))

    pairs = {"hidden cases that sleep": (slow, fast), "a hidden time-out": (endless, wrong)}
    assert [what for what, (one, other) in pairs.items() if one != other] == []
    assert slow == fast and endless == wrong  # (the difference, if the line above fails)
    assert fast["api"]["verdict"]["status"] == "passed"
    assert wrong["api"]["verdict"]["status"] == "failed"
    assert "Hidden case 'f of a hundred' failed." in wrong["api"]["verdict"]["feedback"]
    # the LMS holds the same grades, posted the same way
    assert tool.posted("ali", 2) == tool.posted("berna", 2)
    assert [body["scoreGiven"] for body in tool.posted("ali", 2)] == [6.0, 4.0]
    assert tool.worker.errors() == []
    with lms.store.session() as session:  # the store keeps it all, for the teacher
        rows = session.scalars(select(Submission).order_by(Submission.id)).all()
        statuses = [[case["status"] for case in row.cases] for row in rows]
        assert statuses[3] == ["passed", "passed", "passed", "timeout"]
        assert rows[1].duration_ms > 1500  # the sleeps, 0.75 s and 0.9 s, kept
