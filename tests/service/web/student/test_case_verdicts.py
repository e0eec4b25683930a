"""A verdict's cases on the student's page, in the JSON API and in the stream.

A hidden case's input, expected result, output and errors reach the student only once the
placement's reveal policy allows; then they are shown as a visible case's are. Submissions
are graded through the real path (the store's writer, workers.grading.grade_stored, the
cases judged on the host) with a scripted sandbox: it answers as a student's program would.
"""

import json
import re
import shutil
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from core.cases import HARNESS, HARNESS_CONFIG
from core.runs import RunOutcome, RunRequest, RunResult
from service.store.models import Placement, Submission, utcnow
from service.web import extensions
from testkit.factories import place, submission
from testkit.sessions import sign_in
from tests.conftest import SEED
from tests.service.sessions import text_of
from tests.service.web import two_stores
from workers.grading import Outcome, grade_stored
from workers.sandbox.fake import FakeSandbox

# every test here runs on SQLite and on PostgreSQL
database_url, store = two_stores.database_url, two_stores.store
celery_app, sent = two_stores.celery_app, two_stores.sent  # every send recorded

CASES = "cases/shout"  # a visible case first
HIDDEN_FIRST = "cases/hidden-first"
SEED_ID = "seed/what-is-attention"

# what a hidden case holds, and what a program printed on it: each unique on the page
SECRETS = {
    "input": "SENTINEL-INPUT-a41",
    "expected": "SENTINEL-EXPECTED-b52",
    "expr": "SENTINEL-EXPR-c63",
    "value": "SENTINEL-VALUE-d74",
    "got": "SENTINEL-GOT-e85",
    "stderr": "SENTINEL-ERR-f96",
    "got value": "SENTINEL-GOTVALUE-g07",
    "value stderr": "SENTINEL-ERR2-h18",
}

VISIBLE = [
    {"name": "shout", "stdin": "hello\n", "output": "HELLO\n", "weight": 2},
    {"name": "two lines", "stdin": "a\nb\n", "output": "A\nB\n"},
    {"name": "length", "expr": 'size("abc")', "expected": 3},
]
HIDDEN = [
    {
        "name": "secret",
        "stdin": SECRETS["input"] + "\n",
        "output": SECRETS["expected"] + "\n",
        "hidden": True,
    },
    {
        "name": "secret value",
        "expr": f'code("{SECRETS["expr"]}")',
        "expected": SECRETS["value"],
        "hidden": True,
    },
]
SOLUTION = """import sys


def size(text):
    return len(text)


def code(text):
    return text.replace("EXPR-c63", "VALUE-d74")


if __name__ == "__main__":
    print(sys.stdin.read().upper(), end="")
"""
PARTLY = "# partly right\n"
RIGHT = "# right\n"


def write_lesson(lesson_dir: Path, cases: list[dict]) -> None:
    """Write a lesson whose exercise has `cases` (6 points) into `lesson_dir`."""
    for part in ("starter", "solution"):
        (lesson_dir / part).mkdir(parents=True)
    (lesson_dir / "starter" / "main.py").write_text("import sys\n")
    (lesson_dir / "solution" / "main.py").write_text(SOLUTION)
    (lesson_dir / "lesson.md").write_text("---\ntitle: Shouting, case by case\n---\nShout.\n")
    exercise = {
        "title": "Shout",
        "prompt": "Print what you read, in capitals; `size` and `code` as the cases say.",
        "entrypoint": "main.py",
        "points": 6,
        "cases": cases,
    }
    (lesson_dir / "exercise.yaml").write_text(yaml.safe_dump(exercise, sort_keys=False))


