"""What a teacher does with a placement: regrade it (the gradebook comes with the LTI work)."""

from __future__ import annotations

from celery import Celery

from service.queue import GRADE_SUBMISSION, REGRADE_QUEUE, enqueue
from service.store import submissions
from service.store.database import Store
from service.store.models import utcnow


def regrade(store: Store, celery_app: Celery, placement_id: int) -> int:
    """Queue every graded submission of the placement on the bulk queue; return how many.

    The bulk queue has workers of its own (`codeblanks worker --queues regrade`), so that a
    regrade never delays a student's run; what cannot be sent now, the sweep sends later.
    """
    ids = submissions.request_regrade(store, placement_id, utcnow())
    for submission_id in ids:
        enqueue(celery_app, GRADE_SUBMISSION, [submission_id], queue=REGRADE_QUEUE)
    return len(ids)
