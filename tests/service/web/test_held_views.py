"""Held scores on the pages and the JSON API, through the Flask test client (issue 29, 3).

While a placement holds its scores the student sees that the work is graded and when the
score comes, not the score (the JSON keeps its shape: `score` is null); the feedback stays.
The teacher releases them from a form that checks who asks and carries CSRF.
"""

from datetime import UTC, datetime

import pytest
from sqlalchemy import select, update

from core.runs import RunStatus
from service.queue import TaskName
from service.store.models import GradeSync, Membership, Placement, Submission
from testkit.celery import Sent
from testkit.factories import add_student, place
from testkit.sessions import sign_in
from tests.service.sessions import form_token, grade, text_of
from tests.service.web import two_stores

database_url, store = two_stores.database_url, two_stores.store
celery_app, sent = two_stores.celery_app, two_stores.sent

LESSON = "expert/what-is-attention"
RELEASE = datetime(2027, 1, 31, 23, 59, tzinfo=UTC)


@pytest.fixture
def held(store):
    placed = place(store, lesson_id=LESSON, hold_scores=True, release_at=RELEASE)
    with store.session() as session:
        row = Submission(placement_id=placed.placement_id, user_id=placed.user_id, source="x")
        session.add(row)
        session.flush()
        submission_id = row.id
    grade(store, submission_id, RunStatus.PASSED)
    return placed, submission_id


def unhold(store, placement_id):
    with store.session() as session:
        session.execute(update(Placement).values(hold_scores=False))


def test_the_api_hides_a_held_score_and_keeps_the_shape(client, store, held):
    placed, submission_id = held
    sign_in(client, placed.user_id, [placed.placement_id])
    body = client.get(f"/api/submissions/{submission_id}").get_json()
    assert body["verdict"]["score"] is None and body["verdict"]["status"] == "passed"
    unhold(store, placed.placement_id)
    shown = client.get(f"/api/submissions/{submission_id}").get_json()
    assert shown["verdict"]["score"] == 1.0
    assert set(shown["verdict"]) == set(body["verdict"]) and set(shown) == set(body)


def test_the_lesson_page_says_when_the_score_comes(client, store, held):
    placed, _ = held
    sign_in(client, placed.user_id, [placed.placement_id])
    page = text_of(client.get(f"/lessons/{placed.placement_id}").get_data(as_text=True), True)
    assert "graded; your score will be released on" in page and "2027" in page
    assert "of 8 points" not in page and "not released yet" in page  # no attempt's score
    course = text_of(client.get("/courses/" + str(course_of(store, placed))).get_data(as_text=True))
    assert "(score not released yet)" in course and "of 8 points" not in course
    unhold(store, placed.placement_id)
    page = text_of(client.get(f"/lessons/{placed.placement_id}").get_data(as_text=True), True)
    assert "5 of 8 points" in page and "released" not in page


def course_of(store, placed):
    with store.reading() as session:
        return session.get(Placement, placed.placement_id).course_id


def test_only_the_courses_teacher_releases_with_the_forms_token(client, store, held, sent):
    placed, _ = held
    course_id = course_of(store, placed)
    teacher = add_student(store, placed, "teacher-1")
    with store.session() as session:
        session.add(Membership(course_id=course_id, user_id=teacher, teacher=True))
        session.execute(update(GradeSync).values(status="held"))
    url = f"/teach/placements/{placed.placement_id}/release"
    sign_in(client, placed.user_id, [placed.placement_id])
    assert client.post(url, data={"csrf": "x"}).status_code == 403  # a student
    sign_in(client, teacher, teaches=[course_id])
    book = client.get(f"/teach/courses/{course_id}").get_data(as_text=True)
    assert "Scores held until" in text_of(book, True)
    assert client.post(url, data={"csrf": "x"}).status_code == 400
    released = client.post(url, data={"csrf": form_token(book), "back": "gradebook"})
    assert released.status_code == 303 and "released=1" in released.headers["Location"]
    assert sent == [Sent(TaskName.SYNC_GRADE, [placed.user_id, placed.placement_id],
                         options={"queue": "sync"})]  # fmt: skip
    with store.reading() as session:
        assert session.scalars(select(GradeSync.status)).all() == ["pending"]
    again = client.post(url, data={"csrf": form_token(book)})  # pressed twice: nothing more
    assert again.status_code == 303 and "released=0" in again.headers["Location"]
    assert len(sent) == 1


def test_the_settings_hold_and_date_are_checked_and_kept(client, store, held):
    placed, _ = held
    course_id = course_of(store, placed)
    teacher = add_student(store, placed, "teacher-1")
    with store.session() as session:
        session.add(Membership(course_id=course_id, user_id=teacher, teacher=True))
    sign_in(client, teacher, teaches=[course_id])
    url = f"/teach/placements/{placed.placement_id}"
    page = client.get(url).get_data(as_text=True)
    assert 'value="2027-01-31T23:59"' in page and 'name="hold" value="1" checked' in page
    form = {"csrf": form_token(page), "reveal": "never", "late": "refuse"}
    dated = client.post(f"{url}/settings", data={**form, "release_at": "2027-02-01T08:00"})
    assert dated.status_code == 400 and "needs the scores held" in dated.get_data(as_text=True)
    kept = client.post(
        f"{url}/settings", data={**form, "hold": "1", "release_at": "2027-02-01T08:00"}
    )
    assert kept.status_code == 303
    with store.reading() as session:
        saved = session.get(Placement, placed.placement_id)
        assert saved.holds_scores and saved.release_at.isoformat() == "2027-02-01T08:00:00+00:00"
    assert client.post(f"{url}/settings", data=form).status_code == 303  # the hold lifted
    with store.reading() as session:
        saved = session.get(Placement, placed.placement_id)
        assert not saved.hold_scores and saved.released_at is not None
