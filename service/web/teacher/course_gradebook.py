"""A course's gradebook: its roster by its placed lessons, as a page and as CSV.

The roster comes from the LMS (NRPS), read in the background (service.lti.roster): a
teacher's page asks for a read when the roster is stale and shows the students known so
far (everyone who launched, and the last roster read), with a note saying why the roster
may be incomplete.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, replace
from datetime import datetime

from celery import Celery
from flask_babel import gettext as _

from core.lesson_scores import LessonScore
from core.lessons import Catalog
from core.messages import N_
from core.overrides import Scored
from core.placements import StudentException
from service.lti.results import ask_for_reads
from service.lti.roster import ask_for_read
from service.queue import SyncMessage
from service.store import (
    courses,
    gradebook,
    grades,
    memberships,
    override_rows,
    placement_rows,
    platform_checks,
    policy_exceptions,
    result_reads,
    roster_reads,
)
from service.store.database import Store
from service.store.gradebook import SyncState, Work
from service.store.models import User
from service.store.result_reads import ResultsState
from service.web.rendering import points

NO_ROSTER = N_(
    "The LMS offers no roster for this course, so only students who have opened a lesson "
    "are listed."
)
READING = N_("The roster is being refreshed from the LMS; reload in a moment.")
OVERRIDE = "override"  # a CSV cell's mark of a score the teacher set
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# a spreadsheet that splits on another separator (";" in Turkish or German Excel, a tab, a
# pipe) starts a new cell after it: a formula may begin there too
_AFTER_SEPARATOR = re.compile(r"([,;\t|\r\n][ \t]*)(?=[=+\-@])")


@dataclass(frozen=True)
class Column:
    """A placed lesson of the course."""

    placement_id: int
    title: str
    points: float
    held: bool = False  # its scores wait for a release
    release_at: datetime | None = None  # the sweep releases them then
    results: ResultsState | None = None  # the reads of what its line item holds in the LMS


@dataclass(frozen=True)
class Cell:
    """One student's standing on one placed lesson."""

    score: LessonScore | None  # None: nothing done yet
    attempts: int
    last_at: datetime | None
    sync: SyncState | None  # None: nothing was ever sent for this pair
    exception: StudentException | None = None  # the student's, on this placement
    scored: Scored | None = None  # the automatic score and the override, once there is work

    @property
    def overridden(self) -> bool:
        """Return whether the teacher's override stands on this score."""
        return self.scored is not None and self.scored.override is not None


@dataclass(frozen=True)
class Row:
    """A student and their cells, in the columns' order."""

    user_id: int
    name: str
    email: str
    active: bool
    cells: list[Cell]


@dataclass(frozen=True)
class Gradebook:
    """The course's students by its placed lessons."""

    course_id: int
    title: str
    columns: list[Column]
    rows: list[Row]
    roster_note: str | None = None  # why the roster may be incomplete or stale

    @property
    def to_resend(self) -> int:
        """Return how many cells' scores the teacher may resend: failed, or lost by the LMS."""
        return sum(1 for r in self.rows for c in r.cells if c.sync and c.sync.resendable)

    @property
    def reading(self) -> bool:
        """Return whether a read of the LMS's results is under way for a column."""
        return any(c.results is not None and c.results.pending for c in self.columns)


def for_teacher(
    store: Store, catalog: Catalog, celery_app: Celery, course_id: int, now: datetime
) -> Gradebook:
    """Return the gradebook with what to know of its roster (asking for a read if stale),
    and asking for its line items' results to be read where they are stale."""
    note = roster_note(store, celery_app, course_id, now)
    with store.reading() as session:
        ids = placement_rows.ids_in_course(session, course_id)
    ask_for_results(store, celery_app, ids, now)
    return replace(build(store, catalog, course_id), roster_note=note)


def ask_for_results(
    store: Store, celery_app: Celery, placement_ids: list[int], now: datetime
) -> None:
    """Ask for the placements' results to be read from the LMS where the last read is stale.

    The page never waits on the LMS: it shows the last read, and follows the new one.
    """
    ask_for_reads(store, celery_app, placement_ids, now)


def reading(store: Store, course_id: int) -> list[int]:
    """Return the course's placements whose results read is under way."""
    with store.reading() as session:
        ids = placement_rows.ids_in_course(session, course_id)
        states = result_reads.states(session, ids)
    return sorted(pid for pid, state in states.items() if state.offered and state.pending)


def grades_note(store: Store, course_id: int) -> str | None:
    """Return a warning when the course's LMS cannot take grades, before a student hands in:
    its launches carried no grade service, or its platform's latest self-test found a trap
    that blocks grades (service.lti.self_test)."""
    found = platform_checks.course_blocked(store, course_id)
    if found is None:
        return None
    no_ags, blocked = found
    if no_ags:
        return str(
            _(
                "This course's LMS cannot take grades: its launches carry no grade service. "
                "Scores stay in this tool until the LMS's admin allows the tool to send grades."
            )
        )
    if blocked:
        return str(
            _(
                "This course's LMS cannot take grades now: the tool's self-test found a problem "
                "that blocks them. Ask the tool's admin to look at its self-test (admin page, "
                "Platforms)."
            )
        )
    return None


