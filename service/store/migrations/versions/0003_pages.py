"""The pages: students' drafts, and teachers' bulk regrades with the scores before them.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the drafts, regrades and regrade_scores tables."""
    op.create_table(
        "drafts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("placement_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["placement_id"],
            ["placements.id"],
            name=op.f("fk_drafts_placement_id_placements"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_drafts_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_drafts")),
        sa.UniqueConstraint("placement_id", "user_id", name=op.f("uq_drafts_placement_id_user_id")),
    )
    op.create_table(
        "regrades",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("placement_id", sa.Integer(), nullable=False),
        sa.Column("started_by", sa.Integer(), nullable=True),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("submission_ids", sa.JSON(), nullable=False),
        sa.Column("sent_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["placement_id"],
            ["placements.id"],
            name=op.f("fk_regrades_placement_id_placements"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["started_by"],
            ["users.id"],
            name=op.f("fk_regrades_started_by_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_regrades")),
    )
    op.create_index(
        op.f("ix_regrades_placement_id_sent_at"), "regrades", ["placement_id", "sent_at"]
    )
    op.create_table(
        "regrade_scores",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("regrade_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("old_given", sa.Float(), nullable=False),
        sa.Column("old_maximum", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["regrade_id"],
            ["regrades.id"],
            name=op.f("fk_regrade_scores_regrade_id_regrades"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_regrade_scores_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_regrade_scores")),
        sa.UniqueConstraint(
            "regrade_id", "user_id", name=op.f("uq_regrade_scores_regrade_id_user_id")
        ),
    )


def downgrade() -> None:
    """Drop the three tables."""
    op.drop_table("regrade_scores")
    op.drop_index(op.f("ix_regrades_placement_id_sent_at"), table_name="regrades")
    op.drop_table("regrades")
    op.drop_table("drafts")
