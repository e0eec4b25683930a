"""A placed lesson, for its teacher: scores as a histogram, the commonest first failing line
(or with cases, each case's pass rate and the commonest first failing case), and one
student's submissions in full, with their score's override and its history."""

from __future__ import annotations

from dataclasses import dataclass, field

from flask_babel import gettext as _

from core.lessons import Catalog, Lesson
from core.messages import Text
from core.overrides import Scored
from core.runs import RunStatus
from service.store import (
    case_tallies,
    figure_rows,
    grades,
    memberships,
    override_rows,
    policy_exceptions,
    regrades,
    score_comments,
    work,
)
from service.store.case_tallies import CaseTally
from service.store.database import Store
from service.store.models import Placement, QuestionAnswer, Submission, SubmissionStatus
from service.store.override_rows import Entry
from service.store.policy_exceptions import Set
from service.store.regrades import Change, Progress
from service.store.work import FailingLine
from service.web.teacher import course_gradebook
from service.web.teacher.course_gradebook import Gradebook

BUCKETS = 10  # 0-9%, 10-19%, ..., 90-100%
FAILING_LINES = 3  # the commonest first failing lines shown
FIRST_FAILURES = 3  # the commonest first failing cases shown


@dataclass(frozen=True)
class Bucket:
    """A band of lesson scores and how many students fall in it."""

    label: str
    count: int
    share: float  # of the largest band, for the bar's length


@dataclass(frozen=True)
class CaseRow:
    """A case of the exercise, and how many students' latest submissions passed it."""

    name: str
    weight: float
    hidden: bool
    passed: int
    graded: int

    @property
    def rate(self) -> float | None:
        """Return the share of the graded submissions that passed, or None if none ran it."""
        return self.passed / self.graded if self.graded else None


@dataclass(frozen=True)
class FirstFailing:
    """A case that students' latest submissions most often fail first."""

    name: str
    hidden: bool
    students: int
    statuses: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Cases:
    """The exercise's cases over each student's latest graded submission."""

    rows: list[CaseRow]
    first_failing: list[FirstFailing]  # the commonest first
    all_passed: int
    students: int
    unrecorded: int
    capped_at: int | None  # the most students counted, when there were more


@dataclass(frozen=True)
class Report:
    """What the teacher's page of a placement shows."""

    placement: Placement
    lesson: Lesson | None
    book: Gradebook  # this placement's column only
    histogram: list[Bucket]
    not_started: int
    failing: list[FailingLine]
    cases: Cases | None  # only for an exercise with cases
    regrade: Progress | None  # the newest regrade
    changes: list[Change]  # its old and new scores, while it waits to be sent


@dataclass(frozen=True)
class Attempt:
    """A submission on its teacher's page: the stored row, and what its statuses say."""

    submission: Submission
    figures: list[figure_rows.Listed] = field(default_factory=list)  # what its cases drew

    @property
    def graded(self) -> bool:
        """Return whether the submission has its verdict."""
        return self.submission.status == SubmissionStatus.GRADED

    @property
    def passed(self) -> bool:
        """Return whether its verdict is a pass."""
        return self.submission.run_status == RunStatus.PASSED


@dataclass(frozen=True)
class StudentWork:
    """One student's submissions and answers on a placement, newest submission first."""

    placement: Placement
    lesson: Lesson | None
    user_id: int
    name: str
    attempts: list[Attempt]
    answers: list[QuestionAnswer]
    exception: Set | None  # the student's exception to the placement's policy
    scored: Scored | None = None  # None: the lesson is not in the catalog
    comment: Text | None = None  # why: the sentence the student and the LMS read too
    history: list[Entry] = field(default_factory=list)  # the manual changes, newest first

    @property
    def with_cases(self) -> bool:
        """Return whether each submission lists its cases (not the one implicit case)."""
        exercise = self.lesson.exercise if self.lesson else None
        return exercise is None or exercise.has_cases


def report(store: Store, catalog: Catalog, placement: Placement) -> Report:
    """Return the placement's report: scores, common failures, and its regrade's state."""
    book = course_gradebook.build(store, catalog, placement.course_id, [placement.id])
    scores = [row.cells[0].score for row in book.rows if row.cells and row.cells[0].score]
    with store.reading() as session:
        failing = work.failing_lines(session, placement.id, FAILING_LINES)
        newest = regrades.latest(session, placement.id)
        progress = regrades.progress(session, newest) if newest else None
        lesson = catalog.lesson(placement.lesson_id)
        cases = (
            case_report(lesson, case_tallies.tally(session, placement.id, case_names(lesson)))
            if lesson is not None and lesson.exercise is not None and lesson.exercise.has_cases
            else None
        )
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
        cases=cases,
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
    bands = [(10 * i, 10 * i + 9) for i in range(BUCKETS - 1)] + [(90, 100)]
    labels = [_("%(low)d–%(high)d%%", low=low, high=high) for low, high in bands]
    return [
        Bucket(label, count, count / largest) for label, count in zip(labels, counts, strict=True)
    ]


def case_names(lesson: Lesson) -> list[str]:
    """Return the names of the lesson's exercise's cases, in file order."""
    return [case.name for case in lesson.exercise.cases] if lesson.exercise else []


def case_report(lesson: Lesson, counted: CaseTally) -> Cases:
    """Put the exercise's cases (weights, hidden) beside their counts."""
    cases = lesson.exercise.cases if lesson.exercise else ()
    hidden = {case.name: case.hidden for case in cases}
    return Cases(
        rows=[
            CaseRow(case.name, case.weight, case.hidden, count.passed, count.graded)
            for case, count in zip(cases, counted.cases, strict=True)
        ],
        first_failing=[
            FirstFailing(f.name, hidden[f.name], f.students, f.statuses)
            for f in counted.first_failures[:FIRST_FAILURES]
        ],
        all_passed=counted.all_passed,
        students=counted.students,
        unrecorded=counted.unrecorded,
        capped_at=case_tallies.STUDENTS if counted.capped else None,
    )


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
        exception = policy_exceptions.get(session, placement.id, user_id)
        lesson = catalog.lesson(placement.lesson_id)
        scored = comment = None
        if lesson is not None:
            scored = grades.scored(session, placement, lesson, user_id)
            comment = score_comments.comment(session, placement, lesson, user_id)
        history = override_rows.history(session, placement.id, user_id)
        drawn = figure_rows.listed(session, [submission.id for submission in done])
    attempts = [Attempt(submission, drawn.get(submission.id, [])) for submission in done]
    name = user.name or user.sub
    return StudentWork(
        placement, lesson, user_id, name, attempts, answers, exception, scored, comment, history
    )
