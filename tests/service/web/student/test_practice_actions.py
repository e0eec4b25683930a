"""The Run button's API and page routes (issue 30, points 1 and 2): who may run, what it
takes, what it answers; a practice run is no attempt, no score, nothing for the LMS, and
nothing of a hidden case ever shows in its answers (not its name, not its count)."""

import re
import shutil
from dataclasses import replace
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from core.lessons import load_catalog
from core.runs import RunOutcome, RunResult
from service.queue import TaskName
from service.store.models import (
    Grade,
    GradeSync,
    PracticeRun,
    QuestionAnswer,
    Submission,
    utcnow,
)
from service.web import extensions
from testkit.apps import swap
from testkit.celery import Sent
from testkit.factories import SCALED, add_student, place
from testkit.sessions import sign_in
from tests.conftest import LESSONS
from tests.service.sessions import form_token, text_of
from tests.service.web import two_stores
from workers.practicing import Practiced, practice_stored
from workers.sandbox.fake import FakeSandbox

# every test here runs on SQLite and on PostgreSQL
database_url, store = two_stores.database_url, two_stores.store
celery_app, sent = two_stores.celery_app, two_stores.sent  # every send recorded

POSITIONAL = "expert/positional-encoding"
SOURCE = "print('hello')\n"


@pytest.fixture
def placed(store):
    return place(store, SCALED, line_item_url="https://lms.example/lineitems/1/lineitem")


@pytest.fixture
def student(client, placed):
    sign_in(client, placed.user_id, [placed.placement_id])
    return placed


def run(client, placement_id, **body):
    body.setdefault("source", SOURCE)
    return client.post(f"/api/placements/{placement_id}/runs", json=body)


def worked(app, run_id, responder=None):
    """Run the practice run as a worker would, on a sandbox that answers `responder`."""
    sandbox = FakeSandbox(
        responder or (lambda r: RunResult(RunOutcome.EXITED, b"1\n", exit_code=0))
    )
    ran = practice_stored(
        extensions.store(app), extensions.catalog(app), sandbox, extensions.settings(app), run_id
    )
    assert ran.outcome is Practiced.DONE
    return sandbox


def counts(store, *models):
    with store.session() as session:
        return [session.scalar(select(func.count()).select_from(m)) for m in models]


def test_a_run_is_queued_then_sent_by_name_and_followed_until_done(app, client, student, sent):
    response = run(client, student.placement_id, stdin="2 2\n")
    assert response.status_code == 202
    body = response.get_json()
    assert body == {"id": body["id"], "status": "queued", "url": f"/api/runs/{body['id']}"}
    assert response.headers["Location"] == body["url"]
    assert sent == [Sent(TaskName.RUN_PRACTICE, [body["id"]], options={"queue": "grade"})]
    queued = client.get(body["url"]).get_json()
    assert (queued["status"], queued["result"], queued["waiting"]) == ("queued", None, False)
    worked(app, body["id"])
    done = client.get(body["url"]).get_json()
    assert done["status"] == "done"
    result = done["result"]
    assert set(result) == {
        "status", "stdout", "stderr", "exit_code", "output_case", "duration_ms", "feedback",
        "first_difference", "grader_failed", "cases", "input", "figures",
    }  # fmt: skip
    assert result["figures"] == [] and result["grader_failed"] is False
    assert result["input"]["stdin"] == "2 2\n" and result["stdout"] == "1\n"
    assert result["output_case"] is None  # the output shown is the run on the input's
    assert result["status"] == "failed" and result["feedback"].startswith("0 of 4 cases passed.")


def test_without_input_the_output_is_the_first_cases_as_in_a_verdict(app, client, student):
    url = run(client, student.placement_id).get_json()["url"]
    worked(app, int(url.rsplit("/", 1)[1]))
    result = client.get(url).get_json()["result"]
    assert result["input"] is None
    assert result["output_case"] == "the lesson's example" == result["cases"][0]["name"]


def hidden_traces(catalog, lesson_id):
    exercise = catalog.lesson(lesson_id).exercise
    traces = []
    for case in exercise.cases:
        if case.hidden:
            traces += [case.name, case.expr or "", case.stdin, case.output]
    return [trace for trace in traces if trace]


