"""A lesson with a 6-point, four-case exercise and a 2-point question, written into a test's
temp dir, and the student code that earns each share of it.

Cases (value cases, so the same sources grade alike in a real sandbox and in the fake one):
f(1) == 2 (weight 1), f(2) == 4 (weight 2), g(3) == 9 (weight 1), g(4) == 16 (weight 2, hidden).
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

import workers.tasks  # noqa: F401  registers the tasks by name
from core.lessons import load_catalog
from core.runs import RunOutcome, RunRequest, RunResult
from demo.server import BackgroundServer
from service.queue import TaskName
from service.store.database import Store
from testkit.apps import swap
from testkit.celery import Sent
from testkit.lms import Lms, make_lms, signed_in_headers
from tests.conftest import SEED
from tests.workers.contexts import attach_worker
from workers.context import WorkerContext
from workers.sandbox.fake import FakeSandbox
from workers.syncing import Synced, sync_pair

LESSON = "partial/weighted"
QUESTION = "rnn-advantage"  # a choice question; 1 is the right answer
RIGHT = 1

CASES = """\
cases:
  - name: f of one
    expr: f(1)
    expected: 2
  - name: f of two
    expr: f(2)
    expected: 4
    weight: 2
  - name: g of three
    expr: g(3)
    expected: 9
  - name: g of four
    expr: g(4)
    expected: 16
    weight: 2
    hidden: true
"""

# the regrade's change: f's cases weigh 1 each, g's 2 each, and one more case of g
REWEIGHED = """\
cases:
  - name: f of one
    expr: f(1)
    expected: 2
  - name: f of two
    expr: f(2)
    expected: 4
  - name: g of three
    expr: g(3)
    expected: 9
    weight: 2
  - name: g of four
    expr: g(4)
    expected: 16
    weight: 2
    hidden: true
  - name: g of minus one
    expr: g(-1)
    expected: 1
    weight: 2
