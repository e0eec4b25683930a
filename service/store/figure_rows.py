"""The figures of graded runs (core.figures): kept with their owner, read as a list or a file.

A submission's figures are written with its verdict (submissions.finish, in the verdict's
own fenced transaction) and replace what an earlier verdict of it drew; they go when it
goes. Their bytes are read one figure at a time, with what decides who may see them: the
owner's author and the course its placement belongs to.

For a practice run (issue 30's Run), the same table takes a nullable `practice_run_id`:
`keep(connection, figures, now, practice_run_id=...)` and a `run_listed` beside `listed`;
`find` then answers the run's author and course the same way.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, bindparam, delete, insert, select
from sqlalchemy.orm import Session

from core.figures import Figure
from service.store.database import Store
from service.store.models import FigureImage, Placement, Submission

_LISTED = select(
    FigureImage.submission_id,
    FigureImage.id,
    FigureImage.case_name,
    FigureImage.width,
    FigureImage.height,
    FigureImage.alt,
).order_by(FigureImage.submission_id, FigureImage.position)
_FOUND = (
    select(FigureImage.png, Submission.user_id, Placement.course_id)
    .join(Submission, Submission.id == FigureImage.submission_id)
    .join(Placement, Placement.id == Submission.placement_id)
    .where(FigureImage.id == bindparam("figure"))
)


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


def keep(
    connection: Connection,
    submission_id: int,
    figures: Sequence[tuple[str, Figure]],
    now: datetime,
) -> None:
    """Make (case name, figure) the submission's figures, in order, in place of any before."""
    connection.execute(delete(FigureImage).where(FigureImage.submission_id == submission_id))
    if not figures:
        return
    rows = [
        {
            "submission_id": submission_id,
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


def find(store: Store, figure_id: int) -> Found | None:
    """Return a figure's bytes and whose they are, or None if there is no such figure."""
    with store.reading() as session:
        row = session.execute(_FOUND, {"figure": figure_id}).first()
    return None if row is None else Found(bytes(row.png), row.user_id, row.course_id)
