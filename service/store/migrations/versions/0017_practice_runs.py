"""A student's practice runs (the Run button), in a table of their own: no submission, so no
query of submissions (attempts, best score, gradebook, CSV, tallies, regrades) can count one.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | Sequence[str] | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_INDEXES = (("user_id", "created_at"), ("status", "enqueued_at"), ("created_at",))


def upgrade() -> None:
    """Create practice_runs (none to begin with)."""
    op.create_table(
        "practice_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("placement_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("stdin", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("enqueued_at", sa.DateTime(), nullable=True),
        sa.Column("lease_token", sa.String(length=32), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(), nullable=True),
        sa.Column("claims", sa.Integer(), nullable=False),
        sa.Column("progress", sa.JSON(), nullable=True),
        sa.Column("replaced", sa.Boolean(), nullable=False),
        sa.Column("run_status", sa.String(length=16), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=True),
        sa.Column("message", sa.JSON(), nullable=True),
        sa.Column("cases", sa.JSON(), nullable=True),
        sa.Column("on_input", sa.JSON(), nullable=True),
        sa.Column("grader_error", sa.Text(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["placement_id"],
            ["placements.id"],
            name=op.f("fk_practice_runs_placement_id_placements"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_practice_runs_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_practice_runs")),
    )
    for columns in _INDEXES:
        name = op.f(f"ix_practice_runs_{'_'.join(columns)}")
        op.create_index(name, "practice_runs", list(columns), unique=False)


def downgrade() -> None:
    """Drop it again (practice runs are worth nothing once done: nothing is lost)."""
    for columns in _INDEXES:
        op.drop_index(op.f(f"ix_practice_runs_{'_'.join(columns)}"), table_name="practice_runs")
    op.drop_table("practice_runs")
