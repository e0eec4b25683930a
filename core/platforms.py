"""What the grader asks of a platform (a registered LMS): to take a lesson's score.

The LTI Assignment and Grade Services poster implements GradePoster; tests use a fake.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from core.errors import GraderError
from core.lesson_scores import LessonScore


@dataclass(frozen=True)
class ScorePost:
    """One score for one user on one placement's line item."""

    platform_id: int
    line_item_url: str  # empty when the launch gave none: the poster makes one
    user_sub: str
    score: LessonScore
    timestamp: datetime
    activity_progress: str = "Completed"  # Submitted while a run is queued or running
    # always FullyGraded: Moodle blanks the points of any other progress (FINDINGS.md)
    grading_progress: str = "FullyGraded"
    line_items_url: str = ""  # where to make the line item when there is none
    resource_link_id: str = ""
    resource_id: str = ""  # the lesson id
    label: str = ""  # the lesson title
    canvas: bool = False  # add Canvas's submission extension


@dataclass(frozen=True)
class Posted:
    """The platform's answer to a score, and the line item it went to."""

    response: str
    line_item_url: str


class ScoreRefused(GraderError):
    """The LMS refused the score as no newer than the one it holds (HTTP 409 in Moodle)."""


class GradePoster(Protocol):
    """Posts scores to a platform's gradebook. Posting the same score twice is harmless."""

    def post(self, score_post: ScorePost) -> Posted:
        """Post the score; return the platform's answer; raise GraderError when it fails."""
        ...
