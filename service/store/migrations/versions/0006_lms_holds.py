"""What the LMS holds: the last accepted score of each grade and its timestamp, and a turn.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add lms_given, lms_maximum, lms_at and posting_until to grades."""
    with op.batch_alter_table("grades") as batch:
        batch.add_column(sa.Column("lms_given", sa.Float(), nullable=True))
        batch.add_column(sa.Column("lms_maximum", sa.Float(), nullable=True))
        batch.add_column(sa.Column("lms_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("posting_until", sa.DateTime(), nullable=True))


def downgrade() -> None:
    """Drop them again."""
    with op.batch_alter_table("grades") as batch:
        for name in ("posting_until", "lms_at", "lms_maximum", "lms_given"):
            batch.drop_column(name)
