"""What a teacher does with a placement: regrade it, with or without a review before sending.

`regrade` (the CLI's) queues the gradings and lets their new scores go to the LMS as they
come. `start_regrade` (the teacher's page) keeps each student's score first and holds the
new scores back until `send_regrade`, after the teacher has compared them.
"""

from __future__ import annotations

from datetime import datetime

from celery import Celery

from core.lessons import Catalog
from service.queue import GradeMessage, Queue, SyncMessage, send_grade, send_sync
from service.store import regrades, submissions
from service.store.database import Store
from service.store.models import Placement, utcnow
from service.store.regrades import N_, RegradeProblem


def regrade(store: Store, celery_app: Celery, placement_id: int) -> int:
    """Queue every graded submission of the placement on the bulk queue; return how many.

    The bulk queue has workers of its own (`codeblanks worker --queues regrade`), so that a
    regrade never delays a student's run; what cannot be sent now, the sweep sends later.
    """
    ids = submissions.request_regrade(store, placement_id, utcnow())
    for submission_id in ids:
        send_grade(celery_app, GradeMessage(submission_id, Queue.REGRADE))
    return len(ids)


def start_regrade(
    store: Store,
    catalog: Catalog,
    celery_app: Celery,
    placement: Placement,
    teacher_id: int,
    now: datetime,
) -> int:
    """Keep the scores, queue the placement's graded submissions for review; return how many."""
    lesson = catalog.lesson(placement.lesson_id)
    if lesson is None or lesson.exercise is None:
        raise RegradeProblem(N_("This lesson has no exercise in the catalog to regrade."))
    with store.session() as session:
        ids = regrades.start(session, placement, lesson, teacher_id, now)
    for submission_id in ids:
        send_grade(celery_app, GradeMessage(submission_id, Queue.REGRADE))
    return len(ids)


def send_regrade(store: Store, celery_app: Celery, placement_id: int, now: datetime) -> int:
    """Release a finished regrade's held scores to the LMS; return how many students'."""
    with store.session() as session:
        users = regrades.send(session, placement_id, now)
    for user_id in users:
        send_sync(celery_app, SyncMessage(user_id, placement_id))
    return len(users)