@pytest.mark.parametrize("lesson_id", [SCALED, POSITIONAL])
def test_nothing_of_a_hidden_case_shows_in_any_answer(app, client, store, lesson_id):
    placed = place(store, lesson_id)
    sign_in(client, placed.user_id, [placed.placement_id])
    catalog = extensions.catalog(app)
    exercise = catalog.lesson(lesson_id).exercise
    shown, hidden = [[c for c in exercise.cases if c.hidden is h] for h in (False, True)]
    assert hidden  # the lesson has hidden cases: the test means something
    answers = [run(client, placed.placement_id, stdin="3 4\n")]
    url = answers[0].get_json()["url"]
    run_id = int(url.rsplit("/", 1)[1])
    answers.append(client.get(url))
    sandbox = worked(app, run_id)
    answers.append(client.get(url))
    answers.append(client.get(f"/lessons/{placed.placement_id}/runs/{run_id}"))
    words = "\n".join(answer.get_data(as_text=True) for answer in answers)
    words += "\n".join(str(request) for request in sandbox.requests)
    leaked = [trace for trace in hidden_traces(catalog, lesson_id) if trace in words]
    assert leaked == []
    result = answers[2].get_json()["result"]
    assert [case["name"] for case in result["cases"]] == [case.name for case in shown]
    assert not any(case["hidden"] for case in result["cases"])
    # not its count either: every count in the answers is the visible cases'
    counted = {int(n) for n in re.findall(r"of (\d+) cases? passed", words)}
    assert counted == {len(shown)}
    assert len(sandbox.requests) == len(shown) + 1  # the input, then each visible case


def test_a_run_is_no_attempt_changes_no_score_and_sends_nothing_to_the_lms(
    app, client, store, sent
):
    placed = place(store, SCALED, max_attempts=1, line_item_url="https://lms.example/li/1")
    sign_in(client, placed.user_id, [placed.placement_id])
    for _ in range(3):
        run_id = run(client, placed.placement_id).get_json()["id"]
        worked(app, run_id, lambda r: RunResult(RunOutcome.EXITED, b"", exit_code=0))
    assert counts(store, Submission, Grade, GradeSync) == [0, 0, 0]
    assert {message.name for message in sent} == {TaskName.RUN_PRACTICE}  # no sync, no grade
    page = client.get(f"/lessons/{placed.placement_id}").get_data(as_text=True)
    assert "Attempts used: 0 of 1." in text_of(page)
    submitted = client.post(
        f"/api/placements/{placed.placement_id}/submissions", json={"source": SOURCE}
    )
    assert submitted.status_code == 202  # the one attempt is still there


def test_runs_go_on_past_the_due_date_and_after_the_last_attempt(app, client, store, sent):
    past = utcnow() - timedelta(hours=1)
    placed = place(store, SCALED, due_at=past, max_attempts=1)
    sign_in(client, placed.user_id, [placed.placement_id])
    submitted = client.post(
        f"/api/placements/{placed.placement_id}/submissions", json={"source": SOURCE}
    )
    assert submitted.status_code == 403  # past due: no more submissions
    assert run(client, placed.placement_id).status_code == 202  # but a run changes nothing


def test_a_run_is_shown_to_its_author_only(app, client, store, student):
    url = run(client, student.placement_id).get_json()["url"]
    run_id = int(url.rsplit("/", 1)[1])
    worked(app, run_id)
    page_url = f"/lessons/{student.placement_id}/runs/{run_id}"
    assert client.get(page_url).status_code == 200
    sign_in(client, add_student(store, student, "student-2"), [student.placement_id])
    for answer in (client.get(url), client.get("/api/runs/999")):
        assert answer.status_code == 404 and answer.get_json()["error"] == "unknown_run"
    assert client.get(page_url).status_code == 404  # the page's own: a page that says so
    other = place(store, SCALED)  # the author, on a placement not the run's
    sign_in(client, student.user_id, [student.placement_id, other.placement_id])
    assert client.get(f"/lessons/{other.placement_id}/runs/{run_id}").status_code == 404


