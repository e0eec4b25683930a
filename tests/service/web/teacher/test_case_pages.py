"""The teacher's pages of an exercise with cases: each case's pass rate and the commonest
first failing case on the lesson's page, every case in full (hidden ones too) on a student's.
On SQLite and PostgreSQL, with a catalog of the test's own holding a lesson with cases."""

import shutil
from dataclasses import replace

import pytest

from core.runs import RunStatus
from service.store.models import Membership, Placement
from testkit.factories import add_student, place
from testkit.sessions import sign_in
from tests.conftest import SEED
from tests.service.sessions import text_of
from tests.service.store.case_work import graded
from tests.service.web import two_stores

database_url, store = two_stores.database_url, two_stores.store
celery_app, sent = two_stores.celery_app, two_stores.sent  # every send recorded

CASED = "expert/attention-cases"
PLAIN = "expert/what-is-attention"
P, F, T = RunStatus.PASSED, RunStatus.FAILED, RunStatus.TIMEOUT

EXERCISE = """\
title: Attention, case by case
prompt: |
  Compute the softmax weights and the weighted average.
entrypoint: model.py
compare: numeric
tolerance: {rel: 1.0e-6, abs: 1.0e-3}
points: 4
cases:
  - name: the example
    expected_output: expected_output.txt
  - name: equal scores
    expr: softmax(np.zeros(4))
    expected: [0.25, 0.25, 0.25, 0.25]
    weight: 2
    hidden: true
  - name: a row
    stdin: "3\\n1 2 3\\n"
    output: |
      [0.09 0.245 0.665]
"""


@pytest.fixture
def settings(settings, tmp_path):
    """The app's catalog: the seed lesson, and a copy of it graded by three cases."""
    track = tmp_path / "lessons" / "expert"
    shutil.copytree(SEED, track / "what-is-attention")
    shutil.copytree(SEED, track / "attention-cases")
    (track / "attention-cases" / "exercise.yaml").write_text(EXERCISE)
    (track / "track.yaml").write_text(
        "title: Expert\nlessons:\n  - what-is-attention\n  - attention-cases\n"
    )
    return replace(settings, lessons_dir=tmp_path / "lessons")


def course_of(store, lesson_id, students):
    """Place the lesson in a course with a teacher and `students` more students."""
    placed = place(store, lesson_id=lesson_id)
    users = [placed.user_id] + [add_student(store, placed, f"s{i}") for i in range(students)]
    teacher = add_student(store, placed, "teacher-1")
    with store.session() as session:
        course_id = session.get(Placement, placed.placement_id).course_id
        for user_id in users:
            session.add(Membership(course_id=course_id, user_id=user_id, teacher=False))
        session.add(Membership(course_id=course_id, user_id=teacher, teacher=True))
    return placed.placement_id, course_id, teacher, users


def verdicts(example, equal, row):
    return {"the example": example, "equal scores": equal, "a row": row}


@pytest.fixture
def cased(store):
    """Five students on the lesson with cases: four graded, their earlier tries not counted."""
    placement_id, course_id, teacher, users = course_of(store, CASED, 4)
    a, b, c, d, _never = users
    graded(store, placement_id, a, verdicts(F, F, F))
    graded(store, placement_id, a, verdicts(P, F, P))  # first fails the hidden case
    graded(store, placement_id, b, verdicts(T, P, F))  # first fails the example
    graded(store, placement_id, c, verdicts(P, P, P))
    graded(store, placement_id, d, verdicts(P, F, F))  # first fails the hidden case
    return placement_id, course_id, teacher, users


