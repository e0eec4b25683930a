import pytest

from core.lesson_scores import lesson_score


@pytest.mark.parametrize(
    ("questions", "exercise_points", "fraction", "penalty", "given", "maximum"),
    [
        ([(1, 1), (1, 1), (1, 1)], 5, 1.0, 0.0, 8, 8),
        ([(1, 1), (0, 1), (0.5, 1)], 5, None, 0.0, 1.5, 8),
        ([], 5, 1.0, 0.0, 5, 5),
        ([(1, 1)], 0, None, 0.0, 1, 1),
        ([(1, 1), (1, 1), (1, 1)], 5, 1.0, 0.25, 6, 8),
        ([(1, 1)], 5, 0.0, 2.0, 0, 6),
        ([], 0, None, 0.0, 0, 0),
    ],
)
def test_lesson_score(questions, exercise_points, fraction, penalty, given, maximum):
    score = lesson_score(questions, exercise_points, fraction, penalty)
    assert score.given == pytest.approx(given)
    assert score.maximum == maximum
    assert 0.0 <= score.fraction <= 1.0
