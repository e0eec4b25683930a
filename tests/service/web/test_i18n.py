"""The tool speaks English and Turkish: every word of its own is in the catalog, translated.

Four checks keep it so: every template's text is marked for translation (read from the
templates), every page shows only catalog words outside authored text (rendered in a
pseudo-Turkish that marks each string), the Turkish catalog translates every string there is,
and the scripts' words are the page's. Then the language itself: the launch's, else the
browser's, else English; lesson text as written; numbers and dates as Turkish writes them.
"""

from __future__ import annotations

import ast
import re
import string
import time

import pytest
from babel.messages.pofile import read_po
from jinja2 import Environment

from service.web import extensions, i18n
from service.web.i18n import JS_WORDS
from testkit.factories import SEED, add_student, place, submission
from testkit.sessions import sign_in
from tests.service import sessions
from tests.service.lti import conftest as lti_fixtures
from tests.service.sessions import form_token, grade, text_of
from tests.service.web.i18n_checks import (
    ROOT,
    TRANSLATIONS,
    _Unmarked,
    extract,
    pseudo_catalog,
    unmarked,
)

TEMPLATES = ROOT / "service/web/templates"
STATIC = ROOT / "service/web/static"
GETTEXT = {"_", "gettext", "ngettext", "pgettext", "npgettext"}
_ATTRIBUTE = re.compile(r'[\w:-]+="[^"<>]*"')
_WORDY = re.compile(r"(?:[A-Z][a-z]+|[a-z]+ [a-z]+)")  # a capitalised word, or two words
celery_app = sessions.celery_app  # every send recorded, none made


# ---- every template marks its words -----------------------------------------------------


def template_problems(source: str, name: str) -> list[str]:
    """Return the words of a template that a user would read untranslated."""
    env = Environment(extensions=["jinja2.ext.i18n"])
    outside: list[str] = []  # the template's markup outside {% trans %}, expressions as \x00
    problems: list[str] = []
    in_trans = False
    previous: list[tuple[str, str]] = []
    calls: list[bool] = []  # for each open parenthesis: is it a gettext call's?
    for lineno, kind, value in env.lex(source, name):
        if kind == "name" and previous and previous[-1][0] == "block_begin":
            if value == "trans":
                in_trans = True
            elif value == "endtrans":
                in_trans = False
        if kind == "data" and not in_trans:
            outside.append(value)
        elif kind in ("variable_begin", "block_begin") and not in_trans:
            outside.append("\x00")
        if (kind, value) == ("operator", "("):
            calls.append(
                bool(previous) and previous[-1][0] == "name" and previous[-1][1] in GETTEXT
            )
        elif (kind, value) == ("operator", ")") and calls:
            calls.pop()
        elif kind == "string" and not in_trans and not any(calls):
            literal = ast.literal_eval(value)
            if _WORDY.search(literal) and not re.fullmatch(r"[\w.\-/:#]*", literal):
                problems.append(f"{name}:{lineno}: literal {literal!r} is not marked")
        if kind not in ("whitespace",):
            previous.append((kind, value))
    markup = re.split(r"(<[^>]*>)", "".join(outside).replace("\x00", " 0 "))
    # a macro may write attributes (aria-invalid="true") outside any tag: they are not text
    markup = [part if part.startswith("<") else _ATTRIBUTE.sub(" ", part) for part in markup]
    finder = _Unmarked()
    finder.feed("".join(markup))
    finder.close()
    problems += [f"{name}: {found}" for found in finder.found if "CodeBlanks" not in found]
    return problems


def test_every_template_marks_the_words_it_shows():
    templates = sorted(TEMPLATES.rglob("*.html"))
    assert len(templates) >= 30
    problems = [
        problem
        for path in templates
        for problem in template_problems(path.read_text(), str(path.relative_to(TEMPLATES)))
    ]
    assert problems == []


def test_the_template_check_finds_what_is_not_marked():
    shown = template_problems(
        '<p>Submit your code</p><button aria-label="Close">{{ _("x") }}</button>'
        '{{ "point" if n == 1 else "Many points" }}<p translate="no">{{ title }} kept</p>'
        "<pre>print(1)</pre>{% trans %}Fine{% endtrans %}<p>{{ _('Fine too') }}</p>",
        "example.html",
    )
    assert len(shown) == 3
    assert "Many points" in shown[0]
    assert "Submit your code" in shown[1] and "Close" in shown[2]


