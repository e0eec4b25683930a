"""The figures a run drew (core.figures): re-encoded PNGs, each owned by a submission or by a
practice run (0017), one of the two.

A table of its own, so that no table that others reference is altered (SQLite would copy it
in a batch, see 0012): a submission's figures go with it, and a practice run's with it
(ON DELETE CASCADE).

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | Sequence[str] | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create figures (none to begin with: no run drew before this)."""
    op.create_table(
        "figures",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=True),
        sa.Column("practice_run_id", sa.Integer(), nullable=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("case_name", sa.String(length=80), nullable=True),
        sa.Column("width", sa.Integer(), nullable=False),
        sa.Column("height", sa.Integer(), nullable=False),
        sa.Column("alt", sa.String(length=300), nullable=False),
        sa.Column("png", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_figures_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["practice_run_id"],
            ["practice_runs.id"],
            name=op.f("fk_figures_practice_run_id_practice_runs"),
            ondelete="CASCADE",
        ),
        sa.CheckConstraint(
            "(submission_id IS NULL) != (practice_run_id IS NULL)",
            name=op.f("ck_figures_one_owner"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_figures")),
        sa.UniqueConstraint(
            "submission_id", "position", name=op.f("uq_figures_submission_id_position")
        ),
        sa.UniqueConstraint(
            "practice_run_id", "position", name=op.f("uq_figures_practice_run_id_position")
        ),
    )


def downgrade() -> None:
    """Drop it again."""
    op.drop_table("figures")
