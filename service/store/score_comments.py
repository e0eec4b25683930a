"""Why a lesson's score is what it is: what the store keeps of the work the score counts.

The one read behind a score's comment (core.student_views.score_comment), which the LMS
receives with the score (service.store.outbox), and the student's lesson page and the
teacher's student page show beside it: all three read the same sentence.
"""

from __future__ import annotations

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from core.lessons import Lesson
from core.messages import Text
from core.student_views import score_comment
from service.store import grades
from service.store.models import Placement, QuestionAnswer, Submission, SubmissionStatus

# the submission whose score counts, as service.store.grades takes its best: the highest
# score after the late penalty (the latest of equals), built once with bound parameters
_BEST = (
    select(
        Submission.run_status,
        Submission.duration_ms,
        Submission.message,
        Submission.cases,
        Submission.late,
    )
    .where(
        Submission.placement_id == bindparam("placement"),
        Submission.user_id == bindparam("user"),
        Submission.status == SubmissionStatus.GRADED,
    )
    .order_by(func.coalesce(grades.COUNTED, -1.0).desc(), Submission.id.desc())
    .limit(1)
)
_ANSWERS = select(QuestionAnswer.question_id, QuestionAnswer.earned, QuestionAnswer.late).where(
    QuestionAnswer.placement_id == bindparam("placement"),
    QuestionAnswer.user_id == bindparam("user"),
)


def comment(session: Session, placement: Placement, lesson: Lesson, user_id: int) -> Text | None:
    """Return why the user's lesson score is what it is (None: the lesson has nothing to do)."""
    penalty = grades.late_penalty(session, placement.id, user_id)  # theirs: maybe waived
    pair = {"placement": placement.id, "user": user_id}
    answers = {q: (earned, late) for q, earned, late in session.execute(_ANSWERS, pair)}
    best = None
    if lesson.exercise is not None:
        best = session.execute(_BEST, {**pair, "late_factor": 1 - penalty}).first()
    late = any(late for _, late in answers.values()) or bool(best is not None and best.late)
    # a right answer handed in late is right: the late sentence says what it lost
    questions = [
        (answers[q.id][0] if q.id in answers else None, q.points) for q in lesson.questions
    ]
    return score_comment(best, lesson.exercise is not None, questions, penalty if late else 0.0)
