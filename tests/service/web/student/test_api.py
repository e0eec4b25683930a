import json
import re
import threading
import time
from dataclasses import replace
from datetime import timedelta

import pytest

from core.runs import RunStatus
from service.queue import TaskName
from service.store import submissions
from service.store.models import GradeSync, QuestionAnswer, Submission, utcnow
from service.web import extensions
from testkit import factories
from testkit.apps import swap
from testkit.celery import FakeCelery, Sent
from testkit.factories import add_student, place
from testkit.sessions import sign_in
from tests.service.web import two_stores

SOURCE = "print('hello')\n"


# every test here runs on SQLite and on PostgreSQL, as the page tests do
database_url, store = two_stores.database_url, two_stores.store


@pytest.fixture
def sent():
    """Every send, with whether its submission was committed at that moment (None: a sync)."""
    return []


@pytest.fixture
def celery_app(settings, sent):
    """The app's Celery app: it sends nothing, and notes each send in `sent`."""

    def note(message: Sent) -> None:
        committed = None
        if message.name == TaskName.GRADE_SUBMISSION:
            with extensions.store().session() as session:  # the request's own app
                committed = session.get(Submission, message.args[0]) is not None
        sent.append((message, committed))

    return FakeCelery(settings, on_send=note)


@pytest.fixture
def placed(store):
    return place(store)


@pytest.fixture
def student(client, placed):
    sign_in(client, placed.user_id, [placed.placement_id])
    return placed


PAGE_SESSION = "page-session"  # stands for the signed session a page sends in its header


def submit(client, placement_id, **kwargs):
    kwargs.setdefault("json", {"source": SOURCE})
    headers = kwargs.get("headers") or {}
    if headers.get("X-CodeBlanks-Session") == PAGE_SESSION:
        kwargs["headers"] = {**headers, "X-CodeBlanks-Session": signed(client.application, client)}
    return client.post(f"/api/placements/{placement_id}/submissions", **kwargs)


def test_submit_commits_then_enqueues_by_name(client, student, sent, store):
    response = submit(client, student.placement_id)
    assert response.status_code == 202
    body = response.get_json()
    assert body["status"] == "queued"
    assert body["url"] == f"/api/submissions/{body['id']}" == response.headers["Location"]
    graded = Sent(TaskName.GRADE_SUBMISSION, [body["id"]], options={"queue": "grade"})
    assert sent == [(graded, True)]  # sent once its row was committed
    with store.session() as session:
        row = session.get(Submission, body["id"])
        assert (row.status, row.source, row.user_id) == ("queued", SOURCE, student.user_id)


def signed(app, client):
    """Return the client's cookie session, signed as a page would carry it."""
    with client.session_transaction() as session:
        data = dict(session)
    return app.session_interface.get_signing_serializer(app).dumps(data)


def test_submit_takes_a_raw_text_body_with_the_session_header(app, client, student, sent):
    token = signed(app, client)
    client.delete_cookie("session")  # the page's own session is all it has
    response = submit(client, student.placement_id, json=None, data=SOURCE.encode(),
                      content_type="text/x-python",
                      headers={"X-CodeBlanks-Session": token})  # fmt: skip
    assert response.status_code == 202


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"],
)
def test_a_cross_site_form_cannot_submit_with_the_cookie(
    client, student, sent, store, content_type
):
    response = submit(client, student.placement_id, json=None, data=b"source=print(1)",
                      content_type=content_type)  # fmt: skip
    assert response.status_code == 403 and response.get_json()["error"] == "cross_site"
    assert sent == []
    with store.session() as session:
        assert session.query(Submission).count() == 0


@pytest.mark.parametrize("celery_app", [None])  # the app's own, whose Redis refuses
def test_submit_answers_202_even_when_the_broker_is_down(client, student, store):
    response = submit(client, student.placement_id)
    assert response.status_code == 202
    with store.session() as session:
        assert session.get(Submission, response.get_json()["id"]).status == "queued"


