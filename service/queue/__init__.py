"""The queues: their names, the tasks' stable names, the messages, and the one way to send each.

The service never imports task bodies (they live in workers.tasks): it sends by name, with a
named record per message, so that no two callers can disagree on the order of the ids.
Queues: `grade` (students' runs), `regrade` (bulk regrades, served by workers of their own
so that they never delay a student), `sync` (grade posts to the LMS, roster reads, and the
sweep). A grading whose turn is over goes back to its queue `later`: kombu's Redis transport
keeps a list per priority step and pops the first step of every queue a worker serves before
the last, so that it waits behind every fresh message. The Celery app itself is in
service.queue.broker; importing this module is cheap (the store uses its names).
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from celery import Celery

log = logging.getLogger(__name__)

# the priority of a grading sent again after its turn; fresh messages have 0, which kombu's
# Redis transport pops first from every queue (it keeps a list per step: 0, 3, 6, 9)
LATER = 9


class Queue(enum.StrEnum):
    """The Redis lists the workers pop."""

    GRADE = "grade"
    REGRADE = "regrade"
    SYNC = "sync"


class TaskName(enum.StrEnum):
    """The tasks' stable names (workers.tasks registers a body under each)."""

    GRADE_SUBMISSION = "codeblanks.grade_submission"
    SYNC_GRADE = "codeblanks.sync_grade"
    SWEEP = "codeblanks.sweep"
    REFRESH_ROSTER = "codeblanks.refresh_roster"


@dataclass(frozen=True)
class GradeMessage:
    """Grade one stored submission, on the students' queue or the bulk regrade queue."""

    submission_id: int
    queue: Queue = Queue.GRADE


@dataclass(frozen=True)
class SyncMessage:
    """Post one user's lesson score on one placement to the LMS."""

    user_id: int
    placement_id: int


@dataclass(frozen=True)
class RosterMessage:
    """Read one course's roster from the LMS."""

    course_id: int


def send_grade(
    celery_app: Celery, message: GradeMessage, first: bool = False, later: bool = False
) -> bool:
    """Send a submission to be graded; return False (and log) if the broker is away.

    `first`: at the head of its queue, for a submission recovered from a dead worker (it has
    waited longest); over Redis only, elsewhere at the tail like any other. `later`: behind
    every fresh message, for a grading whose turn is over (over Redis; elsewhere at the tail).
    """
    args = [message.submission_id]
    if first:
        return _send(celery_app, TaskName.GRADE_SUBMISSION, args, message.queue, first=True)
    if later:
        return _send(celery_app, TaskName.GRADE_SUBMISSION, args, message.queue, priority=LATER)
    return _send(celery_app, TaskName.GRADE_SUBMISSION, args, message.queue)


def send_sync(celery_app: Celery, message: SyncMessage) -> bool:
    """Send a grade sync; return False (and log) if the broker is away."""
    args = [message.user_id, message.placement_id]  # sync_grade(user_id, placement_id)
    return _send(celery_app, TaskName.SYNC_GRADE, args, Queue.SYNC)


def send_roster_read(celery_app: Celery, message: RosterMessage) -> bool:
    """Send a roster read; return False (and log) if the broker is away."""
    return _send(celery_app, TaskName.REFRESH_ROSTER, [message.course_id], Queue.SYNC)


def send_sweep(celery_app: Celery, expires_s: float) -> bool:
    """Send a sweep that expires after `expires_s` (the next one is on its way by then)."""
    return _send(celery_app, TaskName.SWEEP, [], Queue.SYNC, expires=expires_s)


def _send(
    celery_app: Celery, name: TaskName, args: list[int], queue: Queue, **options: Any
) -> bool:
    from kombu.exceptions import OperationalError

    try:
        celery_app.send_task(name.value, args=args, queue=queue.value, **options)
    except (OperationalError, OSError) as exc:
        # the database holds the work; the sweep enqueues it once the broker is back
        log.warning("could not enqueue %s%r: %s", name.value, args, exc)
        return False
    return True
