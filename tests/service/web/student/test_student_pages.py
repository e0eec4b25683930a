"""The student's pages through the Flask test client: what they show, to whom, and when."""

import json
from datetime import timedelta

import pytest
from sqlalchemy import select

from core.compare import LineDiff
from core.runs import RunStatus
from service.queue import TaskName
from service.store.models import Draft, Membership, Placement, QuestionAnswer, Submission, utcnow
from testkit.factories import add_student, place
from testkit.sessions import sign_in
from tests.conftest import SEED
from tests.service.sessions import (
    form_token,
    grade,
    session_param,
    text_of,
)
from tests.service.web import two_stores

# every test here runs on SQLite and on PostgreSQL
database_url, store = two_stores.database_url, two_stores.store
celery_app, sent = two_stores.celery_app, two_stores.sent  # every send recorded

LESSON = "expert/what-is-attention"
SOLUTION = (SEED / "solution" / "model.py").read_text()
STARTER = (SEED / "starter" / "model.py").read_text()
PUBLIC = STARTER + (SEED / "lesson.md").read_text() + (SEED / "exercise.yaml").read_text()
# lines of the sample solution that nothing else of the lesson shows
SOLUTION_ONLY = [line for line in SOLUTION.splitlines() if line.strip() and line not in PUBLIC]


@pytest.fixture
def placed(store):
    return place(store, lesson_id=LESSON)


@pytest.fixture
def student(client, placed):
    sign_in(client, placed.user_id, [placed.placement_id])
    return placed


def lesson_url(placed):
    return f"/lessons/{placed.placement_id}"


def editor_text(page):
    return page.split('<textarea id="code"')[1].split(">", 1)[1].split("</textarea>")[0]


def submit(client, store, placed, source="print(1)\n"):
    answer = client.post(
        f"/api/placements/{placed.placement_id}/submissions", json={"source": source}
    )
    assert answer.status_code == 202
    return answer.get_json()["id"]


def test_the_lesson_page_shows_text_questions_and_exercise(client, student):
    page = client.get(lesson_url(student)).get_data(as_text=True)
    assert '<h1 translate="no">What is attention?</h1>' in page
    assert "<h2>A weighted average</h2>" in page  # the Markdown
    assert '<div class="highlight"><pre tabindex="0"><span></span><code><span class="c1">' in page
    assert page.count('type="radio" name="answer"') == 4  # choice
    assert 'aria-label="The missing part of: cikis = agirlik ____ degerler"' in page  # blank
    assert page.count('<select id="q-concepts-') == 4  # match: a select per term
    meanings = ["Carried information", "Plain mean", "Similarity measure", "Turns into weights"]
    first_select = page.split('<select id="q-concepts-0"')[1].split("</select>")[0]
    assert [m for m in meanings if m in first_select] == meanings  # sorted
    assert first_select.index("Carried") < first_select.index("Turns")
    assert "[0.787 0.107 0.107]\n[0.893 0.213]\nTrue" in page  # the expected output
    assert "# buraya yaz" in editor_text(page)  # the starter code, in the editor
    assert "0</strong> of 8 points" in page
    assert 'src="/static/vendor/codemirror.js"' in page
    assert 'href="/static/pygments.css"' in page


def test_every_link_and_form_carries_the_session_and_nothing_is_external(client, student):
    page = client.get(lesson_url(student)).get_data(as_text=True)
    import re

    for action in re.findall(r'action="([^"]+)"', page):
        assert "?s=" in action
    for href in re.findall(r'href="(/[^"]*)"', page):
        assert href.startswith("/static/") or "s=" in href, href
    assert "http://" not in page.replace('xmlns="http://www.w3.org', "")
    assert "https://" not in page
    assert '<meta name="codeblanks-session" content="' in page  # the scripts' header token


@pytest.mark.parametrize(
    ("who", "status"),
    [("nobody", 401), ("another-placement", 403), ("unknown-placement", 403)],
)
def test_the_lesson_page_refuses_those_it_is_not_for(client, store, placed, who, status):
    other = place(store, lesson_id=LESSON)
    if who == "another-placement":
        sign_in(client, other.user_id, [other.placement_id])
    elif who == "unknown-placement":
        sign_in(client, placed.user_id, [placed.placement_id])
    target = placed.placement_id + (100 if who == "unknown-placement" else 0)
    answer = client.get(f"/lessons/{target}")
    assert answer.status_code == status
    assert "What is attention?" not in answer.get_data(as_text=True)
    assert client.get(f"/lessons/{target}/progress").status_code == status


