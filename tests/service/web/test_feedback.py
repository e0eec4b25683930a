"""service/web/feedback: what a worker stored is shown in the page's language.

A real grading (workers.grading over a fake sandbox) stores the verdict; a Flask app with
Flask-Babel and a Turkish catalog compiled here renders it, as the templates call it.
"""

import json

import pytest
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from flask import Flask
from flask_babel import Babel

from core.cases import HARNESS_CONFIG
from core.runs import RunOutcome, RunRequest, RunResult
from core.sources import SourceRefused, check_source
from core.student_views import stored_view
from service.store.database import Store
from service.store.migrate import upgrade
from service.store.models import Submission
from service.web import extensions
from service.web.feedback import case_detail_of, case_feedback_of, feedback_of, rendered
from testkit.factories import SEED, place, submission
from testkit.sessions import sign_in
from tests.service.sessions import text_of
from workers.grading import grade_stored
from workers.sandbox.fake import FakeSandbox

LESSON = "expert/causal-masking"  # a run case, two value cases, a hidden one
TURKISH = {
    "{passed} of {count} cases passed ({percent} of the points).": (
        "{count} testten {passed} tanesi geçti (puanların {percent} kadarı)."
    ),
    "Case '{name}' failed.": "'{name}' testi geçemedi.",
    "Hidden case '{name}' failed.": "Gizli '{name}' testi geçemedi.",
    "Line {line} differs: expected {expected}, got {got}. {hint}": (
        "{line}. satır farklı: beklenen {expected}, gelen {got}. {hint}"
    ),
    "Value {position} is {got}, expected {expected} (within {abs} + {rel} x |expected|).": (
        "{position}. değer {got}, beklenen {expected} ({abs} + {rel} x |beklenen| payıyla)."
    ),
    "The code is larger than {limit} KiB ({size} bytes).": (
        "Kod, {limit} KiB sınırından büyük ({size} bayt)."
    ),
    "expected {count} items, got {got_count}: {got}.": (
        "{count} öğe bekleniyordu, gelen {got_count} öğe: {got}."
    ),
}


def answer(request: RunRequest) -> RunResult:
    """The run case prints a wrong first value; value cases give [1, 2] (the mask: right)."""
    if HARNESS_CONFIG not in request.files:
        printed = b"[[9.    0.    0.   ]\n"
        return RunResult(RunOutcome.EXITED, printed, exit_code=0, duration_ms=2)
    expr = json.loads(request.files[HARNESS_CONFIG])["expr"]
    value = b"[[false, true, true], [false, false, true], [false, false, false]]"
    value = value if expr == "nedensel_maske(3)" else b"[1, 2]"
    return RunResult(RunOutcome.EXITED, value, exit_code=0, duration_ms=2)


@pytest.fixture
def graded(database_url, catalog, settings):
    store = Store(database_url)
    upgrade(store)
    placed = place(store, LESSON)
    sid = submission(store, placed.placement_id, placed.user_id, "print(1)", late=False)
    grade_stored(store, catalog, FakeSandbox(answer), settings, sid)
    with store.session() as session:
        yield session.get(Submission, sid)
    store.dispose()


@pytest.fixture
def babel_app(tmp_path):
    messages = Catalog(locale="tr")
    for english, turkish in TURKISH.items():
        messages.add(english, turkish)
    (tmp_path / "tr" / "LC_MESSAGES").mkdir(parents=True)
    with open(tmp_path / "tr" / "LC_MESSAGES" / "messages.mo", "wb") as mo:
        write_mo(mo, messages)
    app = Flask(__name__)
    app.config["BABEL_TRANSLATION_DIRECTORIES"] = str(tmp_path)
    Babel(app, locale_selector=lambda: app.config["TEST_LOCALE"])
    return app


def shown(app, locale, render, *args):
    app.config["TEST_LOCALE"] = locale
    with app.test_request_context():
        return render(*args)


