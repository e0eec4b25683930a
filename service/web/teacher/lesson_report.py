"""A placed lesson, for its teacher: scores as a histogram, the commonest first failing line,
and one student's submissions in full."""

from __future__ import annotations

from dataclasses import dataclass

from core.lessons import Catalog, Lesson
from service.store import memberships, regrades, work
from service.store.database import Store
from service.store.models import Placement, QuestionAnswer, Submission
from service.store.regrades import Change, Progress
from service.store.work import FailingLine
from service.web.teacher import course_gradebook
from service.web.teacher.course_gradebook import Gradebook

BUCKETS = 10  # 0-9%, 10-19%, ..., 90-100%
FAILING_LINES = 3  # the commonest first failing lines shown


@dataclass(frozen=True)
class Bucket:
    """A band of lesson scores and how many students fall in it."""

    label: str
    count: int
    share: float  # of the largest band, for the bar's length


@dataclass(frozen=True)
class Report:
    """What the teacher's page of a placement shows."""

    placement: Placement
    lesson: Lesson | None
    book: Gradebook  # this placement's column only
    histogram: list[Bucket]
    not_started: int
    failing: list[FailingLine]
    regrade: Progress | None  # the newest regrade
    changes: list[Change]  # its old and new scores, while it waits to be sent


@dataclass(frozen=True)
class StudentWork:
    """One student's submissions and answers on a placement, newest submission first."""

    placement: Placement
    lesson: Lesson | None
    name: str
    submissions: list[Submission]
    answers: list[QuestionAnswer]


def report(store: Store, catalog: Catalog, placement: Placement) -> Report:
    """Return the placement's report: scores, common failures, and its regrade's state."""
    book = course_gradebook.build(store, catalog, placement.course_id, [placement.id])
    scores = [row.cells[0].score for row in book.rows if row.cells and row.cells[0].score]
    with store.reading() as session:
        failing = work.failing_lines(session, placement.id, FAILING_LINES)
        newest = regrades.latest(session, placement.id)
        progress = regrades.progress(session, newest) if newest else None
        lesson = catalog.lesson(placement.lesson_id)
        changes = (
            regrades.changes(session, newest, placement, lesson)
            if newest is not None and newest.sent_at is None and lesson is not None
            else []
        )
    return Report(
        placement=placement,
        lesson=lesson,
        book=book,
        histogram=histogram([s.fraction for s in scores]),
        not_started=len(book.rows) - len(scores),
        failing=failing,
        regrade=progress,
        changes=changes,
    )


def regrade_progress(store: Store, placement_id: int) -> Progress | None:
    """Return the progress of the placement's newest regrade, if it ever had one."""
    with store.reading() as session:
        newest = regrades.latest(session, placement_id)
        return regrades.progress(session, newest) if newest else None


def histogram(fractions: list[float]) -> list[Bucket]:
    """Count scores (fractions of the maximum) into ten bands; the last one holds 100%."""
    counts = [0] * BUCKETS
    for fraction in fractions:
        counts[min(int(max(fraction, 0.0) * BUCKETS), BUCKETS - 1)] += 1
    largest = max(counts) or 1
    labels = [f"{10 * i}–{10 * i + 9}%" for i in range(BUCKETS - 1)] + ["90–100%"]
    return [
        Bucket(label, count, count / largest) for label, count in zip(labels, counts, strict=True)
    ]


def student_work(
    store: Store, catalog: Catalog, placement: Placement, user_id: int
) -> StudentWork | None:
    """Return a course member's work on the placement, or None if they are not in the course."""
    with store.reading() as session:
        user = memberships.user(session, user_id)
        member = memberships.is_member(session, placement.course_id, user_id)
        done = work.submissions(session, placement.id, user_id)
        if user is None or (not member and not done):
            return None
        answers = work.answers(session, placement.id, user_id)
    lesson = catalog.lesson(placement.lesson_id)
    return StudentWork(placement, lesson, user.name or user.sub, done, answers)
