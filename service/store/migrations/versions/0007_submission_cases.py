"""Each submission keeps its cases' verdicts (name, status, weight, hidden, and the detail).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add cases (JSON, null for submissions graded before cases existed) to submissions."""
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("cases", sa.JSON(), nullable=True))


def downgrade() -> None:
    """Drop it again."""
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("cases")
