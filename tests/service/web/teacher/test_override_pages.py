"""The teacher's override of a score through the Flask test client: set, shown, kept over a
newer automatic result or removed, every change in the history, the CSV's mark, the
student's view, and every bad form refused with a clear message (never a 500)."""

import csv
import io
import re

import pytest
from sqlalchemy import func, select

from core.overrides import Part
from core.runs import RunStatus
from service.queue import TaskName
from service.store import grades
from service.store.models import Placement, ScoreOverride, Submission
from service.web import extensions
from testkit.factories import place
from testkit.sessions import sign_in
from tests.service.sessions import form_token, grade, text_of
from tests.service.web import two_stores
from tests.service.web.teacher.test_teacher_pages import LESSON, course, teacher, work

database_url, store = two_stores.database_url, two_stores.store
celery_app, sent = two_stores.celery_app, two_stores.sent
__all__ = ["course", "teacher"]  # the fixtures, shared with the teacher pages' tests

COMMENT = "Well argued; the hidden case fails on a typo only."


def student_url(placed):
    return f"/teach/placements/{placed.placement_id}/students/{placed.user_id}"


def post(client, placed, path="", **form):
    page = client.get(student_url(placed)).get_data(as_text=True)
    return client.post(
        f"{student_url(placed)}/override{path}", data={"csrf": form_token(page), **form}
    )


def score_of(app, placed):
    store = extensions.store(app)
    with store.session() as session:
        placement = session.get(Placement, placed.placement_id)
        lesson = extensions.catalog(app).lesson(LESSON)
        return grades.score(session, placement, lesson, placed.user_id)


def overrides_kept(app):
    with extensions.store(app).session() as session:
        return session.scalar(select(func.count()).select_from(ScoreOverride))


def submit(store, placed, status):
    with store.session() as session:
        row = Submission(placement_id=placed.placement_id, user_id=placed.user_id, source="x")
        session.add(row)
        session.flush()
        submission_id = row.id
    grade(store, submission_id, status)


def test_an_override_with_a_comment_stands_is_synced_and_kept_in_the_history(
    client, store, teacher, sent
):
    work(store, teacher)  # 1 question point + the 5-point exercise passed: 6 of 8
    sent.clear()
    answer = post(client, teacher, part="lesson", given="7,5", comment=f"  {COMMENT}\r\n")
    assert answer.status_code == 303
    assert answer.headers["Location"].endswith("#override")
    assert [(s.name, s.args) for s in sent] == [
        (TaskName.SYNC_GRADE, [teacher.user_id, teacher.placement_id])
    ]
    assert (
        score_of(client.application, teacher).given,
        score_of(client.application, teacher).maximum,
    ) == (7.5, 8.0)
    page = text_of(client.get(answer.headers["Location"]).get_data(as_text=True))
    assert "Score set: the LMS gets it with your comment." in page
    assert "7.5 of 8 points set by a teacher" in page
    assert "Automatic score: 6 of 8" in page
    assert f"Your override: 7.5 of 8 for the lesson. Comment: {COMMENT}" in page
    assert re.search(
        rf"teacher-1 set the lesson to 7\.5 \(automatic: 6\) {re.escape(COMMENT)}", page
    )

    book = text_of(client.get(f"/teach/courses/{teacher.platform_id}").get_data(as_text=True))
    assert "7.5" in book and "set by a teacher" in book
    table = client.get(f"/teach/courses/{teacher.platform_id}/gradebook.csv")
    rows = list(csv.reader(io.StringIO(table.get_data(as_text=True))))
    assert rows[0][-1] == "What is attention?: override"
    [mine] = [row for row in rows if row[2] == "7.5"]
    assert mine[-1] == "override"
    assert [row[-1] for row in rows[1:] if row is not mine] == [""] * (len(rows) - 2)


def test_the_exercise_part_keeps_the_questions_as_answered(client, store, teacher):
    work(store, teacher, submission=RunStatus.FAILED)  # 1 question point, 0 of the exercise
    assert post(client, teacher, part="exercise", given="2.5", comment="").status_code == 303
    assert score_of(client.application, teacher).given == 3.5
    with store.session() as session:  # another question answered right: 1 more point
        from service.store.models import QuestionAnswer

        session.add(QuestionAnswer(placement_id=teacher.placement_id, user_id=teacher.user_id,
                                   question_id="weighted-average", answer="@", earned=1.0,
                                   possible=1.0))  # fmt: skip
    assert score_of(client.application, teacher).given == 4.5
    page = text_of(client.get(student_url(teacher)).get_data(as_text=True))
    assert "for the exercise, the questions as answered" in page
    assert "A newer automatic result exists" not in page  # the exercise's part did not change


