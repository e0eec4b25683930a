"""Lessons are tested like code: every solution passes in the sandbox, every starter does not."""

import pytest

from core.lessons import load_catalog
from core.runs import RunStatus
from core.verdicts import grade_source
from tests.conftest import LESSONS

CATALOG = load_catalog(LESSONS)
LESSON_IDS = [lesson.id for lesson in CATALOG]
WITH_CASES = [
    lesson.id for lesson in CATALOG if lesson.exercise is not None and lesson.exercise.has_cases
]
SEED = "expert/what-is-attention"


@pytest.mark.bwrap
@pytest.mark.parametrize("lesson_id", LESSON_IDS)
def test_solution_passes_and_starter_does_not(bwrap, catalog, lesson_id):
    exercise = catalog.lesson(lesson_id).exercise
    solution = grade_source(exercise, exercise.solution[exercise.entrypoint].encode(), bwrap)
    assert solution.status is RunStatus.PASSED, solution.feedback
    assert solution.score == 1.0
    starter = grade_source(exercise, exercise.starter_code.encode(), bwrap)
    assert starter.status is not RunStatus.PASSED
    assert starter.score < 1.0


def test_the_seed_keeps_its_single_output_and_the_rest_of_its_track_has_cases():
    expert = {lesson_id for lesson_id in LESSON_IDS if lesson_id.startswith("expert/")}
    assert SEED in expert
    assert SEED not in WITH_CASES
    assert expert - {SEED} <= set(WITH_CASES)


@pytest.mark.parametrize("lesson_id", WITH_CASES)
def test_an_exercise_with_cases_has_visible_and_hidden_ones_of_both_kinds(catalog, lesson_id):
    cases = catalog.lesson(lesson_id).exercise.cases
    assert any(case.hidden for case in cases), "a hidden case keeps the exercise honest"
    assert any(not case.hidden for case in cases), "the student needs a case to see"
    assert any(case.is_value for case in cases), "the functions are checked on inputs of their own"
    assert any(not case.is_value for case in cases), "the lesson's own script is run"