def test_answers_show_as_answered_on_reload_and_count(client, student, sent):
    url = f"/api/placements/{student.placement_id}/answers"
    assert client.post(url, json={"question_id": "rnn-advantage", "answer": 1}).status_code == 201
    wrong = {"score": "Plain mean", "softmax": "Turns into weights"}
    assert client.post(url, json={"question_id": "concepts", "answer": wrong}).status_code == 201
    page = client.get(lesson_url(student)).get_data(as_text=True)
    choice = page.split('id="q-rnn-advantage"')[1].split("</section>")[0]
    assert "<fieldset disabled>" in choice and 'value="1" required\n        checked' in choice
    assert "Correct." in choice and "In an RNN information is carried step by step" in choice
    match = page.split('id="q-concepts"')[1].split("</section>")[0]
    assert "Partly right." in match and "0.25 of 1 point" in match
    assert '<option translate="no" selected>Turns into weights</option>' in match
    blank = page.split('id="q-weighted-average"')[1].split("</section>")[0]
    assert "<fieldset >" in blank and "Explanation" not in blank
    assert "1.25</strong> of 8 points" in page
    assert [message.name for message in sent] == [TaskName.SYNC_GRADE] * 2


def test_a_plain_form_answers_without_javascript(client, student, store, sent):
    page = client.get(lesson_url(student)).get_data(as_text=True)
    csrf, token = form_token(page), session_param(page)
    posted = client.post(
        f"/lessons/{student.placement_id}/answers?s={token}",
        data={"csrf": csrf, "question_id": "concepts", "term-0": "Similarity measure",
              "term-1": "Turns into weights", "term-2": "Carried information",
              "term-3": "Plain mean"},
    )  # fmt: skip
    assert posted.status_code == 303
    assert posted.headers["Location"].startswith(f"/lessons/{student.placement_id}?s=")
    assert posted.headers["Location"].endswith("#q-concepts")
    for question_id, answer in (("rnn-advantage", "1"), ("weighted-average", " @ ")):
        data = {"csrf": csrf, "question_id": question_id, "answer": answer}
        assert client.post(f"/lessons/{student.placement_id}/answers", data=data).status_code == 303
    with store.session() as session:
        earned = {a.question_id: a.earned for a in session.scalars(select(QuestionAnswer))}
    assert earned == {"concepts": 1.0, "rnn-advantage": 1.0, "weighted-average": 1.0}
    again = client.post(
        f"/lessons/{student.placement_id}/answers",
        data={"csrf": csrf, "question_id": "concepts", "term-0": "Plain mean"},
    )
    assert again.status_code == 409 and "answered this question already" in again.text


@pytest.mark.parametrize("csrf", [None, "", "forged", "other-session"])
def test_forms_need_this_sessions_csrf_token(app, client, student, store, sent, csrf):
    if csrf == "other-session":
        other = app.test_client()
        sign_in(other, student.user_id, [student.placement_id])
        csrf = form_token(other.get(lesson_url(student)).get_data(as_text=True))
    client.get(lesson_url(student))
    data = {"question_id": "rnn-advantage", "answer": "1"}
    if csrf is not None:
        data["csrf"] = csrf
    posted = client.post(f"/lessons/{student.placement_id}/answers", data=data)
    assert posted.status_code == 400
    with store.session() as session:
        assert session.scalar(select(QuestionAnswer)) is None


def test_a_plain_form_submits_code_without_javascript(client, student, store, sent):
    page = client.get(lesson_url(student)).get_data(as_text=True)
    posted = client.post(
        f"/lessons/{student.placement_id}/submissions",
        data={"csrf": form_token(page), "source": "print(1)\r\nprint(2)\r\n"},
    )
    assert posted.status_code == 303 and posted.headers["Location"].endswith("#results")
    with store.session() as session:
        row = session.scalar(select(Submission))
    assert row.source == "print(1)\nprint(2)\n" and row.status == "queued"
    assert (sent[0].name, sent[0].args) == (TaskName.GRADE_SUBMISSION, [row.id])
    shown = client.get(lesson_url(student)).get_data(as_text=True)
    assert "Your submission is waiting to be graded" in shown
    assert f'data-pending-url="/api/submissions/{row.id}"' in shown


