"""Roster reads in the background: when one was asked for, when one succeeded, why one failed.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add roster_requested_at, roster_read_at and roster_error to courses.

    A course whose roster was read before keeps that time: its newest membership's roster_at.
    """
    with op.batch_alter_table("courses") as batch:
        batch.add_column(sa.Column("roster_requested_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("roster_read_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("roster_error", sa.String(length=500), nullable=True))
    op.execute(
        "UPDATE courses SET roster_read_at = (SELECT max(memberships.roster_at) "
        "FROM memberships WHERE memberships.course_id = courses.id)"
    )


def downgrade() -> None:
    """Drop them again."""
    with op.batch_alter_table("courses") as batch:
        for name in ("roster_error", "roster_read_at", "roster_requested_at"):
            batch.drop_column(name)
