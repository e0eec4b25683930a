"""A student's exception through the Flask test client: set from the student's page and the
gradebook, refused clearly when wrong (CSRF, dates, numbers, another course's placement or
student), shown to that student alone, and its grade sent again."""

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from service.queue import TaskName
from service.store.models import Placement, PolicyException, Submission
from testkit.celery import Sent
from testkit.factories import add_student, place
from testkit.sessions import sign_in
from tests.service.sessions import form_token, text_of
from tests.service.web import two_stores
from tests.service.web.teacher.test_teacher_pages import LESSON, course, teacher, work

database_url, store = two_stores.database_url, two_stores.store
celery_app, sent = two_stores.celery_app, two_stores.sent
__all__ = ["course", "teacher"]  # the fixtures, shared with the teacher's pages' tests

DUE = datetime(2026, 11, 30, 23, 59, tzinfo=UTC)


@pytest.fixture
def due(store, teacher):
    """The lesson was due on DUE, with at most 2 attempts and late work losing 50%."""
    with store.session() as session:
        session.execute(update(Placement).where(Placement.id == teacher.placement_id)
                        .values(due_at=DUE, max_attempts=2, late_penalty=0.5))  # fmt: skip
    return teacher


def student_url(placed, user_id=None):
    return f"/teach/placements/{placed.placement_id}/students/{user_id or placed.user_id}"


def saved(store):
    with store.session() as session:
        return [(r.user_id, r.due_at, r.max_attempts, r.waive_penalty, r.set_by)
                for r in session.scalars(select(PolicyException))]  # fmt: skip


@pytest.mark.parametrize(
    ("form", "field", "says"),
    [
        ({"due_at": "2026-11-30T23:59"}, "due_at", "Give a date after the lesson's due date"),
        ({"due_at": "tomorrow"}, "due_at", "Give a date and time like 2027-01-31T23:59"),
        ({"max_attempts": "2"}, "max_attempts", "Give more than the lesson's 2 attempts."),
        ({"max_attempts": "lots"}, "max_attempts", "Give a whole number from 1 to 1000"),
        ({"max_attempts": "99999"}, "max_attempts", "Give a whole number from 1 to 1000"),
        ({}, None, "Give a later due date, more attempts, or waive the late penalty"),
    ],
)
def test_a_faulty_exception_is_refused_clearly_and_nothing_is_saved(
    client, store, due, sent, form, field, says
):
    page = client.get(student_url(due)).get_data(as_text=True)
    answer = client.post(f"{student_url(due)}/exception", data={"csrf": form_token(page), **form})
    assert answer.status_code == 400
    shown = answer.get_data(as_text=True)
    assert says in text_of(shown)
    if field:
        assert f'aria-invalid="true" aria-describedby="exception-{field}-error"' in shown
    assert saved(store) == [] and sent == []


def test_what_the_lesson_does_not_have_cannot_be_extended(client, store, teacher):
    page = client.get(student_url(teacher)).get_data(as_text=True)
    form = {"csrf": form_token(page), "due_at": "2027-01-01T00:00", "max_attempts": "3",
            "waive_penalty": "1"}  # fmt: skip
    answer = client.post(f"{student_url(teacher)}/exception", data=form)
    text = text_of(answer.get_data(as_text=True))
    assert answer.status_code == 400
    assert "This lesson has no due date to extend." in text
    assert "This lesson has no limit on attempts to raise." in text
    assert "there is no penalty to waive: give a later due date instead" in text
    assert saved(store) == []


def test_an_exception_needs_the_pages_csrf_token(client, store, due):
    form = {"due_at": "2026-12-05T12:00"}
    assert client.post(f"{student_url(due)}/exception", data=form).status_code == 400
    assert (
        client.post(f"{student_url(due)}/exception", data={**form, "csrf": "x"}).status_code == 400
    )
    course_id = due.platform_id
    url = f"/teach/courses/{course_id}/exceptions"
    both = {"placement_id": due.placement_id, "user_id": due.user_id, **form}
    assert client.post(url, data=both).status_code == 400
    assert saved(store) == []