# ---- the Turkish catalog is whole ---------------------------------------------------------


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    return extract(tmp_path_factory.mktemp("catalog"))


def placeholders(text: str) -> set[str]:
    named = set(re.findall(r"%\((\w+)\)[sd]", text))
    braced = {field for _, field, _, _ in string.Formatter().parse(text) if field}
    return named | {"{" + field + "}" for field in braced if "%(" not in text}


def test_the_turkish_catalog_translates_every_string(fresh):
    with (TRANSLATIONS / "tr/LC_MESSAGES/messages.po").open("rb") as handle:
        turkish = read_po(handle)
    wanted = [message for message in fresh if message.id]
    assert len(wanted) > 300
    problems = []
    for message in wanted:
        found = turkish.get(message.id, context=message.context)
        english = message.id if isinstance(message.id, tuple) else (message.id,)
        if found is None:
            problems.append(f"missing: {english[0]!r}")
            continue
        forms = found.string if isinstance(found.string, tuple) else (found.string,)
        if found.fuzzy or not all(forms):
            problems.append(f"untranslated: {english[0]!r}")
            continue
        for form in forms:
            if placeholders(form) != placeholders(english[-1]):
                problems.append(f"placeholders differ: {english[0]!r} -> {form!r}")
    assert problems == []


def test_the_committed_template_catalog_is_current(fresh):
    with (TRANSLATIONS / "messages.pot").open("rb") as handle:
        committed = {message.id for message in read_po(handle) if message.id}
    assert {message.id for message in fresh if message.id} == committed, (
        "run scripts/i18n.sh update and translate what it adds"
    )


def test_the_catalog_test_sees_a_missing_string(fresh):
    assert fresh.get("Skip to content") is not None
    assert fresh.get("Your program ran, but its output differs from the expected output.")
    assert fresh.get("Waiting for a grader…") is not None  # a script's word
    assert not any("Launch as" in str(message.id) for message in fresh)  # the demo LMS's


# ---- the scripts' words -------------------------------------------------------------------


def test_every_word_a_script_shows_is_the_pages():
    used = set()
    for script in ("lesson.js", "teacher.js"):
        source = (STATIC / script).read_text()
        used |= set(re.findall(r'\bt\(\s*"((?:[^"\\]|\\.)*)"', source))
        used |= set(re.findall(r'^\s*[?:]?\s*"([A-Z][^"]*)"(?=[,;)\s])', source, re.M))
    assert used, "lesson.js shows no words?"
    assert used - set(JS_WORDS) == set()


# ---- every page in pseudo-Turkish shows only catalog words --------------------------------


@pytest.fixture
def pseudo(fresh, settings, tmp_path, celery_app):
    from service.web import create_app

    directory = pseudo_catalog(fresh, tmp_path / "pseudo")
    app = create_app(
        {
            "TESTING": True,
            "SETTINGS": settings,
            "BABEL_TRANSLATION_DIRECTORIES": str(directory),
        },
        celery_app=celery_app,
    )
    yield app
    extensions.store(app).dispose()


TR = {"Accept-Language": "tr-TR,tr;q=0.9"}


def graded(store, catalog, placement_id, user_id, source, stdout):
    """Grade a submission as a worker does: the lesson's own judge over the run's result."""
    from core.runs import RunOutcome, RunResult
    from core.verdicts import judge
    from service.store import submissions
    from service.store.models import utcnow

    queued = submission(store, placement_id, user_id, source)
    exercise = catalog.lessons[SEED].exercise
    result = RunResult(RunOutcome.EXITED, stdout.encode(), b"", 0, duration_ms=1500)
    verdict = judge(exercise, [result] * len(exercise.cases))
    claim = submissions.claim(store, queued, 30, utcnow())
    assert submissions.finish(store, claim, verdict, utcnow()).saved