"""

# f right, g wrong: weights 1 + 2 of 6, half the points
HALF = "def f(x):\n    return 2 * x\n\n\ndef g(x):\n    return x + x\n"
# f(1) right only: weight 1 of 6
SIXTH = "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x + x\n"
# f(1) and g right: weights 1 + 1 + 2 of 6
TWO_THIRDS = "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x * x\n"
# g right, f wrong: weights 1 + 2 of 6
G_ONLY = "def f(x):\n    return 0\n\n\ndef g(x):\n    return x * x\n"
FULL = "def f(x):\n    return 2 * x\n\n\ndef g(x):\n    return x * x\n"


def write_lessons(root: Path, cases: str = CASES) -> Path:
    """Write the track `partial` with the lesson `weighted` under `root`; return `root`."""
    track = root / "partial"
    lesson = track / "weighted"
    if not lesson.exists():
        shutil.copytree(SEED, lesson)
        (lesson / "expected_output.txt").unlink()
        (track / "track.yaml").write_text("title: Partial\nlessons:\n  - weighted\n")
        (lesson / "solution" / "model.py").write_text(FULL)
        (lesson / "starter" / "model.py").write_text(
            "def f(x):\n    pass\n\n\ndef g(x):\n    pass\n"
        )
        (lesson / "questions.yaml").write_text(
            f"- id: {QUESTION}\n  type: choice\n  prompt: Which is right?\n"
            "  options: [wrong, right]\n  answer: 1\n  points: 2\n  explanation: Because.\n"
        )
    (lesson / "exercise.yaml").write_text(
        "title: Two functions\nprompt: Write f and g.\nentrypoint: model.py\n"
        "compare: exact\npoints: 6\n" + cases
    )
    return root


def run_in_process(request: RunRequest) -> RunResult:
    """Answer a value case's run as the case harness would: the value as JSON on stdout.

    For FakeSandbox: the test's own sources run in this process (never a student's).
    """
    config = json.loads(request.files["__codeblanks_case__.json"])
    names: dict[str, object] = {}
    exec(request.files[config["entrypoint"]].decode(), names)  # noqa: S102  the test's own code
    value = eval(config["expr"], names)  # noqa: S307  the lesson's own expression
    return RunResult(RunOutcome.EXITED, stdout=json.dumps(value).encode(), exit_code=0)


@dataclass
class Course:
    """The tool (its worker's tasks run in this process, on a FakeSandbox) and the demo LMS.

    The app's sends are recorded (testkit.celery) instead of going to a broker; drain() runs them
    as a worker would: the grading task itself, and each sync as its task runs it (a WAIT
    waits, as its retry would, since the demo LMS refuses two scores in one second).
    """

    lms: Lms
    server: BackgroundServer
    context: WorkerContext
    root: Path

    @property
    def store(self) -> Store:
        return self.lms.store

    @property
    def messages(self) -> list[Sent]:
        """What the app and the tasks run so far have sent, and drain() has not run."""
        sent: list[Sent] = self.lms.celery_app.sent
        return sent

    def link(self) -> Any:
        return self.lms.link(lesson=LESSON, title="Two functions", score=8.0)

    def drain(self) -> list[str]:
        """Run every message sent so far, and those they send; return the gradings' and
        syncs' outcomes."""
        celery = self.lms.celery_app
        outcomes = []
        while self.messages:
            sent = self.messages.pop(0)
            name, args = sent.name, sent.args
            if name == TaskName.GRADE_SUBMISSION:
                outcomes.append(celery.tasks[name].apply(args=args).get())
                continue
            if name in (TaskName.REFRESH_ROSTER, TaskName.READ_RESULTS):
                # a teacher's launch and pages read the roster and the LMS's results
                celery.tasks[name].apply(args=args).get()  # (not an outcome these tests count)
                continue
            assert name == TaskName.SYNC_GRADE, name
            while True:
                result = sync_pair(
                    self.context.store, self.context.catalog, self.context.poster, *args,
                    self.context.settings.sync_attempts,
                )  # fmt: skip
                if result.outcome is not Synced.WAIT:
                    break
                time.sleep(result.retry_in_s)
            outcomes.append(result.outcome.value)
        return outcomes

    def change_cases(self, cases: str) -> None:
        """Rewrite the exercise's cases and load the catalog again, as a restart would."""
        catalog = load_catalog(write_lessons(self.root, cases))
        swap(self.lms.app, catalog=catalog)
        self.lms.lti.catalog = catalog
        self.context.catalog = catalog

    def close(self) -> None:
        self.lms.demo.stop()
        self.server.stop()
        self.store.dispose()


def open_course(tmp_path: Path, **settings: Any) -> Course:
    """Start the tool on the partial lesson, and the demo LMS, registered with each other."""
    root = write_lessons(tmp_path / "lessons")
    changes = {"lessons_dir": root, "submit_rate": 1_000_000, **settings}
    lms, server = make_lms(tmp_path, settings_changes=changes, fake_celery=True)
    context = attach_worker(lms.app, FakeSandbox(run_in_process))
    return Course(lms, server, context, root)


@dataclass
class Student:
    """A user of the demo LMS, launched into a link of the tool: answers and submits."""

    course: Course
    who: str
    headers: dict[str, str]
    placement_id: int

    @classmethod
    def launch(cls, course: Course, who: str, link: Any) -> Student:
        with requests.Session() as browser:
            headers, placement_id = signed_in_headers(browser, course.lms, who, link)
        return cls(course, who, headers, placement_id)

    def _post(self, path: str, body: dict[str, Any]) -> requests.Response:
        url = f"{self.course.lms.tool_url}/api/placements/{self.placement_id}/{path}"
        return requests.post(url, json=body, headers=self.headers, timeout=10)

    def answer(self, given: object = RIGHT) -> None:
        answered = self._post("answers", {"question_id": QUESTION, "answer": given})
        assert answered.status_code == 201, answered.text

    def try_submit(self, source: str) -> requests.Response:
        return self._post("submissions", {"source": source})

    def submit(self, source: str) -> int:
        submitted = self.try_submit(source)
        assert submitted.status_code == 202, submitted.text
        return int(submitted.json()["id"])

    def in_the_lms(self) -> tuple[float | None, float | None]:
        """Return (scoreGiven, scoreMaximum) that the demo LMS's gradebook holds of the student:
        its latest applied score, read from the platform's own store."""
        sub = self.course.lms.platform.user_sub(self.who)
        held = [score for (user, _item), score in self.course.lms.platform.gradebook().items()
                if user == sub]  # fmt: skip
        if not held:
            return (None, None)
        [score] = held
        body = score.body
        assert body["gradingProgress"] == "FullyGraded"  # a Pending score blanks the grade
        return (body.get("scoreGiven"), body.get("scoreMaximum"))
