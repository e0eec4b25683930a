"""A student's attempts (issue 30, point 5): the list, one attempt whole (its code, its verdict
as the student sees it, the change from the one before), its JSON, and putting it back in the
editor without JavaScript; each to its author alone.

Verdicts come from the real path (the store's writer; for cases, workers.grading.grade_stored
with a scripted sandbox, as tests/service/web/student/test_case_verdicts.py grades them).
"""

import json
import re
from dataclasses import replace
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from core.compare import LineDiff
from core.runs import MAX_SOURCE_BYTES, RunStatus
from service.store import submissions
from service.store.models import Draft, Placement, Submission, utcnow
from service.web.student import attempt_view
from testkit import factories
from testkit.factories import add_student, place, submission
from testkit.sessions import sign_in
from tests.service.sessions import form_token, grade, session_param, text_of
from tests.service.web import two_stores
from tests.service.web.student.test_case_verdicts import (
    CASES,
    PARTLY,
    RIGHT,
    SECRETS,
    SEED_ID,
    graded,
    leaks,
    set_policy,
    write_catalog,
)

# every test here runs on SQLite and on PostgreSQL
database_url, store = two_stores.database_url, two_stores.store
celery_app, sent = two_stores.celery_app, two_stores.sent  # every send recorded

FIRST = "def f(x):\n    return x\n\n\nprint(f('<script>1</script>'))\n"
SECOND = "def f(x):\n    return x * 2\n\n\nprint(f('<script>1</script>'))\nprint('more')\n"


@pytest.fixture
def settings(settings, tmp_path):
    """The app's settings, its catalog test_case_verdicts's: lessons with hidden cases, and
    a copy of the seed lesson (one output, no cases)."""
    return replace(settings, lessons_dir=write_catalog(tmp_path / "lessons"))


@pytest.fixture
def placed(store):
    return place(store, lesson_id=SEED_ID)


@pytest.fixture
def student(client, placed):
    sign_in(client, placed.user_id, [placed.placement_id])
    return placed


def handed_in(store, placed, source, status=RunStatus.FAILED, **verdict):
    """Write a submission as the submit path does and grade it as a worker would."""
    submission_id = submission(store, placed.placement_id, placed.user_id, source)
    if status is not None:
        grade(store, submission_id, status, **verdict)
    return submission_id


def page_of(client, placed, submission_id):
    return client.get(f"/lessons/{placed.placement_id}/attempts/{submission_id}")


def json_of(client, placed, submission_id):
    return client.get(f"/api/placements/{placed.placement_id}/attempts/{submission_id}")


def diff_rows(html):
    """Return the diff table's rows as (before, after, words read, text shown)."""
    table = html.split('<table class="code-diff"')[1].split("</table>")[0]
    rows = re.findall(r'<tr class="(added|removed|same)"><td>(\d*)</td><td>(\d*)</td>'
                      r'<td translate="no">(.*?)</td></tr>', table, re.S)  # fmt: skip
    return [(kind, before, after, text_of(cell, spaced=True)) for kind, before, after, cell in rows]


def test_an_attempt_shows_its_code_its_verdict_and_the_change_from_the_one_before(
    client, store, student
):
    diff = LineDiff(1, "[0.787 0.107 0.107]", "&lt;nope&gt;", "differs")
    first = handed_in(store, student, FIRST, stdout="<nope>\n", diff=diff, ms=41)
    second = handed_in(store, student, SECOND, RunStatus.PASSED)

    shown = page_of(client, student, second).get_data(as_text=True)
    assert "<script>1" not in shown  # the student's code is escaped, as highlighted
    assert '<div class="attempt-code" translate="no"><div class="highlight">' in shown
    text = text_of(shown, spaced=True)
    assert "Attempt 2" in text and "✔ Passed — score 100%" in text
    assert "Changes from attempt 1" in text and "Lines added: 2; removed: 1." in text
    # each changed line is marked by a sign (hidden from screen readers) and a word they say,
    # not by colour alone
    assert diff_rows(shown) == [
        ("same", "1", "1", "def f(x):"),
        ("removed", "2", "", "− Removed: return x"),
        ("added", "", "2", "+ Added: return x * 2"),
        ("same", "3", "3", ""),
        ("same", "4", "4", ""),
        ("same", "5", "5", "print(f('<script>1</script>'))"),
        ("added", "", "6", "+ Added: print('more')"),
    ]
    assert shown.count('<span class="sign" aria-hidden="true">+</span>') == 2
    assert shown.count('<span class="sign" aria-hidden="true">−</span>') == 1
    assert f'href="/lessons/{student.placement_id}/attempts/{first}?s=' in shown  # the one before

    older = text_of(page_of(client, student, first).get_data(as_text=True), spaced=True)
    assert "✘ Output differs — score 0%" in older
    assert "First difference, on line 1 of the output:" in older and "Ran in" not in older
    assert "Your first attempt: there is none before it to compare with." in older

    body = json_of(client, student, second).get_json()
    api = client.get(f"/api/submissions/{second}").get_json()
    assert {k: v for k, v in body.items() if k in api} == api  # the API's answer, extended
    assert (body["number"], body["source"]) == (2, SECOND)
    assert (body["previous_id"], body["next_id"]) == (first, None)
    assert json_of(client, student, first).get_json()["next_id"] == second
    assert "Lines added: 2; removed: 1." in body["html"] and "<h4" in body["html"]