def test_status_before_and_after_grading(client, student, sent, store):
    url = submit(client, student.placement_id).get_json()["url"]
    assert client.get(url).get_json()["status"] == "queued"
    assert client.get(url).get_json()["verdict"] is None
    grade(store, int(url.rsplit("/", 1)[1]))
    body = client.get(url).get_json()
    assert body["status"] == "graded"
    assert set(body["verdict"]) == {
        "status", "score", "stdout", "stderr", "exit_code", "duration_ms", "feedback",
        "first_difference", "grader_failed", "cases", "output_case", "figures",
    }  # fmt: skip
    assert body["verdict"]["status"] == "passed" and body["verdict"]["score"] == 1.0
    # its one case, whose output the verdict's is (old rows without cases: 0011's test)
    cases = body["verdict"]["cases"]
    assert ([c["name"] for c in cases], body["verdict"]["output_case"]) == (["output"], "output")
    assert body["verdict"]["stdout"] == cases[0]["stdout"] == "hello\n"


def grade(store, submission_id, delay_s=0.0):
    time.sleep(delay_s)
    claim = submissions.claim(store, submission_id, 30, utcnow())
    verdict = factories.verdict(RunStatus.PASSED, "hello\n", ms=5, feedback="It matches.")
    assert submissions.finish(store, claim, verdict, utcnow()).saved


def too_long():
    return {"json": {"source": "x" * (64 * 1024 + 1)}}


@pytest.mark.parametrize(
    ("request_kwargs", "status", "error"),
    [
        (too_long(), 413, "too_large"),
        (
            {
                "json": None,
                "data": b"x" * (2 * 1024 * 1024),
                "content_type": "text/plain",
                "headers": {"X-CodeBlanks-Session": PAGE_SESSION},
            },
            413,
            "request_entity_too_large",
        ),
        (
            {
                "json": None,
                "data": b"print('\xff')",
                "content_type": "text/plain",
                "headers": {"X-CodeBlanks-Session": PAGE_SESSION},
            },
            400,
            "not_utf8",
        ),
        (
            {"json": None, "data": b'{"source": "\\ud800"}', "content_type": "application/json"},
            400,
            "not_utf8",
        ),
        ({"json": {"source": "print(1)\x00"}}, 400, "nul_character"),
        ({"json": {"code": "print(1)"}}, 400, "bad_request"),
        (
            {"json": None, "data": b"{not json", "content_type": "application/json"},
            400,
            "bad_request",
        ),
    ],
    ids=["64k", "1mb-body", "not-utf8", "lone-surrogate", "nul", "no-source", "broken-json"],
)
def test_submit_input_checks(client, student, sent, request_kwargs, status, error):
    response = submit(client, student.placement_id, **request_kwargs)
    assert response.status_code == status
    assert response.get_json()["error"] == error
    assert response.get_json()["message"]
    assert sent == []


@pytest.mark.parametrize(
    ("language", "message"),
    [
        ("en", "The code contains a NUL character."),
        ("tr", "Kod bir NUL karakteri içeriyor."),
    ],
)
def test_a_refused_source_is_told_in_the_readers_language(client, student, language, message):
    """The boundary words a core refusal (SourceRefused) per request; its code stays English."""
    headers = {"Accept-Language": language}
    response = submit(client, student.placement_id, json={"source": "x\x00"}, headers=headers)
    assert response.status_code == 400
    assert response.get_json() == {"error": "nul_character", "message": message}


@pytest.mark.parametrize(
    ("language", "launch_first", "unknown"),
    [
        ("en", "Open this lesson from your course first.", "This lesson has no question 'q9'."),
        ("tr", "Önce bu dersi kursundan aç.", "Bu derste 'q9' adlı bir soru yok."),
    ],
)
def test_a_views_refusal_is_told_in_the_readers_language(
    client, student, language, launch_first, unknown
):
    """A view's refusal is a core.messages text too, worded by the boundary for its reader."""
    headers = {"Accept-Language": language}
    response = submit(client, 999_999, headers=headers)
    assert response.get_json() == {"error": "not_launched", "message": launch_first}
    body = {"question_id": "q9", "answer": "a"}
    response = client.post(f"/api/placements/{student.placement_id}/answers", json=body,
                           headers=headers)  # fmt: skip
    assert (response.status_code, response.get_json()["message"]) == (404, unknown)


def test_exactly_64_kib_is_accepted(client, student, sent):
    assert submit(client, student.placement_id, json={"source": "x" * 65536}).status_code == 202


