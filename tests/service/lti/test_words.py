"""An LTI problem's words: English where raised (logs, the CLI), the reader's language shown."""

import logging

from markupsafe import escape

from service.lti.claims import LaunchProblem
from service.lti.words import Said, _l, translated


def test_said_is_the_english_and_remembers_how_it_was_made():
    said = _l("key %(kid)s is not for %(alg)s", kid="'k1'", alg="RS256")
    assert isinstance(said, str) and said == "key 'k1' is not for RS256"
    assert (said.template, said.args) == (
        "key %(kid)s is not for %(alg)s",
        {"kid": "'k1'", "alg": "RS256"},
    )
    assert translated(said) == said  # outside a request: English
    assert translated("plain technical text") == "plain technical text"


def test_said_is_escaped_like_any_text():
    said = _l("no platform is registered with %(who)s", who="<script>alert(1)</script>")
    assert "<script>" not in str(escape(said)) and "&lt;script&gt;" in str(escape(said))


def test_a_problem_is_translated_per_request_and_its_words_nested(app):
    what = _l("the LMS's configuration")
    problem = LaunchProblem(
        _l("LMS refused"), _l("%(what)s did not answer a JSON object", what=what)
    )
    with app.test_request_context(headers={"Accept-Language": "tr"}):
        shown = problem.translated()
        assert shown.title == "LMS reddetti"
        assert shown.detail == "LMS'in yapılandırması bir JSON nesnesiyle cevap vermedi"
        assert shown.check.startswith("etkinliğin az önce LMS'ten açıldığını")
    with app.test_request_context(headers={"Accept-Language": "en"}):
        assert (
            str(problem.translated())
            == "LMS refused: the LMS's configuration did not answer a JSON object"
        )
    assert isinstance(
        problem.title, Said
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
