import pytest

from core.lesson_scores import LessonScore
from service.store.regrades import Change


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        (LessonScore(3, 8), None, False),  # still regrading
        (LessonScore(3, 8), LessonScore(3, 8), False),
        (LessonScore(3, 8), LessonScore(4.5, 8), True),
        (LessonScore(3, 8), LessonScore(1.5, 8), True),
        (LessonScore(3, 8), LessonScore(3, 12), True),  # the exercise's points changed
    ],
    ids=["running", "same", "up", "down", "same-points-of-a-new-maximum"],
)
def test_a_change_counts_the_maximum_as_well_as_the_points(old, new, changed):
    assert Change(1, "Ali", old, new).changed is changed
