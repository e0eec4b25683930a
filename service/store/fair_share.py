"""Whether another student's work waits for the sandbox: what makes a long grading, or a long
practice run, let it go first (core.verdicts.Turn; the turns themselves are explained in
service/store/leased_work.py).

On the students' queue that work is a submission or a practice run whose message is sent and
not taken; on the bulk regrade queue, a submission (no practice run goes there). The student's
own work is never "another's": their endless loops do not make their own work yield.
"""

from __future__ import annotations

from sqlalchemy import bindparam, exists, or_, select

from service.queue import Queue
from service.store.database import Store
from service.store.models import PracticeRun, PracticeStatus, Submission, SubmissionStatus

_SUBMISSION_WAITS = select(Submission.id).where(
    Submission.queue == bindparam("in_queue"),
    Submission.status == SubmissionStatus.QUEUED,
    Submission.enqueued_at.is_not(None),
    Submission.user_id != bindparam("user"),
)
_PRACTICE_WAITS = select(PracticeRun.id).where(
    PracticeRun.status == PracticeStatus.QUEUED,
    PracticeRun.enqueued_at.is_not(None),
    PracticeRun.user_id != bindparam("user"),
)
_IN_QUEUE = select(exists(_SUBMISSION_WAITS))
_IN_GRADE_QUEUE = select(or_(exists(_SUBMISSION_WAITS), exists(_PRACTICE_WAITS)))


def others_wait(store: Store, user_id: int, queue: str) -> bool:
    """Return whether another student's work waits in the queue (sent, not yet taken)."""
    statement = _IN_GRADE_QUEUE if queue == Queue.GRADE else _IN_QUEUE
    with store.reading() as session:
        return bool(session.scalar(statement, {"in_queue": queue, "user": user_id}))
