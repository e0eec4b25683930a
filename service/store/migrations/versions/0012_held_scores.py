"""A placement may hold its scores: graded as usual, sent and shown once released.

`hold_scores` makes its syncs wait as held ones (core.syncs); `release_at`, when set, is
the moment the sweep releases them; `released_at` is when they were released (by the
teacher or the sweep), None while they are held.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# Plain ALTER TABLE, not a batch: SQLite's batch copies the table and drops the old one,
# and dropping placements cascades to every submission, grade and sync (the downgrade lost
# every submission so in tests/service/store/test_verdict_migration.py); SQLite (3.35 on)
# and PostgreSQL both add and drop these columns in place.
_COLUMNS = ("hold_scores", "release_at", "released_at")


def upgrade() -> None:
    """Add the three columns; every placement there is sends its scores as before."""
    op.add_column(
        "placements",
        sa.Column("hold_scores", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.add_column("placements", sa.Column("release_at", sa.DateTime(), nullable=True))
    op.add_column("placements", sa.Column("released_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    """Drop them again, in place."""
    for name in reversed(_COLUMNS):
        op.execute(f"ALTER TABLE placements DROP COLUMN {name}")
