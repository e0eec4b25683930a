"""A platform's latest registration self-test, and what its registration and launches
claimed (product family, scopes): one row per platform.

A table of its own, so that `platforms`, which others reference, is not altered (SQLite would
copy it in a batch, see 0012); the row goes with its platform (ON DELETE CASCADE).

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | Sequence[str] | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create platform_checks (empty: no platform was tested before this)."""
    op.create_table(
        "platform_checks",
        sa.Column("platform_id", sa.Integer(), nullable=False),
        sa.Column("product_family", sa.String(length=64), nullable=True),
        sa.Column("registered_scopes", sa.String(length=2000), nullable=True),
        sa.Column("launch_scopes", sa.String(length=2000), nullable=True),
        sa.Column("checked_at", sa.DateTime(), nullable=True),
        sa.Column("grades_ok", sa.Boolean(), nullable=True),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("asked_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["platform_id"],
            ["platforms.id"],
            name=op.f("fk_platform_checks_platform_id_platforms"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("platform_id", name=op.f("pk_platform_checks")),
    )


def downgrade() -> None:
    """Drop it again."""
    op.drop_table("platform_checks")
