"""A student's LMS language is kept, so that a worker words their scores' comments in it.

Revision ID: 0016
Revises: 0011
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add users.locale (none known yet: English until the next launch says otherwise)."""
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("locale", sa.String(length=35), nullable=True))


def downgrade() -> None:
    """Drop users.locale."""
    with op.batch_alter_table("users") as batch:
        batch.drop_column("locale")
