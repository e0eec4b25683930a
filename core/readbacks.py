"""What the LMS holds of a pair, read back (AGS results), beside what the tool believes it holds.

The tool believes the LMS holds the last score it accepted (a grade's `lms_given`); a read of
the LMS's results says what it holds now. A teacher who cleared a grade in Moodle, or typed
another, makes them differ: `compare` says how, so the teacher's pages can show it and offer
to send the score again.
"""

from __future__ import annotations

import enum
import math

from core.lesson_scores import LessonScore

# Moodle keeps five decimals and Canvas scales to the assignment's points: a difference a
# two-decimal gradebook does not show is no difference
TOLERANCE = 0.005


class Agreement(enum.StrEnum):
    """How what the LMS holds compares with what the tool believes it holds."""

    UNKNOWN = "unknown"  # not read since the LMS last accepted a score of the pair
    SAME = "same"
    NONE = "none"  # the tool sent a score, and the LMS holds none
    OTHER = "other"  # the LMS holds another score than the tool sent (or one it never sent)

    @property
    def lost(self) -> bool:
        """Return whether the LMS lacks the score the tool sent: the teacher may resend it."""
        return self in (Agreement.NONE, Agreement.OTHER)


def compare(read: bool, sent: LessonScore | None, found: LessonScore | None) -> Agreement:
    """Compare what a read `found` (None: no score) with what the tool `sent` (None: nothing).

    Moodle lists a grade of 0 without a resultScore (`!empty($grade->finalgrade)` in
    gradebookservices::result_for_json), so no score where the tool sent 0 is the same.
    """
    if not read:
        return Agreement.UNKNOWN
    if found is None:
        return Agreement.SAME if sent is None or sent.given == 0 else Agreement.NONE
    if sent is None:
        return Agreement.SAME if found.given == 0 else Agreement.OTHER
    same = math.isclose(on_scale(found, sent.maximum), sent.given, abs_tol=TOLERANCE)
    return Agreement.SAME if same else Agreement.OTHER


def on_scale(found: LessonScore, maximum: float) -> float:
    """Return the LMS's score on the tool's scale of `maximum` points (for "LMS has 5").

    The LMS gives its score on its line item's scale; without a maximum (0), on the tool's.
    """
    if found.maximum <= 0 or maximum <= 0:
        return found.given
    return found.given * maximum / found.maximum
