"""The one error boundary: a client's fault is a 4xx, no database a 503, never a traceback."""

import pytest

from service.web import extensions
from testkit.apps import swap
from testkit.factories import place
from testkit.sessions import sign_in
from tests.service import sessions
from tests.service.sessions import form_token

LESSON = "expert/what-is-attention"
celery_app = sessions.celery_app  # every send recorded, none made


@pytest.fixture
def student(app, client):
    placed = place(extensions.store(app), lesson_id=LESSON)
    sign_in(client, placed.user_id, [placed.placement_id])
    return placed


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@pytest.mark.parametrize("depth", [50_000, 2_000])
@pytest.mark.parametrize("path", ["answers", "submissions", "draft"])
def test_deeply_nested_json_is_a_400(client, student, path, depth):
    send = client.put if path == "draft" else client.post
    body = b'{"question_id": "rnn-advantage", "answer": ' + nested(depth) + b', "source": 1}'
    response = send(
        f"/api/placements/{student.placement_id}/{path}",
        data=body,
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.get_json()["error"] == "bad_request"


@pytest.mark.parametrize(
    ("question_id", "answer"),
    [
        ("rnn-advantage", "²"),
        ("rnn-advantage", "9" * 5000),
        ("rnn-advantage", "٣"),
        ("weighted-average", "x" * 5000),
        ("concepts", {"attention": {"deep": [1, 2, 3]}}),
    ],
)
def test_odd_answers_on_the_api_are_a_400(client, student, question_id, answer):
    response = client.post(
        f"/api/placements/{student.placement_id}/answers",
        json={"question_id": question_id, "answer": answer},
    )
    assert response.status_code == 400 and response.get_json()["error"] == "malformed_answer"


@pytest.mark.parametrize("given", ["²", "9" * 5000, "٣", "-1", " 1"])
def test_odd_answers_on_the_form_are_a_400_page(client, student, given):
    page = client.get(f"/lessons/{student.placement_id}").get_data(as_text=True)
    response = client.post(
        f"/lessons/{student.placement_id}/answers",
        data={"csrf": form_token(page), "question_id": "rnn-advantage", "answer": given},
    )
    assert response.status_code == 400
    assert response.mimetype == "text/html" and "answer does not fit" in response.text


def test_a_5000_digit_number_on_the_json_api_is_a_400(client, student):
    body = b'{"question_id": "rnn-advantage", "answer": ' + b"7" * 5000 + b"}"
    response = client.post(
        f"/api/placements/{student.placement_id}/answers",
        data=body,
        content_type="application/json",
    )
    assert response.status_code == 400


def test_pages_answer_503_while_the_database_is_away(app, client, student, tmp_path):
    from service.store.database import Store

    # a database that cannot be reached: its directory is gone
    away = Store(f"sqlite:///{tmp_path / 'gone' / 'codeblanks.db'}")
    swap(app, store=away)
    try:
        page = client.get(f"/lessons/{student.placement_id}")
        api = client.get("/api/submissions/1")
    finally:
        away.dispose()
    for response in (page, api):
        assert response.status_code == 503, response.get_data(as_text=True)[:300]
        assert response.headers["Retry-After"] == "5"
        assert "Traceback" not in response.get_data(as_text=True)
    assert page.mimetype == "text/html" and api.get_json()["error"] == "unavailable"


def test_an_unexpected_error_is_a_500_with_the_request_id_and_no_trace(app, client, caplog):
    @app.get("/boom")
    def boom():
        raise KeyError("the secret name of a column")

    response = client.get("/boom", headers={"X-Request-Id": "req-42"})
    assert response.status_code == 500
    assert "req-42" in response.text
    assert "secret name" not in response.text and "Traceback" not in response.text
    assert any("unhandled error" in r.message and r.exc_info for r in caplog.records)
    api = client.get("/boom", headers={"Accept": "application/json"})
    assert api.status_code == 500 and api.get_json()["error"] == "internal_error"


def test_werkzeug_errors_are_json_under_the_api_and_pages_elsewhere(client):
    api = client.get("/api/no-such-thing")
    assert api.status_code == 404 and api.get_json()["error"] == "not_found"
    page = client.get("/no-such-page")
    assert page.status_code == 404 and page.mimetype == "text/html"
    wrong = client.delete("/lessons/1")
    assert wrong.status_code == 405 and "GET" in wrong.headers["Allow"]