def test_the_lesson_page_lists_the_newest_attempts_without_their_code(
    client, store, student, monkeypatch
):
    ids = [handed_in(store, student, f"print('attempt {n}')\n") for n in range(1, 14)]
    page = client.get(f"/lessons/{student.placement_id}").get_data(as_text=True)
    table = page.split('<table class="attempts"')[1].split("</table>")[0]
    numbers = re.findall(r"<tr><td>(\d+)</td>", table)
    assert numbers == [str(n) for n in range(13, 3, -1)]  # the newest ten, newest first
    # no attempt's code is in the page but the newest's, in the editor (there is no draft)
    assert [n for n in range(1, 14) if f"attempt {n}&#39;" in page] == [13]
    assert "Your newest 10 attempts of 13." in text_of(page, spaced=True)
    assert f'data-attempt-url="/api/placements/{student.placement_id}/attempts/{ids[-1]}"' in page
    assert '<div id="attempt-shown"></div>' in page

    # the whole list, a page at a time
    monkeypatch.setattr(attempt_view, "ATTEMPTS_A_PAGE", 5)
    listing = f"/lessons/{student.placement_id}/attempts"
    first = client.get(listing).get_data(as_text=True)
    assert re.findall(r"<tr><td>(\d+)</td>", first) == ["13", "12", "11", "10", "9"]
    assert "Page 1 of 3; 13 attempts in all" in text_of(first, spaced=True)
    assert f'href="{listing}?page=2&amp;s=' in first and "Newer attempts" not in first
    last = client.get(f"{listing}?page=3").get_data(as_text=True)
    assert re.findall(r"<tr><td>(\d+)</td>", last) == ["3", "2", "1"]
    assert "Older attempts" not in last and "Newer attempts" in last
    for page_number in ("4", "0x1", "-1", "9" * 7):
        assert client.get(f"{listing}?page={page_number}").status_code == 404


@pytest.mark.parametrize("who", ["classmate", "other-placement", "nobody", "not-launched"])
def test_an_attempt_is_its_authors_alone(app, client, store, placed, sent, who):
    mine = handed_in(store, placed, FIRST)
    with store.session() as session:  # another lesson placed in the same course
        course_id = session.get(Placement, placed.placement_id).course_id
        other = Placement(course_id=course_id, resource_link_id="link-2", lesson_id=CASES)
        session.add(other)
        session.flush()
        other_id = other.id
    elsewhere = submission(store, other_id, placed.user_id, "print('elsewhere')\n")
    placement_id, asked, status = placed.placement_id, mine, 404
    if who == "classmate":  # launched the same placement, guesses the id
        sign_in(client, add_student(store, placed, "classmate"), [placed.placement_id])
    elif who == "other-placement":  # the author's own attempt at the other lesson, through this one
        sign_in(client, placed.user_id, [placed.placement_id, other_id])
        asked = elsewhere
    elif who == "nobody":
        status = 401
    else:
        sign_in(client, placed.user_id, [])
        status = 403
    base = f"/lessons/{placement_id}/attempts/{asked}"
    page = client.get(f"/lessons/{placed.placement_id}").get_data(as_text=True)
    csrf = form_token(page) if who in ("classmate", "other-placement") else "x"
    answers = {
        "page": client.get(base),
        "api": client.get(f"/api/placements/{placement_id}/attempts/{asked}"),
        "restore": client.post(f"{base}/restore", data={"csrf": csrf}),
    }
    expected = dict.fromkeys(answers, status)
    if who == "not-launched":
        expected["restore"] = 400  # the form's CSRF token is checked first: no page gave one
    assert {where: a.status_code for where, a in answers.items()} == expected
    for answer in answers.values():
        assert "print(f(" not in answer.get_data(as_text=True)
        assert "elsewhere" not in answer.get_data(as_text=True)
    assert answers["api"].get_json()["error"] in (
        "unknown_attempt",
        "not_signed_in",
        "not_launched",
    )
    with store.session() as session:
        assert session.scalar(select(func.count(Draft.id))) == 0  # nothing put back
    # its author, through its own placement, has it
    sign_in(client, placed.user_id, [placed.placement_id, other_id])
    assert page_of(client, placed, mine).status_code == 200
    assert client.get(f"/lessons/{other_id}/attempts/{elsewhere}").status_code == 200