def pages_of_a_course(app):
    """Yield (name, answer) for every page of a course where work happened, asked in tr."""
    from service.store.models import Placement

    client = app.test_client()
    store, catalog = extensions.store(app), extensions.catalog(app)
    seed = place(store, lesson_id=SEED)
    teacher = add_student(store, seed, "teacher-1")
    with store.session() as session:
        course_id = session.get(Placement, seed.placement_id).course_id
    sign_in(client, seed.user_id, [seed.placement_id])
    lesson = f"/lessons/{seed.placement_id}"
    yield "lesson, nothing done", client.get(lesson, headers=TR)
    token = form_token(client.get(lesson, headers=TR).get_data(as_text=True))
    for question in catalog.lessons[SEED].questions:
        data = {"csrf": token, "question_id": question.id}
        if question.type == "match":
            data |= {f"term-{index}": question.meanings[0] for index in range(len(question.terms))}
        else:
            data["answer"] = "0"
        client.post(f"{lesson}/answers", data=data, headers=TR)
    yield "lesson, questions answered", client.get(lesson, headers=TR)
    graded(store, catalog, seed.placement_id, seed.user_id, "print(2)", "2\n")
    yield "lesson, a failed verdict", client.get(lesson, headers=TR)
    expected = catalog.lessons[SEED].exercise.expected_output
    graded(store, catalog, seed.placement_id, seed.user_id, "print(1)", expected)
    yield "lesson, a passed verdict", client.get(lesson, headers=TR)
    yield "course", client.get(f"/courses/{course_id}", headers=TR)
    sign_in(client, teacher, [seed.placement_id], teaches=[course_id])
    teach = f"/teach/placements/{seed.placement_id}"
    yield "gradebook", client.get(f"/teach/courses/{course_id}", headers=TR)
    yield "teacher lesson", client.get(teach, headers=TR)
    yield "teacher, a student", client.get(f"{teach}/students/{seed.user_id}", headers=TR)
    yield "regrade, none yet", client.get(f"{teach}/regrade", headers=TR)
    token = form_token(client.get(teach, headers=TR).get_data(as_text=True))
    client.post(f"{teach}/regrade", data={"csrf": token}, headers=TR)
    yield "regrade preview", client.get(f"{teach}/regrade", headers=TR)
    settings = {"csrf": token, "reveal": "nonsense", "max_attempts": "-1", "due_at": "never"}
    yield "settings refused", client.post(f"{teach}/settings", data=settings, headers=TR)
    yield "not found", client.get("/no/such/page", headers=TR)
    yield "not signed in", app.test_client().get(lesson, headers=TR)


def test_every_page_shows_only_catalog_words(pseudo):
    seen = {}
    for name, answer in pages_of_a_course(pseudo):
        page = answer.get_data(as_text=True)
        assert "⟦" in page, f"{name}: {answer.status_code} shows no translated word"
        seen[name] = unmarked(page)
    assert {name: found for name, found in seen.items() if found} == {}
    assert len(seen) == 13


def test_the_page_check_finds_a_word_nobody_marked():
    assert unmarked("<p>⟦Submit⟧</p><p translate='no'>Attention</p><pre>x = 1</pre>") == []
    found = unmarked("<p>⟦Graded: ⟦Passed⟧⟧ in time</p><button title='Close'>⟦x⟧</button>")
    assert len(found) == 2


# ---- the language: the launch's, the browser's, English -----------------------------------


def words_of(client, url, **headers):
    return text_of(client.get(url, headers=headers).get_data(as_text=True), spaced=True)


@pytest.fixture
def placed(app, client):
    found = place(extensions.store(app), lesson_id=SEED)
    sign_in(client, found.user_id, [found.placement_id])
    return found


def set_locale(client, value):
    with client.session_transaction() as session:
        session["locale"] = value


