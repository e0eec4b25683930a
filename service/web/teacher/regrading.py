"""What a teacher does with a placement: regrade it, with or without a review before syncing.

`queue_regrade` (the CLI's) queues the gradings and lets their new scores go to the LMS as they
come. `start_regrade` (the teacher's page) keeps each student's score first and holds the
new scores back until `sync_regrade`, after the teacher has compared them. Each returns the
messages to send once its change is committed (the caller sends them: service.queue.send).
"""

from __future__ import annotations

from datetime import datetime

from core.lessons import Catalog
from core.messages import say
from service.queue import GradeMessage, Queue, SyncMessage
from service.store import regrades, submissions
from service.store.database import Store
from service.store.models import Placement, utcnow
from service.store.regrades import RegradeProblem


def queue_regrade(store: Store, placement_id: int) -> tuple[GradeMessage, ...]:
    """Queue every graded submission of the placement on the bulk queue; return their sends.

    The bulk queue has workers of its own (`codeblanks worker --queues regrade`), so that a
    regrade never delays a student's run; what cannot be sent now, the sweep sends later.
    """
    ids = submissions.request_regrade(store, placement_id, utcnow())
    return tuple(GradeMessage(submission_id, Queue.REGRADE) for submission_id in ids)


def start_regrade(
    store: Store,
    catalog: Catalog,
    placement: Placement,
    teacher_id: int,
    now: datetime,
) -> tuple[GradeMessage, ...]:
    """Keep the scores, queue the placement's graded submissions for review; return the sends."""
    lesson = catalog.lesson(placement.lesson_id)
    if lesson is None or lesson.exercise is None:
        raise RegradeProblem(say("This lesson has no exercise in the catalog to regrade."))
    with store.session() as session:
        ids = regrades.start(session, placement, lesson, teacher_id, now)
    return tuple(GradeMessage(submission_id, Queue.REGRADE) for submission_id in ids)


def sync_regrade(store: Store, placement_id: int, now: datetime) -> tuple[SyncMessage, ...]:
    """Release a finished regrade's held scores to the LMS: a sync for each student's."""
    with store.session() as session:
        users = regrades.release(session, placement_id, now)
    return tuple(SyncMessage(user_id, placement_id) for user_id in users)