def questions_only_catalog(root):
    shutil.copytree(LESSONS / "expert" / "what-is-attention", root / "expert" / "quiz")
    for name in ("exercise.yaml", "expected_output.txt"):
        (root / "expert" / "quiz" / name).unlink()
    for folder in ("starter", "solution"):
        shutil.rmtree(root / "expert" / "quiz" / folder)
    (root / "expert" / "track.yaml").write_text("title: Expert\nlessons:\n  - quiz\n")
    return load_catalog(root)


@pytest.mark.parametrize(
    ("setup", "status", "error"),
    [
        ("nobody", 401, "not_signed_in"),
        ("unknown-placement", 404, "unknown_placement"),
        ("not-launched", 403, "not_launched"),
        ("no-exercise", 404, "no_exercise"),
        ("lesson-gone", 404, "unknown_lesson"),
    ],
)
def test_run_refusals(app, client, store, sent, tmp_path, setup, status, error):
    lesson = {"lesson-gone": "expert/gone", "no-exercise": "expert/quiz"}.get(setup, SCALED)
    if setup == "no-exercise":
        swap(app, catalog=questions_only_catalog(tmp_path / "lessons"))
    placed = place(store, lesson)
    target = placed.placement_id + (100 if setup == "unknown-placement" else 0)
    if setup not in ("nobody", "not-launched"):
        sign_in(client, placed.user_id, [target])
    if setup == "not-launched":
        sign_in(client, placed.user_id)
    response = run(client, target)
    assert (response.status_code, response.get_json()["error"]) == (status, error)
    assert response.get_json()["message"]
    assert sent == [] and counts(store, PracticeRun) == [0]


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({"source": "x" * (64 * 1024 + 1)}, 413, "too_large"),
        ({"source": "print(1)\x00"}, 400, "nul_character"),
        ({"source": "x", "stdin": "1" * (16 * 1024 + 1)}, 413, "too_large"),
        ({"source": "x", "stdin": "1\x002"}, 400, "nul_character"),
        ({"source": "x", "stdin": 12}, 400, "bad_request"),
        ({"code": "x"}, 400, "bad_request"),
    ],
    ids=["64k-source", "nul-source", "16k-input", "nul-input", "input-not-text", "no-source"],
)
def test_run_input_checks(client, student, sent, store, body, status, error):
    response = client.post(f"/api/placements/{student.placement_id}/runs", json=body)
    assert (response.status_code, response.get_json()["error"]) == (status, error)
    assert response.get_json()["message"]
    assert sent == [] and counts(store, PracticeRun) == [0]


def test_an_input_of_exactly_16_kib_is_taken(client, student):
    assert run(client, student.placement_id, stdin="é" * (8 * 1024)).status_code == 202


def test_a_refused_input_is_told_in_the_readers_language(client, student):
    body = {"source": "x", "stdin": "\x00"}
    url = f"/api/placements/{student.placement_id}/runs"
    response = client.post(url, json=body, headers={"Accept-Language": "tr"})
    assert response.get_json() == {
        "error": "nul_character",
        "message": "Girdi bir NUL karakteri içeriyor.",
    }


def test_runs_have_their_own_rate_limit_with_retry_after(app, client, store, student, sent):
    swap(app, settings=replace(extensions.settings(app), run_rate=3, run_window_s=60))
    for _ in range(3):
        assert run(client, student.placement_id).status_code == 202
    response = run(client, student.placement_id)
    assert (response.status_code, response.get_json()["error"]) == (429, "rate_limited")
    assert 1 <= int(response.headers["Retry-After"]) <= 60
    assert "You ran your code 3 times in 60 s" in response.get_json()["message"]
    # submissions count apart: the runs spent none of the student's submit rate
    swap(app, settings=replace(extensions.settings(app), submit_rate=1))
    submitted = client.post(
        f"/api/placements/{student.placement_id}/submissions", json={"source": SOURCE}
    )
    assert submitted.status_code == 202
    other = add_student(store, student, "student-2")  # and the rate is per student
    sign_in(client, other, [student.placement_id])
    assert run(client, student.placement_id).status_code == 202


