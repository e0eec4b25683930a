"""Each submission keeps its feedback to be translated, beside the English (core.messages).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add feedback_message (JSON, null for submissions graded before: shown in English)."""
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("feedback_message", sa.JSON(), nullable=True))


def downgrade() -> None:
    """Drop it again."""
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("feedback_message")