def test_a_stored_verdict_reads_in_turkish_and_in_english_as_stored(babel_app, graded):
    verdict = stored_view(graded)
    english = verdict.feedback
    assert english.startswith("1 of 4 cases passed (17% of the points).")
    assert "Value 1 is 9., expected 1. (within 0.001 + 1e-06 x |expected|)." in english
    assert shown(babel_app, "en", feedback_of, verdict) == english  # byte for byte
    turkish = shown(babel_app, "tr", feedback_of, verdict)
    assert turkish.startswith("4 testten 1 tanesi geçti (puanların %17 kadarı). ")
    assert "'the lesson's example' testi geçemedi. 1. satır farklı: beklenen " in turkish
    # numbers are the locale's; the program's output and the values stay as they were
    assert "1. değer 9., beklenen 1. (0,001 + 0,000001 x |beklenen| payıyla)." in turkish
    assert "4 öğe bekleniyordu, gelen 2 öğe: [1, 2]." in turkish
    assert "Gizli 'huge future scores still get no weight' testi geçemedi." in turkish
    assert "[1, 2]" not in turkish.split("Gizli")[1]  # a hidden case gives its verdict only


def test_each_stored_case_reads_in_turkish(babel_app, graded):
    by_name = {case["name"]: case for case in graded.cases}
    example = by_name["the lesson's example"]
    assert shown(babel_app, "tr", case_feedback_of, example).startswith(
        "'the lesson's example' testi geçemedi. 1. satır farklı"
    )
    assert shown(babel_app, "tr", case_detail_of, example).startswith("1. satır farklı")
    assert shown(babel_app, "en", case_detail_of, example) == example["detail"]
    passed = by_name["the mask of three positions"]
    assert shown(babel_app, "tr", case_detail_of, passed) == ""
    assert shown(babel_app, "tr", case_feedback_of, passed) == (
        "Case 'the mask of three positions' passed."  # a sentence the catalog lacks: English
    )


@pytest.mark.parametrize(
    "stored",
    [None, {"t": "Line {line} differs.", "a": {}}, {"j": "x"}, "text"],
    ids=["before-messages", "missing-argument", "malformed", "not-a-message"],
)
def test_a_case_without_a_readable_message_shows_its_english(babel_app, graded, stored):
    # a verdict's own message always reads back: finish() writes it, migration 0011 made
    # one of the English of every older row (tests/service/store/test_verdict_migration.py)
    case = {**graded.cases[0], "detail_message": stored}
    assert shown(babel_app, "tr", case_detail_of, case) == case["detail"]


def test_the_lesson_page_shows_the_verdict_in_the_launchs_language(app, client):
    """The product's own catalog (service/web/translations, compiled at set-up)."""
    store = extensions.store(app)
    placed = place(store, SEED)
    sid = submission(store, placed.placement_id, placed.user_id, "print(1)", late=False)
    wrong = FakeSandbox(lambda request: RunResult(RunOutcome.EXITED, b"nope\n", exit_code=0))
    grade_stored(store, extensions.catalog(app), wrong, extensions.settings(app), sid)
    sign_in(client, placed.user_id, [placed.placement_id])
    url = f"/lessons/{placed.placement_id}"
    english = text_of(client.get(url).get_data(as_text=True))
    assert "Your program ran, but its output differs from the expected output. Line 1 " in english
    with client.session_transaction() as session:
        session["locale"] = "tr"  # what a launch with launch_presentation.locale "tr-TR" keeps
    turkish = text_of(client.get(url).get_data(as_text=True))
    assert "Programın çalıştı, ama çıktısı beklenen çıktıdan farklı. 1. satır " in turkish
    assert "Your program ran" not in turkish


def test_a_refusal_reads_in_the_pages_language(babel_app):
    with pytest.raises(SourceRefused) as refused:
        check_source(b"#" * 70_000)
    assert str(refused.value) == "The code is larger than 64 KiB (70000 bytes)."
    turkish = shown(babel_app, "tr", rendered, refused.value.words)
    assert turkish == "Kod, 64 KiB sınırından büyük (70.000 bayt)."
