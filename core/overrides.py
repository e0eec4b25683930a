"""A teacher's override of a lesson's score, or of its exercise's part, with a comment.

Pure: the store keeps every change (service.store.overrides), this decides what they make
of a score. An override stands until the teacher removes it: a later automatic result never
replaces it, it only shows (`Scored.newer`) so that the teacher chooses.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from core.lesson_scores import LessonScore, lesson_score

MAX_COMMENT = 1000  # characters: a sentence or a short paragraph, as the LMS shows it
_SAME = 1e-6  # scores are rounded to 6 places (core.lesson_scores): closer is the same


class Part(enum.StrEnum):
    """What an override sets: the whole lesson's score, or the exercise's part of it."""

    LESSON = "lesson"
    EXERCISE = "exercise"  # the questions count as answered


class Change(enum.StrEnum):
    """A manual change of a score, as the history keeps it (`score_overrides.change`)."""

    SET = "set"
    KEPT = "kept"  # kept over a newer automatic result
    REMOVED = "removed"  # back to the automatic score


@dataclass(frozen=True)
class Override:
    """The override that stands: its part, its points, its comment, and what it replaced."""

    part: Part
    given: float
    comment: str
    automatic: float  # the part's automatic points when the teacher set or last kept it


@dataclass(frozen=True)
class Scored:
    """A lesson's score: the automatic one, its exercise's part, and the override, if any."""

    automatic: LessonScore
    questions: float  # the questions' points, as answered
    exercise: float | None  # the exercise's automatic points; None: the lesson has none
    exercise_maximum: float
    override: Override | None = None

    @property
    def score(self) -> LessonScore:
        """Return the score that counts: the override's while one stands, else the automatic."""
        found = self.override
        if found is None:
            return self.automatic
        if found.part is Part.LESSON:
            return LessonScore(given=found.given, maximum=self.automatic.maximum)
        return LessonScore(round(self.questions + found.given, 6), self.automatic.maximum)

    def part(self, part: Part) -> float:
        """Return the part's automatic points now."""
        return self.automatic.given if part is Part.LESSON else self.exercise or 0.0

    def maximum(self, part: Part) -> float:
        """Return the most points the part can be given."""
        return self.automatic.maximum if part is Part.LESSON else self.exercise_maximum

    @property
    def newer(self) -> bool:
        """Return whether the automatic result changed since the override was set or kept."""
        found = self.override
        return found is not None and abs(self.part(found.part) - found.automatic) > _SAME


def scored(
    question_points: Iterable[tuple[float, float]],
    exercise_points: float | None,
    exercise_fraction: float | None,
    override: Override | None = None,
) -> Scored:
    """Add up a lesson's score (as lesson_score does) and put the override beside it.

    `exercise_points` None: the lesson has no exercise.
    """
    pairs = list(question_points)
    automatic = lesson_score(pairs, exercise_points or 0.0, exercise_fraction)
    questions = round(sum(got for got, _ in pairs), 6)
    exercise = (
        None if exercise_points is None else round(exercise_points * (exercise_fraction or 0.0), 6)
    )
    return Scored(automatic, questions, exercise, exercise_points or 0.0, override)