def test_drafts_are_saved_and_come_back_to_their_author_only(client, store, student, sent):
    url = f"/api/placements/{student.placement_id}/draft"
    assert client.put(url, json={"source": "x = '<b>draft</b>'\n"}).status_code == 204
    assert client.put(url, json={"source": "x = '<b>newer</b>'\n"}).status_code == 204
    page = client.get(lesson_url(student)).get_data(as_text=True)
    assert editor_text(page) == "x = &#39;&lt;b&gt;newer&lt;/b&gt;&#39;\n"
    with store.session() as session:
        assert len(session.scalars(select(Draft)).all()) == 1
    classmate = add_student(store, student, "student-2")
    sign_in(client, classmate, [student.placement_id])
    assert "# buraya yaz" in editor_text(client.get(lesson_url(student)).get_data(as_text=True))
    assert client.put(url, json={"source": "x" * (64 * 1024 + 1)}).status_code == 413
    sign_in(client, classmate, [])
    assert client.put(url, json={"source": "y"}).status_code == 403


def test_the_verdict_history_and_score_after_grading(client, store, student, sent):
    first = submit(client, store, student)
    diff = LineDiff(1, "[0.787 0.107 0.107]", "<script>alert(1)</script>", "differs")
    grade(store, first, RunStatus.FAILED, stdout="<script>alert(1)</script>\n",
          stderr="Traceback <b>boom</b>", diff=diff, ms=41)  # fmt: skip
    page = client.get(lesson_url(student)).get_data(as_text=True)
    assert "<script>alert(1)" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Traceback &lt;b&gt;boom&lt;/b&gt;" in page
    text = text_of(page, spaced=True)
    assert "✘ Output differs" in text and "First difference, on line 1 of the output" in text
    assert "Expected [0.787 0.107 0.107]" in text and "Ran in 41 ms" in text
    assert "Attempts used: 1." in text
    second = submit(client, store, student)
    grade(store, second, RunStatus.TIMEOUT)
    progress = client.get(f"/lessons/{student.placement_id}/progress").get_json()
    assert progress["pending"] is False and progress["revealed"] is False
    assert "Time limit exceeded" in progress["results"]
    assert "timeout feedback" in progress["results"]
    assert text_of(progress["results"]).count("UTC") == 2  # two attempts in the history
    assert "0</strong> of 8 points" in progress["score"]


def reveal_views(client, store, placed):
    """Everything a student can fetch about the placement, as text."""
    views = [client.get(lesson_url(placed)).get_data(as_text=True)]
    views.append(json.dumps(client.get(f"/lessons/{placed.placement_id}/progress").get_json()))
    with store.session() as session:
        ids = session.scalars(select(Submission.id)).all()
    views += [client.get(f"/api/submissions/{i}").get_data(as_text=True) for i in ids]
    answered = client.post(
        f"/api/placements/{placed.placement_id}/answers",
        json={"question_id": "rnn-advantage", "answer": 0},
    )
    views.append(answered.get_data(as_text=True))
    return "\n".join(text_of(view) for view in views)


@pytest.mark.parametrize(
    ("policy", "passes", "attempts", "revealed"),
    [
        ({"reveal": "never"}, True, 1, False),
        ({"reveal": "after_pass"}, False, 2, False),
        ({"reveal": "after_pass"}, True, 1, True),
        (
            {"reveal": "after_attempts", "reveal_after_attempts": 3, "max_attempts": 3},
            False,
            2,
            False,
        ),  # fmt: skip
        (
            {"reveal": "after_attempts", "reveal_after_attempts": 2, "max_attempts": 2},
            False,
            2,
            True,
        ),  # fmt: skip
        # stored before the settings refused it: no maximum, so attempts never run out
        ({"reveal": "after_attempts", "reveal_after_attempts": 2}, False, 3, False),
        ({"reveal": "after_due", "due_at": "future"}, True, 1, False),
        # stored before the settings refused it: late work taken after the answers are out
        ({"reveal": "after_due", "due_at": "past", "late_penalty": 0.5}, False, 0, True),
    ],
)
def test_the_solution_shows_only_when_the_policy_says(
    client, store, sent, policy, passes, attempts, revealed
):
    if "due_at" in policy:
        hours = 1 if policy["due_at"] == "future" else -1
        policy = {**policy, "due_at": utcnow() + timedelta(hours=hours)}
    placed = place(store, lesson_id=LESSON, **policy)
    sign_in(client, placed.user_id, [placed.placement_id])
    for attempt in range(attempts):
        passed = passes and attempt == attempts - 1
        grade(store, submit(client, store, placed),
              RunStatus.PASSED if passed else RunStatus.FAILED)  # fmt: skip
    seen = reveal_views(client, store, placed)
    assert SOLUTION_ONLY and all((line.strip() in seen) is revealed for line in SOLUTION_ONLY)
    assert ("Sample solution" in seen) is revealed
    # the questions were open and unanswered when the page was read: no answer shows
    assert "Correct answer" not in seen
    assert "Answer: cikis = agirlik @ degerler" not in seen
    # a shown solution is worth nothing: the exercise takes no more submissions
    again = client.post(f"/api/placements/{placed.placement_id}/submissions", json={"source": "1"})
    if revealed:
        assert again.status_code == 409
        assert again.get_json()["error"] in ("solution_shown", "out_of_attempts")
    else:
        assert again.status_code in (202, 409)
        assert again.get_json().get("error") != "solution_shown"