def test_an_exception_set_on_the_students_page_is_shown_kept_and_sent(
    client, store, course, due, sent
):
    submission_id = work(store, due)
    sent.clear()
    page = client.get(student_url(due)).get_data(as_text=True)
    form = {"csrf": form_token(page), "due_at": "2026-12-05T12:00", "max_attempts": "4",
            "waive_penalty": "1"}  # fmt: skip
    answer = client.post(f"{student_url(due)}/exception", data=form)
    assert answer.status_code == 303 and answer.headers["Location"].endswith("saved=1#exception")
    teacher_id = course[1]
    later = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
    assert saved(store) == [(due.user_id, later, 4, True, teacher_id)]
    # the score it changes goes to the LMS
    assert sent == [Sent(TaskName.SYNC_GRADE, [due.user_id, due.placement_id],
                         options={"queue": "sync"})]  # fmt: skip
    shown = text_of(client.get(answer.headers["Location"]).get_data(as_text=True), spaced=True)
    assert "Exception saved." in shown
    assert "Due Dec 5, 2026, 12:00 UTC instead of Nov 30, 2026, 23:59 UTC." in shown
    assert "4 attempts instead of 2." in shown and "The late penalty is waived." in shown
    assert "Set by teacher-1" in shown
    for url in (f"/teach/courses/{due.platform_id}", f"/teach/placements/{due.placement_id}"):
        marked = client.get(url).get_data(as_text=True)  # the gradebook, the lesson's page
        assert f"{student_url(due)}?" in marked
        assert "Ada, What is attention?: exception" in marked
    # the student sees it on their lesson page; the other student does not see theirs
    sign_in(client, due.user_id, [due.placement_id])
    lesson = text_of(client.get(f"/lessons/{due.placement_id}").get_data(as_text=True))
    assert (
        "Your due date: Dec 5, 2026, 12:00 UTC (an exception for you); late work costs you nothing."
        in lesson
    )
    assert "Attempts used: 1 of 4 (more attempts for you: an exception)." in lesson
    other = course[2]
    sign_in(client, other, [due.placement_id])
    theirs = text_of(client.get(f"/lessons/{due.placement_id}").get_data(as_text=True))
    assert "Due Nov 30, 2026, 23:59 UTC; late work loses 50%." in theirs
    assert "exception" not in theirs and "Dec 5" not in theirs
    assert "Attempts used: 0 of 2." in theirs
    # removed: the lesson's policy again, and sent again
    sign_in(client, teacher_id, teaches=[due.platform_id])
    page = client.get(student_url(due)).get_data(as_text=True)
    sent.clear()
    answer = client.post(f"{student_url(due)}/exception",
                         data={"csrf": form_token(page), "remove": "1"})  # fmt: skip
    assert answer.status_code == 303 and saved(store) == []
    assert [s.name for s in sent] == [TaskName.SYNC_GRADE]
    with store.session() as session:
        assert session.get(Submission, submission_id) is not None


def test_an_exception_from_the_gradebook_checks_the_lesson_and_the_student(
    client, store, course, due, sent
):
    book_url = f"/teach/courses/{due.platform_id}"
    page = client.get(book_url).get_data(as_text=True)
    assert 'id="exceptions"' in page
    token = form_token(page)
    url = f"{book_url}/exceptions"
    form = {"csrf": token, "due_at": "2026-12-05T12:00"}
    elsewhere = place(store, lesson_id=LESSON)  # another course's placement and student
    stranger = add_student(store, elsewhere, "student-9")
    wrong = [(elsewhere.placement_id, due.user_id), ("x", due.user_id),
             (due.placement_id, elsewhere.user_id), (due.placement_id, stranger),
             (due.placement_id, "x")]  # fmt: skip
    for placement_id, user_id in wrong:
        answer = client.post(url, data={**form, "placement_id": placement_id, "user_id": user_id})
        assert answer.status_code == 404, (placement_id, user_id)
    pair = {"placement_id": due.placement_id, "user_id": due.user_id}
    bad = client.post(url, data={**form, **pair, "due_at": "2026-11-01T00:00"})
    assert bad.status_code == 400
    assert "Give a date after the lesson's due date" in text_of(bad.get_data(as_text=True))
    assert saved(store) == []
    quiet = course[2]
    answer = client.post(url, data={**form, "placement_id": due.placement_id, "user_id": quiet})
    assert answer.status_code == 303 and answer.headers["Location"].endswith(
        "excepted=1#exceptions"
    )
    assert [row[:2] for row in saved(store)] == [(quiet, datetime(2026, 12, 5, 12, 0, tzinfo=UTC))]
    assert sent == []  # Berna has no work yet: nothing to send
    shown = text_of(client.get(answer.headers["Location"]).get_data(as_text=True), spaced=True)
    assert "Exception saved." in shown and "Berna not started exception" in shown


def test_the_course_page_shows_the_students_own_due_date(client, store, due):
    later = datetime.now(UTC) + timedelta(days=3)
    with store.session() as session:
        session.add(PolicyException(placement_id=due.placement_id, user_id=due.user_id,
                                    due_at=later.replace(second=0, microsecond=0)))  # fmt: skip
    sign_in(client, due.user_id, [due.placement_id])
    with store.session() as session:
        course_id = session.get(Placement, due.placement_id).course_id
    text = text_of(client.get(f"/courses/{course_id}").get_data(as_text=True))
    assert f"due {later:%b} {later.day}, {later:%Y, %H:%M} UTC" in text
    assert "Nov 30, 2026" not in text
