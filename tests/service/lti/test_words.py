"""An LTI problem's words: English where raised (logs, the CLI), the reader's language shown."""

import logging

from core.errors import Refusal
from core.messages import Message, say
from service.lti.claims import LaunchProblem
from service.web.feedback import rendered


def test_a_problem_keeps_its_english_and_how_it_was_said():
    problem = LaunchProblem(
        say("Unknown key"), say("key {kid} is not for {alg}", kid="'k1'", alg="RS256")
    )
    assert str(problem) == "Unknown key: key 'k1' is not for RS256"
    assert isinstance(problem, Refusal) and (problem.status, problem.code) == (
        400,
        "launch_refused",
    )
    assert (
        isinstance(problem.detail, Message)
        and problem.detail.template == "key {kid} is not for {alg}"
    )
    assert str(problem.check).startswith("that the activity was opened from the LMS just now")


def test_technical_text_is_shown_as_it_is():
    problem = LaunchProblem(say("Malformed id_token"), "Not enough segments")
    assert str(problem.detail) == "Not enough segments"


def test_a_problem_is_worded_per_request_and_its_words_nested(app):
    what = say("the LMS's configuration")
    problem = LaunchProblem(
        say("LMS refused"), say("{what} did not answer a JSON object", what=what)
    )
    with app.test_request_context(headers={"Accept-Language": "tr"}):
        assert rendered(problem.title) == "LMS reddetti"
        assert rendered(problem.detail) == "LMS'in yapılandırması bir JSON nesnesiyle cevap vermedi"
        assert rendered(problem.check).startswith("etkinliğin az önce LMS'ten açıldığını")
    with app.test_request_context(headers={"Accept-Language": "en"}):
        assert (
            rendered(problem.words)
            == "LMS refused: the LMS's configuration did not answer a JSON object"
        )
    assert (
        str(problem.title) == "LMS refused"
    )  # the problem itself keeps its English (a cache may hold it)


def test_a_refused_launch_page_is_in_the_browsers_language_and_its_log_in_english(client, caplog):
    caplog.set_level(logging.WARNING, logger="codeblanks.lti")
    client.environ_base["HTTP_ACCEPT_LANGUAGE"] = "tr-TR,tr;q=0.9"
    answer = client.post("/lti/launch", data={"id_token": "x.y.z"})
    page = answer.get_data(as_text=True)
    assert answer.status_code == 400
    assert "Durum (state) eksik" in page and "başlatma POST isteğinde state yok" in page
    assert "Missing state" not in page
    [record] = [r for r in caplog.records if r.name == "codeblanks.lti"]
    assert record.getMessage() == "launch refused: Missing state: the launch POST carries no state"


def test_a_refused_launch_as_json_keeps_its_code(client):
    client.environ_base["HTTP_ACCEPT_LANGUAGE"] = "tr"
    answer = client.post("/lti/launch", data={}, headers={"Accept": "application/json"})
    assert answer.status_code == 400
    assert answer.get_json() == {
        "error": "launch_refused",
        "message": "Durum (state) eksik: başlatma POST isteğinde state yok",
    }


def test_a_refused_registration_token_is_in_the_readers_language(client):
    client.environ_base["HTTP_ACCEPT_LANGUAGE"] = "tr"
    answer = client.get("/lti/register")
    page = answer.get_data(as_text=True)
    assert answer.status_code == 403
    assert "Geçerli bir kayıt anahtarı yok" in page
    assert "bu kayıt URL&#39;sinde kayıt anahtarı yok" in page