def write_catalog(root: Path) -> Path:
    """Write a catalog of two lessons with cases and a copy of the seed lesson; return it."""
    track = root / "cases"
    track.mkdir(parents=True)
    (track / "track.yaml").write_text("title: Cases\nlessons:\n  - shout\n  - hidden-first\n")
    write_lesson(track / "shout", VISIBLE + HIDDEN)
    write_lesson(track / "hidden-first", HIDDEN + VISIBLE)
    seed_track = root / "seed"
    seed_track.mkdir()
    (seed_track / "track.yaml").write_text("title: Seed\nlessons:\n  - what-is-attention\n")
    shutil.copytree(SEED, seed_track / "what-is-attention")
    return root


def student_program(request: RunRequest) -> RunResult:
    """Answer a case's run as the submitted program would (RIGHT: every case right)."""
    files = request.files
    right = RIGHT in (files.get("main.py") or b"").decode()
    if request.entrypoint == HARNESS:
        expr = json.loads(files[HARNESS_CONFIG])["expr"]
        if expr.startswith("size"):
            return _exited("3")
        got = SECRETS["value"] if right else SECRETS["got value"]
        return _exited(json.dumps(got), SECRETS["value stderr"] + "\n")
    stdin = request.stdin.decode()
    if stdin == SECRETS["input"] + "\n":
        got = SECRETS["expected"] if right else SECRETS["got"]
        return _exited(got + "\n", SECRETS["stderr"] + "\n")
    if stdin == "a\nb\n":
        return _exited("A\nB\n" if right else "A\nX\n")
    return _exited(stdin.upper())


def _exited(stdout: str, stderr: str = "") -> RunResult:
    return RunResult(
        RunOutcome.EXITED, stdout.encode(), stderr.encode(), exit_code=0, duration_ms=3
    )


@pytest.fixture
def settings(settings, tmp_path):
    """The app's settings, its catalog the test's own: the lessons with cases, and the seed."""
    return replace(settings, lessons_dir=write_catalog(tmp_path / "lessons"))


def graded(app, placed, source, sandbox=None):
    """Write a submission as the submit path does and grade it as a worker does; its id."""
    store = extensions.store(app)
    queued = submission(store, placed.placement_id, placed.user_id, source)
    sandbox = sandbox or FakeSandbox(student_program)
    result = grade_stored(store, extensions.catalog(app), sandbox, extensions.settings(app), queued)
    assert result.outcome is Outcome.GRADED
    return queued


def seen(client, placed, submission_id) -> dict[str, str]:
    """Everything the student can be shown of the submission: page, progress, API, stream."""
    url = f"/lessons/{placed.placement_id}"
    return {
        "page": client.get(url).get_data(as_text=True),
        "progress": client.get(f"{url}/progress").get_data(as_text=True),
        "api": client.get(f"/api/submissions/{submission_id}").get_data(as_text=True),
        "stream": client.get(f"/api/submissions/{submission_id}/events").get_data(as_text=True),
    }


def leaks(shown: dict[str, str]) -> dict[str, list[str]]:
    """Return, for each view, the secrets it shows (plain ASCII: no escaping hides them)."""
    return {where: [s for s in SECRETS.values() if s in body] for where, body in shown.items()}


def set_policy(store, placed, **policy):
    with store.session() as session:
        placement = session.get(Placement, placed.placement_id)
        for key, value in policy.items():
            setattr(placement, key, value)


@pytest.fixture
def placed(store):
    return place(store, lesson_id=CASES, reveal="after_due", due_at=utcnow() + timedelta(days=1))


@pytest.fixture
def student(client, placed):
    sign_in(client, placed.user_id, [placed.placement_id])
    return placed