def test_the_launch_language_wins_then_the_browsers_then_english(client, placed):
    assert i18n.missing_catalogs() == [], "run scripts/i18n.sh compile (scripts/setup.sh does)"
    lesson = f"/lessons/{placed.placement_id}"
    assert "Gönder" not in words_of(client, lesson)
    assert "Gönder" in words_of(client, lesson, **{"Accept-Language": "tr,en;q=0.5"})
    assert "Gönder" not in words_of(client, lesson, **{"Accept-Language": "de-DE,de"})
    set_locale(client, "tr")  # what a launch with launch_presentation.locale "tr-TR" keeps
    assert "Gönder" in words_of(client, lesson, **{"Accept-Language": "en-US"})
    set_locale(client, "en")
    assert "Gönder" not in words_of(client, lesson, **{"Accept-Language": "tr"})


@pytest.mark.parametrize(
    ("tag", "kept"),
    [("tr-TR", "tr"), ("tr_TR", "tr"), ("TR", "tr"), ("en-US", "en"), ("en", "en"),
     ("de", None), ("", None), ("tr-TR-x-" + "a" * 300, None), (None, None), (42, None),
     ("tr;drop table", None)],
)  # fmt: skip
def test_a_launch_locale_is_read_strictly(tag, kept):
    assert i18n.supported(tag) == kept


def test_lesson_text_stays_as_written_and_numbers_follow_turkish(app, client, placed):
    store = extensions.store(app)
    lesson = f"/lessons/{placed.placement_id}"
    english = client.get(lesson).get_data(as_text=True)
    set_locale(client, "tr")
    turkish = client.get(lesson).get_data(as_text=True)
    assert '<html lang="tr">' in turkish and '<html lang="en">' in english
    body = extensions.catalog(app).lessons[SEED].body
    first_sentence = next(line for line in body.splitlines() if len(line) > 40)
    assert first_sentence[:30] in text_of(turkish) and first_sentence[:30] in text_of(english)
    done = submission(store, placed.placement_id, placed.user_id, "print(1)")
    from core.runs import RunStatus

    grade(store, done, RunStatus.PASSED, "1\n", ms=1500)
    turkish = text_of(client.get(lesson).get_data(as_text=True), spaced=True)
    assert "%100" in turkish  # Turkish puts the percent sign first
    assert "1,5 sn" in turkish  # a decimal comma, and Turkish's unit
    assert "Geçti" in turkish or "Başarılı" in turkish


def test_scripts_get_their_words_in_the_pages_language(client, placed):
    set_locale(client, "tr")
    page = client.get(f"/lessons/{placed.placement_id}").get_data(as_text=True)
    words = re.search(r'<script type="application/json" id="words">(.*?)</script>', page, re.S)
    import json

    shown = json.loads(words.group(1))
    assert set(shown) == set(JS_WORDS)
    assert shown["Waiting for a grader…"] != "Waiting for a grader…"
    assert all(value.strip() for value in shown.values())


def test_sessions_without_a_locale_keep_working(client, placed):
    set_locale(client, "xx-invalid")
    answer = client.get(f"/lessons/{placed.placement_id}")
    assert answer.status_code == 200 and '<html lang="en">' in answer.get_data(as_text=True)
    time.sleep(0)


# ---- through a real launch -----------------------------------------------------------------


# the LTI flow tests' fixture: the tool and the demo LMS over real HTTP
lms = lti_fixtures.lms


def launched_language(browser, lms, link, locale):
    """Launch the link as Ali in the LMS language `locale`; return the page's lang."""
    from demo.browser import run_launch
    from tests.service.lti.test_flows import follow

    trace = run_launch(browser, lms.platform.launch("ali", link.id, locale))
    page = follow(browser, trace.launch)
    assert page.status_code == 200
    return re.search(r'<html lang="(\w+)">', page.text).group(1)


def test_each_launch_brings_its_language(lms):
    import requests

    link = lms.link()
    with requests.Session() as browser:
        browser.headers["Accept-Language"] = "en-US,en;q=0.9"
        assert launched_language(browser, lms, link, "tr-TR") == "tr"
        assert launched_language(browser, lms, link, "en") == "en"
        assert launched_language(browser, lms, link, "tr") == "tr"
        # a language the tool lacks: the browser's decides, not the launch before
        assert launched_language(browser, lms, link, "de-DE") == "en"
        browser.headers["Accept-Language"] = "tr-TR,tr;q=0.9"
        assert launched_language(browser, lms, link, "de-DE") == "tr"
