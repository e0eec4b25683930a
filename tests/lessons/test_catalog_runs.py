"""Lessons are tested like code: every solution passes in the sandbox, every starter does not."""

import pytest

from core.verdicts import grade_source
from core.runs import RunStatus
from tests.conftest import LESSONS
from core.lessons import load_catalog

LESSON_IDS = [lesson.id for lesson in load_catalog(LESSONS)]
pytestmark = pytest.mark.bwrap


@pytest.mark.parametrize("lesson_id", LESSON_IDS)
def test_solution_passes_and_starter_does_not(bwrap, catalog, lesson_id):
    exercise = catalog.lesson(lesson_id).exercise
    solution = grade_source(exercise, exercise.solution[exercise.entrypoint].encode(), bwrap)
    assert solution.status is RunStatus.PASSED, solution.feedback
    starter = grade_source(exercise, exercise.starter_code.encode(), bwrap)
    assert starter.status is not RunStatus.PASSED
