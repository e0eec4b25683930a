"""A verdict tells its student nothing of a hidden case but its name, weight and pass or fail
(issue 25, point 1), on every door: the JSON API, its stream, the lesson page and its
progress answer.

A program can read its case's input and sleep for each character of it, or end a hidden case
in a different way (a time-out, a crash) for each bit it wants out: the verdict then differed
in its time, its status and its feedback. Here two students' submissions differ only in how
their hidden cases went, and each sees the same verdict, ids and timestamps aside. Graded by
the real path (the store's writer, workers.grading.grade_stored) with a scripted sandbox whose
times are exact; tests/workers/test_hidden_timing.py does it on a real worker and sandbox.
"""

import json
import re
from dataclasses import replace

import pytest

from core.cases import HARNESS, HARNESS_CONFIG
from core.runs import RunOutcome, RunRequest, RunResult
from service.store.models import Placement
from testkit.factories import add_student, place
from testkit.sessions import sign_in
from tests.service.sessions import text_of
from tests.service.web import two_stores
from tests.service.web.student.test_case_verdicts import (
    CASES,
    PARTLY,
    RIGHT,
    SECRETS,
    graded,
    seen,
    student_program,
    write_catalog,
)
from workers.sandbox.fake import FakeSandbox

# every test here runs on SQLite and on PostgreSQL
database_url, store = two_stores.database_url, two_stores.store
celery_app, sent = two_stores.celery_app, two_stores.sent  # every send recorded


@pytest.fixture
def settings(settings, tmp_path):
    """The app's settings, its catalog test_case_verdicts's: lessons with hidden cases."""
    return replace(settings, lessons_dir=write_catalog(tmp_path / "lessons"))


def hidden(request: RunRequest) -> bool:
    """Return whether a run is one of the hidden cases' (a program can tell by its input)."""
    if request.entrypoint == HARNESS:
        return json.loads(request.files[HARNESS_CONFIG])["expr"].startswith("code")
    return request.stdin.decode() == SECRETS["input"] + "\n"


def ending(outcome: RunOutcome | None = None, exit_code: int = 0, ms: int = 3):
    """Return a sandbox whose hidden cases end so: as the program would, or as `outcome`."""

    def run(request: RunRequest) -> RunResult:
        found = student_program(request)
        if not hidden(request):
            return found
        if outcome is not None:
            return RunResult(outcome, b"", b"", exit_code=None, duration_ms=ms, reason="limit")
        if exit_code:
            return RunResult(RunOutcome.EXITED, b"", b"Boom\n", exit_code=exit_code, duration_ms=ms)
        return replace(found, duration_ms=ms)

    return FakeSandbox(run)


def student_data(client, placed, user_id, submission_id) -> dict[str, object]:
    """Return everything the student is shown of the submission, ids and times taken out."""
    sign_in(client, user_id, [placed.placement_id])
    shown = seen(client, placed, submission_id)
    api = _untimed(json.loads(shown["api"]))
    events = re.findall(r"event: (\w+)\ndata: (.*)\n", shown["stream"])
    stream = [(name, _untimed(json.loads(data))) for name, data in events]
    progress = json.loads(shown["progress"])
    return {
        "api": api,
        "stream": stream,
        "page": _results(shown["page"]),
        "progress": (progress["score"], _results(progress["results"])),
    }


def _untimed(state: dict) -> dict:
    return {k: v for k, v in state.items() if k not in ("id", "created_at", "graded_at")}


def _results(page: str) -> tuple[str, str]:
    """Return a page's verdict and its attempts table, each attempt's time handed in taken out."""
    verdict = page.split('id="verdict"')[1].split("</section>")[0]
    attempts = page.split('<table class="attempts"')[1].split("</table>")[0]
    # the time each attempt was handed in is the one cell that tells two attempts apart, and
    # its links name its submission and carry the reader's session
    attempts = re.sub(r"(<tr><td>\d+</td><td>)[^<]*(</td>)", r"\1(when)\2", attempts)
    return verdict, re.sub(r"attempts/\d+(\?s=[^\"]+)?", "attempts/(id)", attempts)


@pytest.fixture
def students(store):
    """A placement of the lesson with cases, and two of its students."""
    placed = place(store, lesson_id=CASES)
    return placed, add_student(store, placed, "student-2")


SAME_AS_A_WRONG_VALUE = [
    pytest.param(ending(ms=2400), id="a wrong value, 2.4 s"),
    pytest.param(ending(RunOutcome.TIMEOUT, ms=5000), id="timeout"),
    pytest.param(ending(exit_code=1), id="error"),
    pytest.param(ending(RunOutcome.MEMORY_LIMIT), id="memory_limit"),
    pytest.param(ending(RunOutcome.OUTPUT_LIMIT), id="output_limit"),
]


@pytest.mark.parametrize("other", SAME_AS_A_WRONG_VALUE)
def test_a_hidden_case_that_fails_otherwise_looks_like_a_wrong_value(app, client, students, other):
    placed, second = students
    first = graded(app, placed, PARTLY, ending())
    other_id = graded(app, replace(placed, user_id=second), PARTLY, other)
    one = student_data(client, placed, placed.user_id, first)
    two = student_data(client, placed, second, other_id)
    assert two == one
    verdict = one["api"]["verdict"]
    # the visible case that failed is shown whole, with its own time
    assert verdict["status"] == "failed" and verdict["duration_ms"] == 9  # 3 visible cases
    assert [c["status"] for c in verdict["cases"]][3:] == ["failed", "failed"]


def test_hidden_cases_that_pass_slowly_look_like_ones_that_pass_fast(app, client, students):
    placed, second = students
    fast = graded(app, placed, RIGHT, ending())
    slow = graded(app, replace(placed, user_id=second), RIGHT, ending(ms=2400))
    one = student_data(client, placed, placed.user_id, fast)
    assert student_data(client, placed, second, slow) == one
    assert one["api"]["verdict"]["duration_ms"] == 9
    attempts = one["page"][1]
    assert "<td>9 ms</td>" in attempts and "(when)" in attempts


def test_the_teacher_still_sees_how_a_hidden_case_ended(app, client, store, students):
    placed, second = students
    timed_out = graded(app, placed, PARTLY, ending(RunOutcome.TIMEOUT, ms=5000))
    with store.session() as session:
        course_id = session.get(Placement, placed.placement_id).course_id
    teacher = add_student(store, placed, "teacher-1")
    sign_in(client, teacher, teaches=[course_id])
    url = f"/teach/placements/{placed.placement_id}/students/{placed.user_id}"
    text = text_of(client.get(url).get_data(as_text=True), spaced=True)
    assert "secret hidden 1 Time limit exceeded" in text  # the stored verdict, whole
    assert "Your program ran out of time (5 s)." in text
    # and beside it, what its student reads of it
    assert "its student sees its name and verdict only (“Hidden case 'secret' failed.”)" in text
    student = student_data(client, placed, placed.user_id, timed_out)["api"]["verdict"]
    assert student["cases"][3]["status"] == "failed"