def test_hidden_cases_stay_hidden_until_the_due_date_reveals_them(app, client, store, student):
    partly = graded(app, student, PARTLY)
    before = seen(client, student, partly)
    assert leaks(before) == {"page": [], "progress": [], "api": [], "stream": []}
    # the visible cases are shown whole, the hidden ones by name and verdict
    assert "HELLO" in before["page"] and "A\nX" in before["page"]
    assert "Hidden case &#39;secret&#39; failed." in before["page"]
    verdict = json.loads(before["api"])["verdict"]
    assert [case["name"] for case in verdict["cases"]] == [
        "shout", "two lines", "length", "secret", "secret value"
    ]  # fmt: skip
    assert verdict["cases"][3] == {
        "name": "secret",
        "status": "failed",
        "weight": 1.0,
        "hidden": True,
        "feedback": "Hidden case 'secret' failed.",
        # the same, to be translated (core.messages): its name and verdict, nothing more
        "feedback_message": {"t": "Hidden case '{name}' failed.", "a": {"name": "secret"}},
    }
    assert verdict["cases"][1]["diff"] == {"line": 2, "expected": "B", "got": "X"}
    assert verdict["first_difference"] == {"line": 2, "expected": "B", "got": "X"}
    assert (verdict["output_case"], verdict["stdout"]) == ("shout", "HELLO\n")

    set_policy(store, student, due_at=utcnow() - timedelta(minutes=1))
    after = seen(client, student, partly)
    everything = sorted(SECRETS.values())
    assert {where: sorted(found) for where, found in leaks(after).items()} == {
        "page": everything, "progress": everything, "api": everything, "stream": everything
    }  # fmt: skip
    shown = json.loads(after["api"])["verdict"]["cases"][3]
    assert (shown["input"], shown["got"]) == (
        "stdin:\n" + SECRETS["input"] + "\n", SECRETS["got"] + "\n"
    )  # fmt: skip


def test_a_pass_reveals_the_hidden_cases_of_every_attempt(app, client, store, placed):
    set_policy(store, placed, reveal="after_pass", due_at=None)
    sign_in(client, placed.user_id, [placed.placement_id])
    partly = graded(app, placed, PARTLY)
    assert leaks(seen(client, placed, partly)) == {
        "page": [], "progress": [], "api": [], "stream": []
    }  # fmt: skip
    graded(app, placed, RIGHT)
    # the first attempt's API answer and stream now show what its hidden cases held
    after = seen(client, placed, partly)
    for where in ("api", "stream"):
        assert sorted(leaks(after)[where]) == sorted(SECRETS.values()), where
    # the page shows the newest verdict (all passed) and the cases it checked, revealed
    page = after["page"]
    assert SECRETS["input"] in page and SECRETS["expected"] in page and SECRETS["expr"] in page
    assert "5 of 5 cases passed</strong>\n  — 6 of 6 points" in page


def test_the_case_list_on_the_page(app, client, store, student):
    graded(app, student, PARTLY)
    page = client.get(f"/lessons/{student.placement_id}").get_data(as_text=True)
    verdict = page.split('id="verdict"')[1].split("</section>")[0]
    assert "2 of 5 cases passed</strong>\n  — 3 of 6 points." in verdict
    assert '<ol class="cases" aria-label="Cases">' in verdict
    headings = [text_of(h) for h in re.findall(r"<h4[^>]*>(.*?)</h4>", verdict, re.S)]
    assert headings == [
        "✔ shout — Passed",
        "✘ two lines — Failed",
        "✔ length — Passed",
        "✘ secret — Failed (hidden case)",
        "✘ secret value — Failed (hidden case)",
    ]
    assert verdict.count("<h4") == verdict.count('<li class="case') == 5
    # the failing visible case: its input, expected, output and first difference
    two_lines = verdict.split('id="case-2"')[1].split("</li>")[0]
    assert '<dt>Input</dt><dd><pre tabindex="0">stdin:\na\nb\n</pre></dd>' in two_lines
    assert '<dt>Expected output</dt><dd><pre tabindex="0">A\nB\n</pre></dd>' in two_lines
    assert '<dt>Your program printed</dt><dd><pre tabindex="0">A\nX\n</pre></dd>' in two_lines
    assert "First difference, on line 2 of the output:" in two_lines
    assert "<details open>" in two_lines
    length = verdict.split('id="case-3"')[1].split("</li>")[0]
    assert '<dt>Expression</dt><dd><pre tabindex="0">size(&#34;abc&#34;)</pre>' in length
    assert "<dt>Your value</dt>" in length and "<details>" in length  # passed: folded
    secret = verdict.split('id="case-4"')[1].split("</li>")[0]
    assert "Its input and expected result are not shown until the sample solution is." in secret
    assert "<pre" not in secret and "<dt>" not in secret
    # every <pre> of the verdict can take the focus; the run's output is the case's, once
    assert verdict.count("<pre") == verdict.count('<pre tabindex="0"') + verdict.count(
        '<pre class="output" tabindex="0"'
    )
    assert "Output (stdout)" not in verdict
    # the exercise says what it checks, a hidden case by name only
    exercise = page.split('id="exercise-title"')[1].split('<form id="submit-form"')[0]
    assert "What is checked" in exercise and "Expected output</h3>" not in exercise
    hidden = '<span translate="no">secret</span> <span class="muted">(1 point, hidden)</span>'
    assert hidden in exercise
    assert "A hidden case: its input and expected result are not shown." in exercise