def test_a_hidden_case_shows_no_more_than_the_verdict_until_it_is_revealed(app, client, store):
    placed = place(store, lesson_id=CASES, reveal="after_due", due_at=utcnow() + timedelta(days=1))
    sign_in(client, placed.user_id, [placed.placement_id])
    partly = graded(app, placed, PARTLY)
    graded(app, placed, RIGHT)

    def views():
        api = json_of(client, placed, partly).get_json()
        return api, {
            "page": page_of(client, placed, partly).get_data(as_text=True),
            "api": json.dumps(api),
            "list": client.get(f"/lessons/{placed.placement_id}/attempts").get_data(as_text=True),
        }

    api, before = views()
    assert leaks(before) == {"page": [], "api": [], "list": []}
    text = text_of(before["page"], spaced=True)
    assert "✘ secret — Failed (hidden case)" in text and "✘ two lines — Failed" in text
    assert "First difference, on line 2 of the output:" in text  # the visible case's
    # the verdict as GET /api/submissions/<id> gives it: the one student's view
    assert api["verdict"] == client.get(f"/api/submissions/{partly}").get_json()["verdict"]
    assert api["verdict"]["cases"][3] == {
        "name": "secret",
        "status": "failed",
        "weight": 1.0,
        "hidden": True,
        "feedback": "Hidden case 'secret' failed.",
        "feedback_message": {"t": "Hidden case '{name}' failed.", "a": {"name": "secret"}},
    }

    set_policy(store, placed, due_at=utcnow() - timedelta(minutes=1))
    api, after = views()
    assert sorted(leaks(after)["api"]) == sorted(SECRETS.values())
    # the page shows a revealed case's first difference, as the lesson page's verdict does
    assert {SECRETS["expected"], SECRETS["got"]} <= set(leaks(after)["page"])
    assert api["verdict"] == client.get(f"/api/submissions/{partly}").get_json()["verdict"]


def test_no_score_shows_while_the_placement_holds_its_scores(client, store):
    placed = place(store, lesson_id=SEED_ID, hold_scores=True)
    sign_in(client, placed.user_id, [placed.placement_id])
    attempt = handed_in(store, placed, FIRST, RunStatus.PASSED)
    page = text_of(page_of(client, placed, attempt).get_data(as_text=True), spaced=True)
    assert "✔ Passed — score not released yet" in page and "100%" not in page
    listing = client.get(f"/lessons/{placed.placement_id}/attempts").get_data(as_text=True)
    assert "not released yet" in listing and "100%" not in listing
    body = json_of(client, placed, attempt).get_json()
    assert body["verdict"]["score"] is None and body["verdict"]["status"] == "passed"
    assert "100%" not in body["html"]