def test_a_second_run_replaces_the_queued_one(app, client, student, sent):
    first = run(client, student.placement_id).get_json()
    second = run(client, student.placement_id).get_json()
    old = client.get(first["url"]).get_json()
    assert (old["status"], old["replaced"], old["result"]) == ("done", True, None)
    assert client.get(second["url"]).get_json()["status"] == "queued"
    assert [message.args for message in sent] == [[first["id"]], [second["id"]]]


def test_the_page_offers_run_and_an_input_box_where_the_program_reads_stdin(client, store):
    for lesson_id, box in ((POSITIONAL, True), (SCALED, False)):
        placed = place(store, lesson_id)
        sign_in(client, placed.user_id, [placed.placement_id])
        page = client.get(f"/lessons/{placed.placement_id}").get_data(as_text=True)
        assert 'id="run"' in page and f'formaction="/lessons/{placed.placement_id}/runs' in page
        assert ('<textarea id="stdin" name="stdin"' in page) is box
        if box:  # the lesson's example input, ready to run
            assert re.search(r'<textarea id="stdin"[^>]*>3 4\n</textarea>', page)
        assert "without using an attempt" in text_of(page)


def test_without_javascript_run_is_a_form_post_and_the_page_shows_the_run(app, client, store, sent):
    placed = place(store, POSITIONAL)
    sign_in(client, placed.user_id, [placed.placement_id])
    page = client.get(f"/lessons/{placed.placement_id}").get_data(as_text=True)
    form = {"csrf": form_token(page), "source": SOURCE, "stdin": "5 6\r\n"}
    response = client.post(f"/lessons/{placed.placement_id}/runs", data=form)
    assert response.status_code == 303 and response.headers["Location"].endswith("#practice")
    with store.session() as session:
        kept = session.scalar(select(PracticeRun))
        assert (kept.source, kept.stdin) == (SOURCE, "5 6\n")
    waiting = text_of(client.get(f"/lessons/{placed.placement_id}").get_data(as_text=True))
    assert (
        "Your practice run is waiting for a sandbox… Reload the page to see its result." in waiting
    )
    worked(app, kept.id, lambda r: RunResult(RunOutcome.EXITED, b"a table\n", exit_code=0))
    shown = text_of(client.get(f"/lessons/{placed.placement_id}").get_data(as_text=True), True)
    assert "Practice run: Failed" in shown and "Not an attempt:" in shown
    assert "On your input 5 6" in shown and "a table" in shown
    assert "0 of 4 cases passed" in shown and "points" not in shown.split("Practice run")[1]
    assert counts(store, Submission, QuestionAnswer) == [0, 0]
    missing_csrf = client.post(f"/lessons/{placed.placement_id}/runs", data={"source": "x"})
    assert missing_csrf.status_code in (400, 403)


def test_the_pages_run_partial_lists_the_cases_as_a_verdict_does(app, client, student):
    run_id = run(client, student.placement_id).get_json()["id"]
    worked(app, run_id)
    body = client.get(f"/lessons/{student.placement_id}/runs/{run_id}").get_json()
    assert (body["status"], body["pending"]) == ("done", False)
    html = body["practice"]
    assert 'id="practice-result"' in html and 'aria-label="Cases of the practice run"' in html
    assert 'id="practice-case-1"' in html and 'id="case-1"' not in html  # no id clash
    assert "0 of 4 cases passed" in text_of(html)


def test_a_run_the_grader_lost_says_so_and_costs_nothing(app, client, store, student):
    def breaks(request):
        raise OSError("the sandbox broke")

    run_id = run(client, student.placement_id).get_json()["id"]
    settings = extensions.settings(app)
    for _ in range(settings.grade_attempts):
        practice_stored(store, extensions.catalog(app), FakeSandbox(breaks), settings, run_id)
    result = client.get(f"/api/runs/{run_id}").get_json()["result"]
    assert result["grader_failed"] is True and result["status"] == "error"
    assert result["feedback"].startswith("The grader lost your run (3 tries).")
    assert result["cases"] == [] and result["input"] is None
    shown = client.get(f"/lessons/{student.placement_id}/runs/{run_id}").get_json()
    assert "This is our fault, not yours: run it again." in text_of(shown["practice"])
    assert counts(store, Submission) == [0]