def test_a_hidden_first_case_lends_the_verdict_no_output(app, client, store):
    placed = place(store, lesson_id=HIDDEN_FIRST)
    sign_in(client, placed.user_id, [placed.placement_id])
    partly = graded(app, placed, PARTLY)
    shown = seen(client, placed, partly)
    assert leaks(shown) == {"page": [], "progress": [], "api": [], "stream": []}
    verdict = json.loads(shown["api"])["verdict"]
    # the run's output is the first visible case's, and says so
    assert (verdict["stdout"], verdict["stderr"], verdict["output_case"]) == (
        "HELLO\n",
        "",
        "shout",
    )
    # the first failing case is hidden: its difference is no one's to show (core.verdicts)
    assert verdict["first_difference"] is None
    assert verdict["cases"][3]["diff"] == {"line": 2, "expected": "B", "got": "X"}
    assert verdict["cases"][0]["feedback"] == "Hidden case 'secret' failed."


def test_the_seed_lesson_shows_no_case_list(app, client, store):
    placed = place(store, lesson_id=SEED_ID)
    sign_in(client, placed.user_id, [placed.placement_id])
    failing = graded(app, placed, "# prints: not yet\n", FakeSandbox())
    page = client.get(f"/lessons/{placed.placement_id}").get_data(as_text=True)
    verdict = page.split('id="verdict"')[1].split("</section>")[0]
    assert 'class="cases' not in page and "cases-summary" not in page and "<h4" not in verdict
    assert "First difference, on line 1 of the output:" in verdict
    stdout = '<pre class="output" tabindex="0" role="region" aria-label="Standard output">'
    assert stdout + "not yet" in verdict
    assert '<h3 id="expected-title">Expected output</h3>' in page
    body = json.loads(client.get(f"/api/submissions/{failing}").get_data(as_text=True))
    keys = {"status", "score", "stdout", "stderr", "exit_code", "duration_ms", "feedback",
            "first_difference", "grader_failed", "cases", "output_case",
            "figures"}  # fmt: skip
    assert set(body["verdict"]) == keys
    assert [case["name"] for case in body["verdict"]["cases"]] == ["expected output"]
    assert (
        body["verdict"]["stdout"] == "not yet"
        and body["verdict"]["output_case"] == "expected output"
    )


def test_a_verdict_graded_before_cases_were_kept_shows_as_before(app, client, store, student):
    sid = graded(app, student, PARTLY)
    with store.session() as session:
        session.get(Submission, sid).cases = None
    page = client.get(f"/lessons/{student.placement_id}").get_data(as_text=True)
    assert "cases-summary" not in page and "Output (stdout)" in page
    body = json.loads(client.get(f"/api/submissions/{sid}").get_data(as_text=True))
    assert body["verdict"]["cases"] == [] and body["verdict"]["output_case"] is None
