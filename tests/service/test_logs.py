import json
import logging

from service import logs


def record(message="hello", **extra):
    rec = logging.LogRecord("codeblanks.test", logging.WARNING, __file__, 1, message, None, None)
    for key, value in extra.items():
        setattr(rec, key, value)
    return rec


def test_json_lines_carry_the_ids_in_force():
    formatter = logs.JsonFormatter()
    plain = json.loads(formatter.format(record(title="Wrong nonce")))
    assert plain["message"] == "hello" and plain["level"] == "warning"
    assert plain["title"] == "Wrong nonce" and "request_id" not in plain
    with logs.grading(42):
        token = logs.request_id.set("abc123")
        try:
            inside = json.loads(formatter.format(record()))
        finally:
            logs.request_id.reset(token)
    assert inside["submission_id"] == 42 and inside["request_id"] == "abc123"
    assert "submission_id" not in json.loads(formatter.format(record()))


def test_requests_get_an_id_echoed_back(client):
    made = client.get("/healthz")
    assert len(made.headers["X-Request-Id"]) == 16
    kept = client.get("/healthz", headers={"X-Request-Id": "lb-7f3a"})
    assert kept.headers["X-Request-Id"] == "lb-7f3a"
    junk = client.get("/healthz", headers={"X-Request-Id": "x" * 500})
    assert junk.headers["X-Request-Id"] != "x" * 500


def test_launch_refusals_are_logged_with_the_request_id(client, caplog):
    caplog.set_level(logging.WARNING, logger="codeblanks.lti")
    formatter = logs.JsonFormatter()
    response = client.post("/lti/launch", data={}, headers={"X-Request-Id": "req-1"})
    assert response.status_code == 400
    [line] = [json.loads(formatter.format(r)) for r in caplog.records if "refused" in r.message]
    assert line["title"] == "Missing state"
