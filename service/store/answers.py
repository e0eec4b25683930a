"""Students' answers to questions: the first answer to each counts."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select

from service.store import grades
from service.store.database import Store
from service.store.models import QuestionAnswer


def record(
    store: Store,
    placement_id: int,
    user_id: int,
    question_id: str,
    given: object,
    earned: float,
    possible: float,
    late: bool,
    now: datetime,
) -> bool:
    """Keep the user's first answer to a question, with the grade sync it needs; say whether.

    False, keeping nothing, when the user has answered the question already.
    """
    with store.session() as session:
        earlier = session.scalar(
            select(QuestionAnswer.id).where(
                QuestionAnswer.placement_id == placement_id,
                QuestionAnswer.user_id == user_id,
                QuestionAnswer.question_id == question_id,
            )
        )
        if earlier is not None:
            return False
        session.add(
            QuestionAnswer(
                placement_id=placement_id,
                user_id=user_id,
                question_id=question_id,
                answer=given,
                earned=earned,
                possible=possible,
                late=late,
                created_at=now,
            )
        )
        grades.needs_sync(session, placement_id, user_id, now)
        return True