def roster_note(store: Store, celery_app: Celery, course_id: int, now: datetime) -> str | None:
    """Ask for the roster to be read if it is stale; return what the teacher should know of it.

    The page never waits on the LMS: it shows what is stored, and says so.
    """
    ask_for_read(store, celery_app, course_id, now)
    with store.reading() as session:
        found = roster_reads.state(session, course_id)
    if found is None or not found.offered:
        return str(_(NO_ROSTER))
    if found.error:
        return str(
            _(
                "The roster could not be refreshed (%(error)s); showing the students known so far.",
                error=found.error,
            )
        )
    return str(_(READING)) if found.pending else None


def build(
    store: Store, catalog: Catalog, course_id: int, placement_ids: list[int] | None = None
) -> Gradebook:
    """Return the course's gradebook (or only some of its placements' columns)."""
    with store.reading() as session:
        course = courses.get(session, course_id)
        placements = placement_rows.of_course(session, course_id, placement_ids)
        ids = [p.id for p in placements]
        work = gradebook.work(session, ids)
        syncs = gradebook.syncs(session, ids)
        exceptions = policy_exceptions.of_placements(session, ids)
        standing = override_rows.standing_on(session, ids)
        results = result_reads.states(session, ids)
        members: list[tuple[User, bool]] = memberships.students(session, course_id)
        known = {user.id for user, _ in members}
        # work by someone the roster does not list (yet): show it rather than hide it
        strays = {user_id for _, user_id in work} - known
        if strays:
            members += [(user, True) for user in memberships.users(session, strays)]
    columns, lessons = [], []
    for placement in placements:
        lesson = catalog.lesson(placement.lesson_id)
        lessons.append(lesson)
        title = placement.title or (lesson.title if lesson else placement.lesson_id)
        points_of = lesson.points if lesson else 0.0
        columns.append(
            Column(
                placement.id,
                title,
                points_of,
                placement.holds_scores,
                placement.release_at,
                results.get(placement.id),
            )
        )
    rows = []
    for user, active in members:
        cells = []
        for placement, lesson in zip(placements, lessons, strict=True):
            pair = (placement.id, user.id)
            done, override = work.get(pair), standing.get(pair)
            # an override stands on a student who did nothing yet too (work on paper)
            scored = (
                gradebook.score_of(lesson, done or Work(), override)
                if lesson is not None and (done or override)
                else None
            )
            cells.append(
                Cell(
                    score=scored.score if scored else None,
                    attempts=done.attempts if done else 0,
                    last_at=done.last_at if done else None,
                    sync=syncs.get(pair),
                    exception=exceptions.get(pair),
                    scored=scored,
                )
            )
        rows.append(Row(user.id, user.name or user.sub, user.email, active, cells))
    rows.sort(key=lambda row: (row.name.casefold(), row.user_id))
    title = (course.title if course else "") or _("Course")
    return Gradebook(course_id, title, columns, rows)


def resend(
    store: Store, course_id: int, placement_id: int | None, user_id: int | None, now: datetime
) -> tuple[SyncMessage, ...]:
    """Send again the course's failed scores and those the LMS lost (one lesson's, one
    student's, or all).

    Return their syncs, to send once committed; placements of other courses are left alone.
    """
    with store.session() as session:
        ids = placement_rows.ids_in_course(session, course_id, placement_id)
        pairs = grades.resend(session, ids, user_id, now) if ids else []
    return tuple(SyncMessage(user, placement) for user, placement in pairs)


def as_csv(book: Gradebook) -> str:
    """Return the gradebook as CSV: a row per student, a score column per placed lesson.

    The header is in the viewer's language; the cells stay machine-readable whatever it is
    (scores with a decimal point, sync states as their stored names, "override" where the
    teacher's score stands), the columns' order too.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    header = [_("Student"), _("Email")]
    for column in book.columns:
        header += [
            _("%(lesson)s (out of %(points)s)", lesson=column.title, points=points(column.points)),
            _("%(lesson)s: LMS", lesson=column.title),
        ]
    # after every other column, so that each keeps its place in a sheet made before overrides
    header += [_("%(lesson)s: override", lesson=column.title) for column in book.columns]
    writer.writerow([_cell(value) for value in header])
    for row in book.rows:
        values = [row.name, row.email]
        for cell in row.cells:
            values.append(_plain(cell.score.given) if cell.score else "")
            values.append(cell.sync.status if cell.sync else "")
        values += [OVERRIDE if cell.overridden else "" for cell in row.cells]
        writer.writerow([_cell(value) for value in values])
    return out.getvalue()


def _plain(value: float) -> str:
    """Return a score as a spreadsheet reads it in any language: "7.5", "10", "0.33"."""
    return f"{round(value, 2):g}"


def _cell(value: str) -> str:
    """Return a cell that no spreadsheet runs as a formula, whatever separator it splits on."""
    # a leading apostrophe makes the rest text, and spreadsheets do not show it
    neutral = _AFTER_SEPARATOR.sub(r"\1'", value)
    return "'" + neutral if neutral.startswith(_FORMULA_STARTS) else neutral
