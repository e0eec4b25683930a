"""core.overrides: what a teacher's override makes of a lesson's score, and when a newer
automatic result shows."""

import pytest

from core.lesson_scores import LessonScore, lesson_score
from core.overrides import Override, Part, scored

QUESTIONS = [(1.0, 1.0), (0.0, 2.0)]  # 1 of the questions' 3 points


@pytest.mark.parametrize(
    ("exercise", "fraction", "override", "score", "newer"),
    [
        # no override: the automatic score, as lesson_score adds it up
        (5.0, 0.5, None, LessonScore(3.5, 8.0), False),
        (None, None, None, LessonScore(1.0, 3.0), False),
        # the lesson's score set: the teacher's points, the lesson's maximum
        (5.0, 0.5, Override(Part.LESSON, 7.0, "", 3.5), LessonScore(7.0, 8.0), False),
        (None, None, Override(Part.LESSON, 0.0, "", 1.0), LessonScore(0.0, 3.0), False),
        # the exercise's part set: the questions count as answered
        (5.0, 0.5, Override(Part.EXERCISE, 4.0, "", 2.5), LessonScore(5.0, 8.0), False),
        # a newer automatic result: the override still counts, and says so
        (5.0, 1.0, Override(Part.LESSON, 7.0, "", 3.5), LessonScore(7.0, 8.0), True),
        (5.0, 1.0, Override(Part.EXERCISE, 4.0, "", 2.5), LessonScore(5.0, 8.0), True),
        # a question answered since an exercise's override is no newer exercise result
        (5.0, 0.5, Override(Part.EXERCISE, 4.0, "", 2.5), LessonScore(5.0, 8.0), False),
    ],
)
def test_an_override_stands_over_the_automatic_score(exercise, fraction, override, score, newer):
    found = scored(QUESTIONS, exercise, fraction, override)
    assert found.score == score
    assert found.newer is newer
    assert found.automatic == lesson_score(QUESTIONS, exercise or 0.0, fraction)


def test_the_parts_and_their_maxima():
    found = scored(QUESTIONS, 5.0, 0.4, None)
    assert (found.part(Part.LESSON), found.maximum(Part.LESSON)) == (3.0, 8.0)
    assert (found.part(Part.EXERCISE), found.maximum(Part.EXERCISE)) == (2.0, 5.0)
    assert found.questions == 1.0
    assert scored(QUESTIONS, None, None).exercise is None
