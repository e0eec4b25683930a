"""Grade arithmetic: a lesson's score is points earned over points available."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class LessonScore:
    """A lesson's score, as sent to the LMS (scoreGiven / scoreMaximum)."""

    given: float
    maximum: float

    @property
    def fraction(self) -> float:
        """Return the score as a share of the maximum, in [0, 1]."""
        return self.given / self.maximum if self.maximum else 0.0


def lesson_score(
    question_points: Iterable[tuple[float, float]],
    exercise_points: float,
    exercise_fraction: float | None,
    late_penalty: float = 0.0,
) -> LessonScore:
    """Add up earned and possible points; the exercise counts its best fraction.

    `question_points` holds (earned, possible) per question, unanswered ones as (0, possible).
    `late_penalty` is the share (0..1) taken off the whole score.
    """
    earned = possible = 0.0
    for got, out_of in question_points:
        earned += got
        possible += out_of
    possible += exercise_points
    earned += exercise_points * (exercise_fraction or 0.0)
    earned *= 1.0 - min(max(late_penalty, 0.0), 1.0)
    return LessonScore(given=round(earned, 6), maximum=possible)