@pytest.mark.parametrize(
    ("setup", "status", "error"),
    [
        ("nobody", 401, "not_signed_in"),
        ("unknown-placement", 404, "unknown_placement"),
        ("not-launched", 403, "not_launched"),
        ("past-due", 403, "past_due"),
        ("out-of-attempts", 409, "out_of_attempts"),
        ("lesson-gone", 404, "unknown_lesson"),
    ],
)
def test_submit_refusals(client, store, sent, setup, status, error):
    policy = {
        "past-due": {"due_at": utcnow() - timedelta(hours=1)},
        "out-of-attempts": {"max_attempts": 1},
    }.get(setup, {})
    lesson = "expert/gone" if setup == "lesson-gone" else "expert/scaled-dot-product"
    placed = place(store, lesson_id=lesson, **policy)
    target = placed.placement_id + (100 if setup == "unknown-placement" else 0)
    if setup not in ("nobody", "not-launched"):
        sign_in(client, placed.user_id, [target])
    if setup == "not-launched":
        sign_in(client, placed.user_id)
    if setup == "out-of-attempts":
        assert submit(client, placed.placement_id).status_code == 202
    response = submit(client, target)
    assert (response.status_code, response.get_json()["error"]) == (status, error)


def test_late_work_is_taken_and_marked_when_the_policy_allows(client, store, sent):
    placed = place(store, due_at=utcnow() - timedelta(hours=1), late_penalty=0.1)
    sign_in(client, placed.user_id, [placed.placement_id])
    body = submit(client, placed.placement_id).get_json()
    assert client.get(body["url"]).get_json()["late"] is True


def test_rate_limit_answers_429_with_retry_after(app, client, student, sent):
    swap(app, settings=replace(extensions.settings(app), submit_rate=3, submit_window_s=60))
    for _ in range(3):
        assert submit(client, student.placement_id).status_code == 202
    response = submit(client, student.placement_id)
    assert response.status_code == 429
    assert response.get_json()["error"] == "rate_limited"
    assert 1 <= int(response.headers["Retry-After"]) <= 60
    assert len(sent) == 1  # the first is sent; the other two wait their turn behind it


def test_the_rate_limit_is_per_student(app, client, store, student, sent):
    swap(app, settings=replace(extensions.settings(app), submit_rate=1))
    assert submit(client, student.placement_id).status_code == 202
    assert submit(client, student.placement_id).status_code == 429
    other = add_student(store, student, "student-2")
    sign_in(client, other, [student.placement_id])
    assert submit(client, student.placement_id).status_code == 202


def test_a_submission_is_shown_to_its_author_only(client, store, student, sent):
    url = submit(client, student.placement_id).get_json()["url"]
    sign_in(client, add_student(store, student, "student-2"), [student.placement_id])
    assert client.get(url).status_code == 404
    assert client.get("/api/submissions/999").status_code == 404


def read_events(response):
    events = []
    for chunk in b"".join(response.response).decode().split("\n\n"):
        lines = dict(
            line.split(": ", 1) for line in chunk.splitlines() if line[:1] not in ("", ":")
        )
        if "event" in lines:
            events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_live_stream_follows_the_submission_until_graded(client, student, sent, store):
    body = submit(client, student.placement_id).get_json()
    worker = threading.Thread(target=grade, args=(store, body["id"], 0.6))
    worker.start()
    response = client.get(body["events"], buffered=False)
    assert response.mimetype == "text/event-stream"
    events = read_events(response)
    worker.join()
    assert [name for name, _ in events] == ["status", "status", "end"]
    assert [data["status"] for _, data in events[:2]] == ["queued", "graded"]
    assert events[1][1]["verdict"]["status"] == "passed"


def test_live_stream_ends_after_its_maximum(app, client, student, sent):
    swap(app, settings=replace(extensions.settings(app), stream_max_s=1))
    body = submit(client, student.placement_id).get_json()
    started = time.monotonic()
    events = read_events(client.get(body["events"], buffered=False))
    assert time.monotonic() - started < 3
    assert [name for name, _ in events] == ["status", "timeout"]


def answer(client, placement_id, question_id, given):
    return client.post(
        f"/api/placements/{placement_id}/answers",
        json={"question_id": question_id, "answer": given},
    )


