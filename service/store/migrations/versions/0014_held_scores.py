"""A placement may hold its scores: graded as usual, sent and shown once released.

`hold_scores` makes its syncs wait as held ones (core.syncs); `release_at`, when set, is
the moment the sweep releases them; `released_at` is when they were released (by the
teacher or the sweep), None while they are held.

Revision ID: 0014
Revises: 0011
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the three columns; every placement there is sends its scores as before."""
    with op.batch_alter_table("placements") as batch:
        batch.add_column(
            sa.Column("hold_scores", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("release_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("released_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    """Drop them again."""
    with op.batch_alter_table("placements") as batch:
        batch.drop_column("released_at")
        batch.drop_column("release_at")
        batch.drop_column("hold_scores")