def test_the_lesson_page_shows_each_cases_pass_rate_and_the_commonest_first_failure(client, cased):
    placement_id, course_id, teacher, _ = cased
    sign_in(client, teacher, teaches=[course_id])
    page = client.get(f"/teach/placements/{placement_id}").get_data(as_text=True)
    text = text_of(page, spaced=True)
    assert "4 of 5 students have started" in text  # the histogram is still there
    assert "Counted over each student's latest graded submission: 4 students" in text
    assert "the example 1 3 of 4 75%" in text
    assert "equal scores hidden 2 2 of 4 50%" in text
    assert "a row 1 2 of 4 50%" in text
    first = text[text.index("The commonest first failing case") :]
    assert first.index("equal scores hidden : 2 students (2 × failed)") < first.index(
        "the example: 1 student (1 × time limit exceeded)"
    )
    assert "1 student passes every case" in text
    # the first differing lines belong to an exercise without cases
    assert "Where failing programs first go wrong" not in text


def test_a_lesson_page_says_who_was_graded_before_cases_were_kept(client, store):
    placement_id, course_id, teacher, (a, b) = course_of(store, CASED, 1)
    graded(store, placement_id, a, None)
    sign_in(client, teacher, teaches=[course_id])
    text = text_of(client.get(f"/teach/placements/{placement_id}").get_data(as_text=True), True)
    assert "latest graded submission: 0 students" in text
    assert "1 more was graded before cases were recorded; a regrade counts it" in text
    assert "the example 1 0 of 0 –" in text and "No graded submission yet" in text


def test_the_lesson_page_of_an_exercise_without_cases_is_as_it_was(client, store):
    placement_id, course_id, teacher, (a,) = course_of(store, PLAIN, 0)
    graded(store, placement_id, a, {"the example": F})
    sign_in(client, teacher, teaches=[course_id])
    text = text_of(client.get(f"/teach/placements/{placement_id}").get_data(as_text=True), True)
    assert "Where failing programs first go wrong" in text
    assert "The commonest first failing case" not in text and "Counted over" not in text


def test_the_teacher_sees_every_case_of_a_submission_hidden_ones_marked(client, cased):
    placement_id, course_id, teacher, users = cased
    sign_in(client, teacher, teaches=[course_id])
    page = client.get(f"/teach/placements/{placement_id}/students/{users[0]}").get_data(
        as_text=True
    )
    text = text_of(page, spaced=True)
    newest = text[: text.index("#1 ·")]  # the newest submission is listed first
    assert "the example 1 Passed" in newest
    assert "equal scores hidden 2 Failed" in newest
    # what the student does not see of a hidden case, the teacher does
    hidden = newest[newest.index("equal scores hidden : Failed") :]
    assert "A hidden case: its student sees its name and verdict only" in hidden
    assert "(“Hidden case 'equal scores' failed.”)" in hidden
    assert "equal scores went wrong" in hidden
    assert "Input input of equal scores Expected expected of equal scores" in hidden
    assert "Got got of equal scores" in hidden and "stderr of equal scores" in hidden
    shown = newest[newest.index("a row: Passed") :]
    assert "Input input of a row Expected expected of a row Got got of a row" in shown
    older = text[text.index("#1 ·") :]
    assert "a row: Failed" in older
    assert "First difference Line 2: expected 0.5 , got 0.4" in older


def test_a_submission_without_cases_lists_none(client, store):
    placement_id, course_id, teacher, (a,) = course_of(store, PLAIN, 0)
    graded(store, placement_id, a, {"the example": F})  # the implicit one case
    sign_in(client, teacher, teaches=[course_id])
    page = client.get(f"/teach/placements/{placement_id}/students/{a}").get_data(as_text=True)
    assert 'class="case-list"' not in page and "feedback" in page


@pytest.mark.parametrize("who", ["student", "teacher-of-another-course"])
def test_students_and_other_teachers_see_no_case(client, store, cased, who):
    placement_id, _, _, users = cased
    if who == "student":
        sign_in(client, users[0], [placement_id])
    else:
        _, other_course, other_teacher, _ = course_of(store, CASED, 0)
        sign_in(client, other_teacher, teaches=[other_course])
    for url in (
        f"/teach/placements/{placement_id}",
        f"/teach/placements/{placement_id}/students/{users[0]}",
    ):
        answer = client.get(url)
        assert answer.status_code == 403, url
        assert "expected of equal scores" not in answer.get_data(as_text=True)
        assert "Counted over" not in answer.get_data(as_text=True)
