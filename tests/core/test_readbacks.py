"""What the LMS holds against what the tool sent: the comparison the teacher's pages show."""

import pytest

from core.lesson_scores import LessonScore
from core.readbacks import Agreement, compare, on_scale

EIGHT = LessonScore(8.0, 8.0)


@pytest.mark.parametrize(
    ("read", "sent", "found", "agreement"),
    [
        (False, EIGHT, None, Agreement.UNKNOWN),  # not read since the LMS took the score
        (True, EIGHT, LessonScore(8.0, 8.0), Agreement.SAME),
        (True, EIGHT, None, Agreement.NONE),  # FINDINGS: cleared in Moodle, tool said "LMS: 8"
        (True, EIGHT, LessonScore(5.0, 8.0), Agreement.OTHER),  # a teacher typed another
        (True, EIGHT, LessonScore(50.0, 50.0), Agreement.SAME),  # Canvas: scaled to 50 points
        (True, LessonScore(3.125, 8.0), LessonScore(3.12500, 8.0), Agreement.SAME),
        (True, LessonScore(3.125, 8.0), LessonScore(3.13, 8.0), Agreement.SAME),  # 2 decimals
        (True, LessonScore(3.125, 8.0), LessonScore(3.2, 8.0), Agreement.OTHER),
        (True, LessonScore(0.0, 8.0), None, Agreement.SAME),  # Moodle lists a 0 without a score
        (True, None, None, Agreement.SAME),
        (True, None, LessonScore(5.0, 8.0), Agreement.OTHER),  # one the tool never sent
        (True, EIGHT, LessonScore(8.0, 0.0), Agreement.SAME),  # no resultMaximum: our scale
    ],
)
def test_what_the_lms_holds_is_compared_on_the_tools_scale(read, sent, found, agreement):
    assert compare(read, sent, found) is agreement
    assert agreement.lost is (agreement in (Agreement.NONE, Agreement.OTHER))


def test_the_lms_score_is_shown_on_the_tools_scale():
    assert on_scale(LessonScore(25.0, 50.0), 8.0) == 4.0
    assert on_scale(LessonScore(5.0, 0.0), 8.0) == 5.0