@pytest.mark.parametrize(
    ("question_id", "given", "status", "earned"),
    [
        ("why-scale", 1, 201, 1.0),
        ("why-scale", 0, 201, 0.0),
        ("scale-scores", " np.sqrt(boyut) ", 201, 1.0),
        ("steps", {"sorgu @ anahtar.T": "Every query-key similarity at once"}, 201, 0.25),
        ("why-scale", "1", 400, None),
        ("why-scale", 7, 400, None),
        ("steps", {"no such term": "x"}, 400, None),
        ("no-such-question", 1, 404, None),
    ],
)
def test_answers_are_scored_at_once(client, student, sent, question_id, given, status, earned):
    response = answer(client, student.placement_id, question_id, given)
    assert response.status_code == status, response.get_json()
    if status == 201:
        assert response.get_json()["earned"] == earned
        assert response.get_json()["explanation"]
        args = [student.user_id, student.placement_id]
        assert sent == [(Sent(TaskName.SYNC_GRADE, args, options={"queue": "sync"}), None)]
    else:
        assert sent == []


def test_the_first_answer_counts_and_asks_for_a_sync(client, student, sent, store):
    assert answer(client, student.placement_id, "why-scale", 0).status_code == 201
    response = answer(client, student.placement_id, "why-scale", 1)
    assert (response.status_code, response.get_json()["error"]) == (409, "already_answered")
    with store.session() as session:
        assert session.query(QuestionAnswer).one().earned == 0.0
        assert session.query(GradeSync).one().status == "pending"


def test_answers_close_at_the_due_date(client, store, sent):
    placed = place(store, due_at=utcnow() - timedelta(minutes=1))
    sign_in(client, placed.user_id, [placed.placement_id])
    response = answer(client, placed.placement_id, "why-scale", 1)
    assert (response.status_code, response.get_json()["error"]) == (403, "past_due")


def test_refusals_speak_the_students_language_and_keep_their_codes(client, store, sent):
    placed = place(store, due_at=utcnow() - timedelta(minutes=1))
    sign_in(client, placed.user_id, [placed.placement_id])
    english = answer(client, placed.placement_id, "why-scale", 1).get_json()
    assert english["error"] == "past_due" and "late work is not accepted" in english["message"]
    client.environ_base["HTTP_ACCEPT_LANGUAGE"] = "tr-TR,tr;q=0.9,en;q=0.5"
    response = answer(client, placed.placement_id, "why-scale", 1)
    body = response.get_json()
    assert (response.status_code, body["error"]) == (403, "past_due")
    assert "geç teslim kabul edilmiyor" in body["message"] and "UTC" in body["message"]


@pytest.mark.parametrize(
    ("attempts", "language", "words"),
    [
        (1, "en", "You have used your 1 attempt at this exercise."),
        (2, "en", "You have used all 2 attempts at this exercise."),
        (2, "tr", "Bu alıştırmadaki 2 deneme hakkının hepsini kullandın."),
    ],
)
def test_a_closure_is_worded_once_with_its_plural(client, store, sent, attempts, language, words):
    """core.placements says why a placement is closed (a plural, a time), and the boundary
    words it for the reader: no second wording of it in the web."""
    placed = place(store, max_attempts=attempts)
    for _ in range(attempts):
        factories.submission(store, placed.placement_id, placed.user_id)
    sign_in(client, placed.user_id, [placed.placement_id])
    response = submit(client, placed.placement_id, headers={"Accept-Language": language})
    assert (response.status_code, response.get_json()) == (
        409, {"error": "out_of_attempts", "message": words}
    )  # fmt: skip


def test_a_due_date_is_written_as_the_pages_write_it(client, store, sent):
    placed = place(store, due_at=utcnow() - timedelta(minutes=1))
    sign_in(client, placed.user_id, [placed.placement_id])
    english = answer(client, placed.placement_id, "why-scale", 1).get_json()["message"]
    assert re.fullmatch(
        r"This lesson was due on \w{3} \d{1,2}, \d{4}, \d{2}:\d{2} UTC; late work is not "
        r"accepted\.",
        english,
    ), english


def test_an_answer_refused_in_turkish(client, student, sent):
    client.environ_base["HTTP_ACCEPT_LANGUAGE"] = "tr"
    assert answer(client, student.placement_id, "why-scale", 0).status_code == 201
    again = answer(client, student.placement_id, "why-scale", 0)
    assert again.status_code == 409 and again.get_json() == {
        "error": "already_answered",
        "message": "Bu soruyu zaten cevapladın.",
    }
