"""The figures of runs (core.figures): kept with their owner, read as a list or a file.

An owner is a submission or a practice run. A submission's figures are written with its
verdict (submissions.finish, in the verdict's own fenced transaction) and replace what an
earlier verdict of it drew; a practice run's with its result (practice_runs.finish). They go
when their owner goes. Their bytes are read one figure at a time, with what decides who may
see them: the owner's author and the course its placement belongs to.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, bindparam, delete, func, insert, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from core.figures import Figure
from service.store.database import Store
from service.store.models import FigureImage, Placement, PracticeRun, Submission

_LISTED = select(
    FigureImage.submission_id,
    FigureImage.practice_run_id,
    FigureImage.id,
    FigureImage.case_name,
    FigureImage.width,
    FigureImage.height,
    FigureImage.alt,
).order_by(FigureImage.submission_id, FigureImage.practice_run_id, FigureImage.position)
# whose a figure is, through whichever owner it has
_FOUND = (
    select(
        FigureImage.png,
        func.coalesce(Submission.user_id, PracticeRun.user_id).label("user_id"),
        Placement.course_id,
    )
    .select_from(FigureImage)
    .outerjoin(Submission, Submission.id == FigureImage.submission_id)
    .outerjoin(PracticeRun, PracticeRun.id == FigureImage.practice_run_id)
    .join(
        Placement,
        Placement.id == func.coalesce(Submission.placement_id, PracticeRun.placement_id),
    )
    .where(FigureImage.id == bindparam("figure"))
)
Drawn = Sequence[tuple[str | None, Figure]]  # (the case that drew it, or None; the figure)


@dataclass(frozen=True)
class Listed:
    """A kept figure as a verdict lists it: its id (its URL), case, size and text."""

    id: int
    case: str | None
    width: int
    height: int
    alt: str


@dataclass(frozen=True)
class Found:
    """A kept figure's bytes, and whose they are: its author, and its placement's course."""

    png: bytes
    user_id: int
    course_id: int


def keep(connection: Connection, submission_id: int, figures: Drawn, now: datetime) -> None:
    """Make (case name, figure) the submission's figures, in order, in place of any before."""
    _keep(connection, FigureImage.submission_id, submission_id, figures, now)


def keep_for_run(connection: Connection, run_id: int, figures: Drawn, now: datetime) -> None:
    """Make (case name or None, figure) the practice run's figures, in order."""
    _keep(connection, FigureImage.practice_run_id, run_id, figures, now)


def _keep(
    connection: Connection,
    owner: InstrumentedAttribute[int | None],
    owner_id: int,
    figures: Drawn,
    now: datetime,
) -> None:
    connection.execute(delete(FigureImage).where(owner == owner_id))
    if not figures:
        return
    rows = [
        {
            owner.key: owner_id,
            "position": position,
            "case_name": case,
            "width": figure.width,
            "height": figure.height,
            "alt": figure.alt,
            "png": figure.png,
            "created_at": now,
        }
        for position, (case, figure) in enumerate(figures, start=1)
    ]
    connection.execute(insert(FigureImage), rows)


def listed(
    session: Session | Connection, submission_ids: Collection[int]
) -> dict[int, list[Listed]]:
    """Return the figures of each of the submissions, in order, without their bytes (a
    submission that drew none is not a key)."""
    if not submission_ids:
        return {}
    found: dict[int, list[Listed]] = {}
    statement = _LISTED.where(FigureImage.submission_id.in_(sorted(set(submission_ids))))
    for row in session.execute(statement):
        shown = Listed(row.id, row.case_name, row.width, row.height, row.alt)
        found.setdefault(row.submission_id, []).append(shown)
    return found


def run_listed(session: Session | Connection, run_id: int) -> list[Listed]:
    """Return the practice run's figures, in order, without their bytes."""
    statement = _LISTED.where(FigureImage.practice_run_id == run_id)
    return [
        Listed(row.id, row.case_name, row.width, row.height, row.alt)
        for row in session.execute(statement)
    ]


def find(store: Store, figure_id: int) -> Found | None:
    """Return a figure's bytes and whose they are, or None if there is no such figure."""
    with store.reading() as session:
        row = session.execute(_FOUND, {"figure": figure_id}).first()
    return None if row is None else Found(bytes(row.png), row.user_id, row.course_id)