def test_a_plain_form_puts_an_attempt_back_in_the_editor(client, store, student, sent):
    first = handed_in(store, student, FIRST)
    handed_in(store, student, SECOND)
    assert client.put(f"/api/placements/{student.placement_id}/draft",
                      json={"source": "unsaved = 1\n"}).status_code == 204  # fmt: skip
    shown = page_of(client, student, first).get_data(as_text=True)
    form = shown.split('<form class="restore-form"')[1].split("</form>")[0]
    action = re.search(r'action="([^"]+)"', form).group(1).replace("&amp;", "&")
    assert "?s=" in action and "Put back in the editor" in form

    refused = client.post(action, data={})  # no CSRF token: refused, nothing kept
    assert refused.status_code == 400
    posted = client.post(action, data={"csrf": form_token(shown)})
    assert posted.status_code == 303
    back = posted.headers["Location"]
    assert back.startswith(f"/lessons/{student.placement_id}?s=") and back.endswith("#submit-form")
    page = client.get(back.split("#")[0]).get_data(as_text=True)
    editor = page.split('<textarea id="code"')[1].split(">", 1)[1].split("</textarea>")[0]
    assert editor == FIRST.replace("'", "&#39;").replace("<", "&lt;").replace(">", "&gt;")
    with store.session() as session:
        assert session.scalar(select(Draft.source)) == FIRST
        assert session.scalar(select(func.count(Submission.id))) == 2  # nothing submitted
    assert list(sent) == []
    assert session_param(page)


def test_queued_failed_by_the_grader_late_and_regraded_attempts(client, store, student, sent):
    queued = handed_in(store, student, "print('waiting')\n", status=None)
    html = page_of(client, student, queued).get_data(as_text=True)
    page = text_of(html, spaced=True)
    assert "Queued… Its verdict shows here once it is graded." in page and "score" not in page
    assert "print('waiting')" in text_of(html)  # its code, highlighted
    assert json_of(client, student, queued).get_json()["verdict"] is None

    # the grader gave up on it: an error that is not the student's, and costs no attempt
    claim = submissions.claim(store, queued, 30, utcnow())
    submissions.fail(store, claim, "sandbox broke", utcnow())
    page = text_of(page_of(client, student, queued).get_data(as_text=True), spaced=True)
    assert "✘ Error" in page and "The grader failed on this attempt, not your code" in page
    listing = text_of(client.get(f"/lessons/{student.placement_id}").get_data(as_text=True))
    assert "Error (the grader's fault: not counted)" in listing

    late = submission(store, student.placement_id, student.user_id, FIRST, late=True)
    grade(store, late, RunStatus.FAILED)
    assert "✘ Output differs — score 0% (late)" in text_of(
        page_of(client, student, late).get_data(as_text=True), spaced=True
    )
    # a teacher's regrade: queued again (no verdict while it runs), then its new verdict
    submissions.request_regrade(store, student.placement_id, utcnow())
    assert json_of(client, student, late).get_json()["verdict"] is None
    again = submissions.claim(store, late, 30, utcnow())
    assert submissions.finish(store, again, factories.verdict(RunStatus.PASSED), utcnow()).saved
    page = text_of(page_of(client, student, late).get_data(as_text=True), spaced=True)
    assert "✔ Passed — score 100% (late)" in page
    assert "Graded again after you handed it in (your teacher regraded the lesson)" in page


def test_two_hundred_attempts_of_64_kib_leave_the_lesson_page_small(client, store, student):
    def source(n: int) -> str:
        head = f"# attempt {n}\n"
        body = "".join(f"value_{n}_{i} = {i} * {n}\n" for i in range(4000))
        return (head + body)[:MAX_SOURCE_BYTES].rsplit("\n", 1)[0] + "\n"

    assert all(len(source(n).encode()) <= MAX_SOURCE_BYTES for n in (1, 200))
    for n in range(1, 201):
        handed_in(store, student, source(n), status=RunStatus.FAILED if n % 2 else None)
    page = client.get(f"/lessons/{student.placement_id}").get_data(as_text=True)
    found = [n for n in range(1, 201) if f"# attempt {n}\n" in page]
    assert found == [200]  # the newest, in the editor; no other attempt's code
    assert len(page.encode()) < MAX_SOURCE_BYTES + 40_000  # the editor's code, and the page
    assert len(re.findall(r"<tr><td>\d+</td>", page)) == 10

    with store.session() as session:
        newest = session.scalar(select(func.max(Submission.id)))
    # two 64 KiB versions with no line in common: every line changed, the diff kept bounded
    body = json_of(client, student, newest).get_json()
    assert (body["number"], len(body["source"])) == (200, len(source(200)))
    assert "more lines of the changes are not shown here" in body["html"]
    assert len(diff_rows(body["html"])) == 1000
    assert len(body["html"].encode()) < 2_000_000