def test_a_newer_automatic_result_never_replaces_the_override_the_teacher_chooses(
    client, store, teacher, sent
):
    work(store, teacher, submission=RunStatus.FAILED)  # 1 of 8
    assert post(client, teacher, part="lesson", given="4", comment=COMMENT).status_code == 303
    submit(store, teacher, RunStatus.PASSED)  # automatic: 6 of 8
    assert score_of(client.application, teacher).given == 4.0  # the override still counts
    page = text_of(client.get(student_url(teacher)).get_data(as_text=True))
    assert "A newer automatic result exists: 6 of 8 (it was 1 when" in page
    book = client.get(f"/teach/courses/{teacher.platform_id}").get_data(as_text=True)
    assert "newer automatic result: 6" in text_of(book)
    assert "/override/keep" in book and "/override/remove" in book

    seen = re.search(r'name="seen" value="([^"]+)"', book).group(1)
    assert float(seen) == 6.0
    kept = post(client, teacher, "/keep", seen=seen, back="gradebook")
    assert (
        kept.status_code == 303
        and f"/teach/courses/{teacher.platform_id}" in kept.headers["Location"]
    )
    page = text_of(client.get(student_url(teacher)).get_data(as_text=True))
    assert "A newer automatic result exists" not in page
    assert "kept 4 over the automatic 6" in page
    assert score_of(client.application, teacher).given == 4.0

    submit(store, teacher, RunStatus.FAILED)  # worse: the best stays 6, nothing newer
    assert "A newer automatic result exists" not in text_of(
        client.get(student_url(teacher)).get_data(as_text=True)
    )
    sent.clear()
    assert post(client, teacher, "/remove").status_code == 303
    assert [s.name for s in sent] == [TaskName.SYNC_GRADE]
    assert score_of(client.application, teacher).given == 6.0
    page = text_of(client.get(student_url(teacher)).get_data(as_text=True))
    assert "removed the override (automatic: 6)" in page
    assert (
        page.index("removed the override")
        < page.index("kept 4")
        < page.index("set the lesson to 4")
    )
    assert "Remove the override" not in page  # none stands
    assert overrides_kept(client.application) == 3


@pytest.mark.parametrize(
    ("form", "says"),
    [
        ({"part": "lesson", "given": ""}, "Give a number of points from 0 to 8."),
        ({"part": "lesson", "given": "abc"}, "Give a number of points from 0 to 8."),
        ({"part": "lesson", "given": "nan"}, "Give a number of points from 0 to 8."),
        ({"part": "lesson", "given": "1e1"}, "Give a number of points from 0 to 8."),
        ({"part": "lesson", "given": "-1"}, "Give a number of points from 0 to 8."),
        ({"part": "lesson", "given": "8.01"}, "Give a number of points from 0 to 8."),
        ({"part": "lesson", "given": "\u0663"}, "Give a number of points from 0 to 8."),
        ({"part": "lesson", "given": "9" * 400}, "Give a number of points from 0 to 8."),
        ({"part": "exercise", "given": "5.5"}, "Give a number of points from 0 to 5."),
        ({"part": "everything", "given": "1"}, "Choose what the score replaces"),
        ({"part": "lesson", "given": "1", "comment": "x" * 1001}, "Keep the comment to 1000"),
        ({"part": "lesson", "given": "1", "comment": "a\x00b"}, "control character"),
        ({"given": "1"}, "Choose what the score replaces"),
    ],
)
def test_a_bad_override_is_refused_beside_its_form_and_nothing_is_kept(
    client, store, teacher, sent, form, says
):
    work(store, teacher)
    sent.clear()
    answer = post(client, teacher, **form)
    assert answer.status_code == 400
    page = answer.get_data(as_text=True)
    assert says in text_of(page)
    assert 'aria-invalid="true"' in page and 'role="alert"' in page
    assert overrides_kept(client.application) == 0 and sent == []
    assert score_of(client.application, teacher).given == 6.0


def test_overrides_need_the_form_token_and_a_teacher_of_the_course(client, store, teacher, sent):
    work(store, teacher)
    url = f"{student_url(teacher)}/override"
    for path in ("", "/remove", "/keep"):
        assert client.post(url + path, data={"part": "lesson", "given": "1"}).status_code == 400
    other = place(store, lesson_id=LESSON)  # another course's placement and student
    page = client.get(student_url(teacher)).get_data(as_text=True)
    token = form_token(page)
    answer = client.post(
        f"{student_url(other)}/override", data={"csrf": token, "part": "lesson", "given": "1"}
    )
    assert answer.status_code == 403
    unknown = f"/teach/placements/{teacher.placement_id}/students/999999/override"
    assert (
        client.post(unknown, data={"csrf": token, "part": "lesson", "given": "1"}).status_code
        == 404
    )
    assert post(client, teacher, "/remove").status_code == 409  # none stands
    assert post(client, teacher, "/keep", seen="6").status_code == 409
    assert post(client, teacher, part="lesson", given="5").status_code == 303
    assert post(client, teacher, "/keep", seen="six").status_code == 400
    assert post(client, teacher, "/keep", seen="nan").status_code == 400
    assert post(client, teacher, "/keep", seen="1.666667").status_code == 303  # a third of 5
    sign_in(client, teacher.user_id, placements=[teacher.placement_id])  # the student
    token = form_token(client.get(f"/lessons/{teacher.placement_id}").get_data(as_text=True))
    answer = client.post(url, data={"csrf": token, "part": "lesson", "given": "8"})
    assert answer.status_code == 403
    assert overrides_kept(client.application) == 2
    assert score_of(client.application, teacher).given == 5.0


def test_the_student_sees_the_override_and_the_teachers_comment(client, store, teacher):
    work(store, teacher)
    assert post(client, teacher, part="lesson", given="7", comment=COMMENT).status_code == 303
    sign_in(client, teacher.user_id, placements=[teacher.placement_id])
    page = text_of(client.get(f"/lessons/{teacher.placement_id}").get_data(as_text=True))
    assert "Your score so far: 7 of 8 points (set by your teacher)" in page
    assert f"Your teacher's comment: {COMMENT}" in page


def test_the_gradebook_adds_up_the_override_as_the_sync_does(client, store, teacher):
    from service.web.teacher import course_gradebook

    work(store, teacher, submission=RunStatus.FAILED)
    assert post(client, teacher, part=Part.EXERCISE.value, given="3").status_code == 303
    book = course_gradebook.build(
        store, extensions.catalog(client.application), teacher.platform_id
    )
    [cell] = [row.cells[0] for row in book.rows if row.user_id == teacher.user_id]
    assert cell.score == score_of(client.application, teacher)
    assert cell.overridden and cell.scored is not None and cell.scored.automatic.given == 1.0
