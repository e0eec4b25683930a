"""The queues: their names, the tasks' stable names, the messages, and the one way to send each.

The service never imports task bodies (they live in workers.tasks): it sends by name, with a
named record per message, so that no two callers can disagree on the order of the ids.
Queues: `grade` (students' gradings and practice runs), `regrade` (bulk regrades, served by
workers of their own so that they never delay a student), `sync` (grade posts to the LMS,
roster and results reads, and the sweep). A grading whose turn is over goes back to its
queue `later`: kombu's Redis transport keeps a list per priority step and pops the first
step of every queue a worker serves before the last, so that it waits behind every fresh
message. The Celery app itself is in service.queue.broker; importing this module is cheap
(the store uses its names).
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Iterable
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
    READ_RESULTS = "codeblanks.read_results"
    RUN_PRACTICE = "codeblanks.run_practice"
    CHECK_PLATFORM = "codeblanks.check_platform"
    MAKE_LINE_ITEM = "codeblanks.make_line_item"


class Order(enum.StrEnum):
    """Where a grading goes in its queue."""

    FRESH = "fresh"  # at the tail, like any new submission
    FIRST = "first"  # at the head: recovered from a dead worker, it has waited longest
    LATER = "later"  # behind every fresh message: a grading whose turn is over


@dataclass(frozen=True)
class GradeMessage:
    """Grade one stored submission, on the students' queue or the bulk regrade queue."""

    submission_id: int
    queue: Queue = Queue.GRADE
    order: Order = Order.FRESH


@dataclass(frozen=True)
class PracticeMessage:
    """Run one stored practice run, on the students' queue (it shares their workers and their
    fair share: a practice run waits in line, and takes turns, as a submission does)."""

    run_id: int
    order: Order = Order.FRESH


@dataclass(frozen=True)
class SyncMessage:
    """Post one user's lesson score on one placement to the LMS."""

    user_id: int
    placement_id: int


@dataclass(frozen=True)
class RosterMessage:
    """Read one course's roster from the LMS."""

    course_id: int


@dataclass(frozen=True)
class ResultsMessage:
    """Read one placement's results (what its line item holds) from the LMS."""

    placement_id: int


@dataclass(frozen=True)
class LineItemMessage:
    """Make one placement's line item in the LMS (its launch gave none, but the line items
    URL to make one at: a Brightspace link, a Blackboard link deep linked without one)."""

    placement_id: int


@dataclass(frozen=True)
class PlatformCheckMessage:
    """Run a registered platform's self-test (service.lti.self_test) and keep its result."""

    platform_id: int


Message = (
    GradeMessage
    | PracticeMessage
    | SyncMessage
    | RosterMessage
    | ResultsMessage
    | PlatformCheckMessage
    | LineItemMessage
)


def send(celery_app: Celery, messages: Iterable[Message]) -> int:
    """Send what follows a committed change, each message its own way; return how many went.

    After the commit only: a message lost to a broker that is away only delays its work, as
    the database holds it and the sweep sends it again.
    """
    sent = 0
    for message in messages:
        if isinstance(message, GradeMessage):
            sent += send_grade(celery_app, message)
        elif isinstance(message, PracticeMessage):
            sent += send_practice(celery_app, message)
        elif isinstance(message, SyncMessage):
            sent += send_sync(celery_app, message)
        elif isinstance(message, RosterMessage):
            sent += send_roster_read(celery_app, message)
        elif isinstance(message, PlatformCheckMessage):
            sent += send_platform_check(celery_app, message)
        elif isinstance(message, LineItemMessage):
            sent += send_line_item(celery_app, message)
        else:
            sent += send_results_read(celery_app, message)
    return sent


def send_grade(celery_app: Celery, message: GradeMessage) -> bool:
    """Send a submission to be graded, in its order; return False (and log) if the broker is
    away. FIRST and LATER hold over Redis only; elsewhere they go to the tail like any other.
    """
    args = [message.submission_id]
    return _send_in(message.order, celery_app, TaskName.GRADE_SUBMISSION, args, message.queue)


def send_practice(celery_app: Celery, message: PracticeMessage) -> bool:
    """Send a practice run to the students' queue, in its order; return False (and log) if
    the broker is away (the sweep sends it again: service.store.practice_runs.stuck)."""
    return _send_in(message.order, celery_app, TaskName.RUN_PRACTICE, [message.run_id], Queue.GRADE)


def send_sync(celery_app: Celery, message: SyncMessage) -> bool:
    """Send a grade sync; return False (and log) if the broker is away."""
    args = [message.user_id, message.placement_id]  # sync_grade(user_id, placement_id)
    return _send(celery_app, TaskName.SYNC_GRADE, args, Queue.SYNC)


def send_roster_read(celery_app: Celery, message: RosterMessage) -> bool:
    """Send a roster read; return False (and log) if the broker is away."""
    return _send(celery_app, TaskName.REFRESH_ROSTER, [message.course_id], Queue.SYNC)


def send_results_read(celery_app: Celery, message: ResultsMessage) -> bool:
    """Send a results read; return False (and log) if the broker is away."""
    return _send(celery_app, TaskName.READ_RESULTS, [message.placement_id], Queue.SYNC)


def send_platform_check(celery_app: Celery, message: PlatformCheckMessage) -> bool:
    """Send a platform's self-test; return False (and log) if the broker is away."""
    return _send(celery_app, TaskName.CHECK_PLATFORM, [message.platform_id], Queue.SYNC)


def send_line_item(celery_app: Celery, message: LineItemMessage) -> bool:
    """Send the making of a placement's line item; return False (and log) if the broker is
    away (the placement's first grade post makes it then)."""
    return _send(celery_app, TaskName.MAKE_LINE_ITEM, [message.placement_id], Queue.SYNC)


def send_sweep(celery_app: Celery, expires_s: float) -> bool:
    """Send a sweep that expires after `expires_s` (the next one is on its way by then)."""
    return _send(celery_app, TaskName.SWEEP, [], Queue.SYNC, expires=expires_s)


def _send_in(
    order: Order, celery_app: Celery, name: TaskName, args: list[int], queue: Queue
) -> bool:
    """Send a run of the sandbox (a grading, a practice run) in its order."""
    if order is Order.FIRST:
        return _send(celery_app, name, args, queue, first=True)
    if order is Order.LATER:
        return _send(celery_app, name, args, queue, priority=LATER)
    return _send(celery_app, name, args, queue)


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