def test_an_open_question_keeps_its_answer_after_a_pass(client, store, sent):
    placed = place(store, lesson_id=LESSON, reveal="after_pass")
    sign_in(client, placed.user_id, [placed.placement_id])
    grade(store, submit(client, store, placed), RunStatus.PASSED)
    page = text_of(client.get(lesson_url(placed)).get_data(as_text=True))
    assert "Sample solution" in page
    assert "Answer: cikis = agirlik @ degerler" not in page and "Correct answer" not in page
    # answered (wrongly): its answer shows now; the other questions' answers do not
    wrong = client.post(
        f"/api/placements/{placed.placement_id}/answers",
        json={"question_id": "weighted-average", "answer": "cikis = degerler"},
    )
    assert wrong.status_code == 201 and wrong.get_json()["earned"] == 0
    page = text_of(client.get(lesson_url(placed)).get_data(as_text=True))
    assert "Answer: cikis = agirlik @ degerler" in page and "Correct answer" not in page
    # and the shown solution earns nothing
    again = client.post(f"/api/placements/{placed.placement_id}/submissions", json={"source": "1"})
    assert again.status_code == 409 and again.get_json()["error"] == "solution_shown"


def test_closed_questions_show_their_answers(client, store, sent):
    past = utcnow() - timedelta(hours=1)
    placed = place(store, lesson_id=LESSON, reveal="after_due", due_at=past)
    sign_in(client, placed.user_id, [placed.placement_id])
    page = text_of(client.get(lesson_url(placed)).get_data(as_text=True))
    assert "Sample solution" in page and "Answer: cikis = agirlik @ degerler" in page
    late = client.post(
        f"/api/placements/{placed.placement_id}/answers",
        json={"question_id": "weighted-average", "answer": "cikis = agirlik @ degerler"},
    )
    assert late.status_code == 403 and late.get_json()["error"] == "past_due"


def test_the_course_page_lists_the_placed_lessons(client, store, student):
    with store.session() as session:
        course_id = session.get(Placement, student.placement_id).course_id
        session.add(Membership(course_id=course_id, user_id=student.user_id))
        session.add(Placement(course_id=course_id, resource_link_id="link-2",
                              lesson_id="expert/causal-masking", title="Masks"))  # fmt: skip
    page = client.get(f"/courses/{course_id}").get_data(as_text=True)
    assert f'href="/lessons/{student.placement_id}?s=' in page
    assert "0 of 8 points" in page
    assert "Masks" in page and "open it from your course to start" in page
    sign_in(client, add_student(store, student, "outsider"), [])
    assert client.get(f"/courses/{course_id}").status_code == 403


def test_a_csrf_refusal_is_in_the_launchs_language(client, student, store, sent):
    with client.session_transaction() as session:
        session["locale"] = "tr"  # what a launch with launch_presentation.locale "tr-TR" keeps
    client.get(lesson_url(student))
    data = {"question_id": "rnn-advantage", "answer": "1"}
    posted = client.post(f"/lessons/{student.placement_id}/answers", data=data)
    assert posted.status_code == 400
    assert "Formun güvenlik anahtarı eksik; sayfayı yeniden aç." in posted.get_data(as_text=True)
    with store.session() as session:
        assert session.scalar(select(QuestionAnswer)) is None
