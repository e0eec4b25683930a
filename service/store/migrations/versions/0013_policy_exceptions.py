"""A student may have an exception to a placement's policy: a later due date, more attempts,
the late penalty waived (core.placements.StudentException), with who set it and when.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create policy_exceptions (none to begin with: every student has the placement's)."""
    op.create_table(
        "policy_exceptions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("placement_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("due_at", sa.DateTime(), nullable=True),
        sa.Column("max_attempts", sa.Integer(), nullable=True),
        sa.Column("waive_penalty", sa.Boolean(), nullable=False),
        sa.Column("set_by", sa.Integer(), nullable=True),
        sa.Column("set_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["placement_id"],
            ["placements.id"],
            name=op.f("fk_policy_exceptions_placement_id_placements"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_policy_exceptions_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["set_by"],
            ["users.id"],
            name=op.f("fk_policy_exceptions_set_by_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_policy_exceptions")),
        sa.UniqueConstraint(
            "placement_id", "user_id", name=op.f("uq_policy_exceptions_placement_id_user_id")
        ),
    )


def downgrade() -> None:
    """Drop policy_exceptions (every student has the placement's policy again)."""
    op.drop_table("policy_exceptions")
