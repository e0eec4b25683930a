"""A teacher's overrides of a score, each change kept (who, what, the comment, when).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | Sequence[str] | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create score_overrides (none to begin with: every score is the automatic one)."""
    op.create_table(
        "score_overrides",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("placement_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("change", sa.String(length=16), nullable=False),
        sa.Column("part", sa.String(length=16), nullable=False),
        sa.Column("given", sa.Float(), nullable=True),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("automatic", sa.Float(), nullable=False),
        sa.Column("set_by", sa.Integer(), nullable=True),
        sa.Column("set_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["placement_id"],
            ["placements.id"],
            name=op.f("fk_score_overrides_placement_id_placements"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_score_overrides_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["set_by"],
            ["users.id"],
            name=op.f("fk_score_overrides_set_by_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_score_overrides")),
    )
    op.create_index(
        op.f("ix_score_overrides_placement_id_user_id_id"),
        "score_overrides",
        ["placement_id", "user_id", "id"],
        unique=False,
    )


def downgrade() -> None:
    """Drop it again."""
    op.drop_index(op.f("ix_score_overrides_placement_id_user_id_id"), table_name="score_overrides")
    op.drop_table("score_overrides")
