"""A verdict's figures on the pages and the JSON API, and their PNGs served only to their
author and the course's teachers (on SQLite and PostgreSQL, through the Flask test client)."""

import html
import re
from dataclasses import replace

import pytest
from sqlalchemy import select

from core.figures import Figure
from core.runs import RunStatus
from service.store import submissions
from service.store.models import Placement, utcnow
from testkit import factories
from testkit.factories import add_student, place
from testkit.sessions import sign_in
from tests.service.sessions import page_session, text_of
from tests.service.web import two_stores
from tests.workers.sandbox import pngs

database_url, store = two_stores.database_url, two_stores.store
celery_app, sent = two_stores.celery_app, two_stores.sent

LESSON = "expert/scaled-dot-product"  # with cases: figures show under the case that drew them
PNG = pngs.png(4, 3)
ALT = 'Dikkat ağırlıkları <b>"x"</b>'


@pytest.fixture
def drawn(store):
    """A graded submission whose visible case drew one figure; its placement and course."""
    placed = place(store, lesson_id=LESSON)
    verdict = factories.verdict(RunStatus.PASSED)
    case = replace(verdict.cases[0], name="the lesson's example", figures=(Figure(PNG, 4, 3, ALT),))
    submission_id = factories.submission(store, placed.placement_id, placed.user_id)
    claim = submissions.claim(store, submission_id, 30, utcnow())
    assert submissions.finish(store, claim, replace(verdict, cases=(case,)), utcnow()).saved
    with store.reading() as session:
        course_id = session.scalar(
            select(Placement.course_id).where(Placement.id == placed.placement_id)
        )
    return placed, submission_id, course_id


def figure_url(client, placed, submission_id):
    sign_in(client, placed.user_id, [placed.placement_id])
    verdict = client.get(f"/api/submissions/{submission_id}").get_json()["verdict"]
    [figure] = verdict["figures"]
    return figure


def test_the_verdict_json_lists_the_figure_with_its_url_and_the_url_serves_the_png(client, drawn):
    placed, submission_id, _ = drawn
    figure = figure_url(client, placed, submission_id)
    assert {k: v for k, v in figure.items() if k != "url"} == {
        "width": 4,
        "height": 3,
        "case": "the lesson's example",
        "alt": ALT,
    }
    assert re.fullmatch(r"/figures/\d+\.png\?s=[\w.-]+", figure["url"])
    answer = client.get(figure["url"])
    assert answer.status_code == 200 and answer.data == PNG
    assert answer.headers["Content-Type"] == "image/png"
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert answer.headers["Content-Security-Policy"] == (
        "default-src 'none'; frame-ancestors 'none'; sandbox"
    )
    assert answer.headers["Cache-Control"].startswith("private")


def test_only_the_author_and_the_course_s_teachers_get_it(app, client, store, drawn):
    placed, submission_id, course_id = drawn
    path = figure_url(client, placed, submission_id)["url"].split("?")[0]
    other_student = add_student(store, placed, "student-2")
    elsewhere = place(store, lesson_id=LESSON)  # another course, of another platform
    with store.reading() as session:
        other_course = session.scalar(
            select(Placement.course_id).where(Placement.id == elsewhere.placement_id)
        )
    teacher = add_student(store, placed, "teacher-1")
    who = {
        "author": (placed.user_id, [placed.placement_id], [], 200),
        "the course's teacher": (teacher, [placed.placement_id], [course_id], 200),
        "another student": (other_student, [placed.placement_id], [], 404),
        "another course's teacher": (elsewhere.user_id, [], [other_course], 404),
    }
    for name, (user, placements, teaches, status) in who.items():
        sign_in(client, user, placements, teaches)
        assert client.get(path).status_code == status, name
    with client.session_transaction() as held:
        held.clear()
    refused = client.get(path)
    assert refused.status_code == 404  # nobody: as for a figure that does not exist
    sign_in(client, placed.user_id, [placed.placement_id])
    missing = client.get("/figures/999999.png")
    for answer in (refused, missing):  # the same words, whoever asks, whatever there is
        assert "There is no such figure of yours." in text_of(answer.get_data(as_text=True))


def test_an_img_without_the_cookie_gets_it_with_the_page_s_link_token(app, client, drawn):
    placed, submission_id, _ = drawn
    sign_in(client, placed.user_id, [placed.placement_id])
    page = client.get(f"/lessons/{placed.placement_id}").get_data(as_text=True)
    src = html.unescape(re.search(r'<img src="(/figures/\d+\.png\?s=[^"]+)"', page).group(1))
    fresh = app.test_client()  # an iframe that sends no third-party cookie
    assert fresh.get(src).data == PNG
    assert fresh.get(src.split("?")[0]).status_code == 404
    token = page_session(page)  # the script's header token is no link token for a URL
    assert fresh.get(src.split("?")[0], query_string={"s": token}).status_code == 404


def test_the_student_s_verdict_shows_the_figure_under_its_case_with_its_text(client, drawn):
    placed, submission_id, _ = drawn
    sign_in(client, placed.user_id, [placed.placement_id])
    page = client.get(f"/lessons/{placed.placement_id}").get_data(as_text=True)
    case = page[page.index('class="cases"') :]
    img = re.search(r"<img [^>]*>", case).group(0)
    assert 'alt="Dikkat ağırlıkları &lt;b&gt;&#34;x&#34;&lt;/b&gt;"' in img  # escaped, whole
    assert 'width="4" height="3"' in img
    assert "Figure 1 of case the lesson's example" in text_of(case, True)


def test_the_teacher_s_page_of_the_student_shows_it_too(client, store, drawn):
    placed, submission_id, course_id = drawn
    teacher = add_student(store, placed, "teacher-1")
    sign_in(client, teacher, [placed.placement_id], [course_id])
    url = f"/teach/placements/{placed.placement_id}/students/{placed.user_id}"
    page = client.get(url).get_data(as_text=True)
    src = html.unescape(re.search(r'<img src="(/figures/\d+\.png\?s=[^"]+)"', page).group(1))
    assert client.get(src).data == PNG
    assert "Dikkat ağırlıkları" in text_of(page, True)


def test_a_verdict_that_drew_nothing_lists_no_figure(client, store):
    placed = place(store, lesson_id=LESSON)
    submission_id = factories.submission(store, placed.placement_id, placed.user_id)
    claim = submissions.claim(store, submission_id, 30, utcnow())
    submissions.finish(store, claim, factories.verdict(), utcnow())
    sign_in(client, placed.user_id, [placed.placement_id])
    body = client.get(f"/api/submissions/{submission_id}").get_json()
    assert body["verdict"]["figures"] == []
    assert "<img" not in client.get(f"/lessons/{placed.placement_id}").get_data(as_text=True)
