"""A student's submissions take turns: one of them in the queue at a time, the rest waiting.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Let enqueued_at be null (waiting behind its author's submission in the queue), and keep
    the results of the cases a paused grading has run (progress, JSON)."""
    with op.batch_alter_table("submissions") as batch:
        batch.alter_column("enqueued_at", existing_type=sa.DateTime(), nullable=True)
        batch.add_column(sa.Column("progress", sa.JSON(), nullable=True))


def downgrade() -> None:
    """Send every waiting submission now, and drop progress."""
    op.execute("UPDATE submissions SET enqueued_at = created_at WHERE enqueued_at IS NULL")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("progress")
        batch.alter_column("enqueued_at", existing_type=sa.DateTime(), nullable=False)
