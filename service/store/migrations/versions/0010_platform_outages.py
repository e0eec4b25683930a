"""A platform that is away is kept while it lasts, so that its grades wait for it together.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create platform_outages (none to begin with: every platform is taken to answer)."""
    op.create_table(
        "platform_outages",
        sa.Column("platform_id", sa.Integer(), nullable=False),
        sa.Column("since", sa.DateTime(), nullable=False),
        sa.Column("probes", sa.Integer(), nullable=False),
        sa.Column("probe_at", sa.DateTime(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("placement_id", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["platform_id"],
            ["platforms.id"],
            name=op.f("fk_platform_outages_platform_id_platforms"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_platform_outages_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["placement_id"],
            ["placements.id"],
            name=op.f("fk_platform_outages_placement_id_placements"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("platform_id", name=op.f("pk_platform_outages")),
    )


def downgrade() -> None:
    """Drop it again."""
    op.drop_table("platform_outages")
