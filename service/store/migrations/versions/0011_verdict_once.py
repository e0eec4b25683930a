"""A verdict is stored once: its feedback as a text and its cases; the rest is derived.

The English feedback, the output (stdout, stderr, exit_code) and the whole difference
(diff_got) go; the score and the first difference's line and expected text stay as copies
SQL reads (service.store.models.Submission). Old rows keep every value a page shows:
feedback kept in English only becomes that English as a text (core.messages.verbatim), and
a score, output or difference that the row's cases do not give (graded before cases were
kept, or with a hidden first case's output) is kept in a record of its own
(core.student_views.AS_GRADED).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from core.messages import from_json, to_json, verbatim
from core.student_views import AS_GRADED, StudentView, stored_view

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BATCH = 200  # rows read at a time: a row holds every case's output (64 KB each at most)
_DROPPED = ("stdout", "stderr", "exit_code", "feedback", "diff_got")
_OLD = sa.table(
    "submissions",
    sa.column("id", sa.Integer()),
    sa.column("run_status", sa.String()),
    sa.column("duration_ms", sa.Integer()),
    sa.column("score", sa.Float()),
    sa.column("stdout", sa.Text()),
    sa.column("stderr", sa.Text()),
    sa.column("exit_code", sa.Integer()),
    sa.column("feedback", sa.Text()),
    sa.column("message", sa.JSON(none_as_null=True)),
    sa.column("diff_line", sa.Integer()),
    sa.column("diff_expected", sa.Text()),
    sa.column("diff_got", sa.Text()),
    sa.column("cases", sa.JSON(none_as_null=True)),  # no case: NULL (read as JSON null is)
)


class _Row:
    """An old row as core.student_views.StoredVerdict reads it."""

    def __init__(self, row: Any) -> None:
        self.run_status, self.duration_ms = row.run_status, row.duration_ms
        self.message, self.cases = row.message, row.cases


def upgrade() -> None:
    """Move each verdict to its text and cases, then drop the copies no query reads."""
    with op.batch_alter_table("submissions") as batch:
        batch.alter_column("feedback_message", new_column_name="message")
    connection = op.get_bind()
    move = (
        _OLD.update()
        .where(_OLD.c.id == sa.bindparam("row_id"))
        .values(message=sa.bindparam("new_message"), cases=sa.bindparam("new_cases"))
    )
    last = 0
    while True:
        rows = connection.execute(
            sa.select(_OLD)
            .where(_OLD.c.id > last, _OLD.c.feedback.is_not(None))
            .order_by(_OLD.c.id)
            .limit(_BATCH)
        ).all()
        if not rows:
            break
        moved = [
            {"row_id": row.id, "new_message": row.message, "new_cases": row.cases, **changed}
            for row in rows
            if (changed := _moved(row))
        ]
        if moved:  # one statement a batch: a statement a row took 2.5 ms a row on SQLite
            connection.execute(move, moved)
        last = rows[-1].id
    with op.batch_alter_table("submissions") as batch:
        for name in _DROPPED:
            batch.drop_column(name)


def _moved(row: Any) -> dict[str, object]:
    """Return the new message and cases of an old row (as `new_...`), where they change."""
    moved: dict[str, object] = {}
    text = from_json(row.message)
    if text is None or str(text) != row.feedback:
        # kept in English only (before texts were kept), or a text that does not read back
        # as its English: the English is what the page showed, in every language
        moved["new_message"] = to_json(verbatim(row.feedback))
    shown = _shown(row)
    if _values(stored_view(_Row(row))) != shown:
        records = [r for r in row.cases or [] if isinstance(r, Mapping)]
        moved["new_cases"] = [*records, {AS_GRADED: True, **shown}]
    return moved


def _shown(row: Any) -> dict[str, object]:
    """Return what the old reader showed of the row beside its cases."""
    diff = None
    if row.diff_line is not None:
        diff = {"line": row.diff_line, "expected": row.diff_expected, "got": row.diff_got}
    return {
        "score": row.score,
        "stdout": row.stdout,
        "stderr": row.stderr,
        "exit_code": row.exit_code,
        "diff": diff,
    }


def _values(view: StudentView) -> dict[str, object]:
    return {
        "score": view.score,
        "stdout": view.stdout,
        "stderr": view.stderr,
        "exit_code": view.exit_code,
        "diff": view.diff,
    }


def downgrade() -> None:
    """Bring the columns back, filled from the derived values, and the English feedback."""
    with op.batch_alter_table("submissions") as batch:
        batch.alter_column("message", new_column_name="feedback_message")
        batch.add_column(sa.Column("stdout", sa.Text(), nullable=True))
        batch.add_column(sa.Column("stderr", sa.Text(), nullable=True))
        batch.add_column(sa.Column("exit_code", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("feedback", sa.Text(), nullable=True))
        batch.add_column(sa.Column("diff_got", sa.Text(), nullable=True))
    old = sa.table(
        "submissions",
        sa.column("id", sa.Integer()),
        sa.column("run_status", sa.String()),
        sa.column("duration_ms", sa.Integer()),
        sa.column("feedback_message", sa.JSON()),
        sa.column("cases", sa.JSON()),
        sa.column("stdout", sa.Text()),
        sa.column("stderr", sa.Text()),
        sa.column("exit_code", sa.Integer()),
        sa.column("feedback", sa.Text()),
        sa.column("diff_got", sa.Text()),
    )
    connection = op.get_bind()
    read = sa.select(
        old.c.id,
        old.c.run_status,
        old.c.duration_ms,
        old.c.feedback_message.label("message"),
        old.c.cases,
    ).where(old.c.feedback_message.is_not(None))
    for row in connection.execute(read).all():
        view = stored_view(_Row(row))
        connection.execute(
            old.update()
            .where(old.c.id == row.id)
            .values(
                stdout=view.stdout,
                stderr=view.stderr,
                exit_code=view.exit_code,
                feedback=view.feedback,
                diff_got=None if view.diff is None else view.diff.get("got"),
            )
        )
