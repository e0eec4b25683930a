"""A student's LMS language is kept, so that a worker words their scores' comments in it.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# In place, not as a batch: a batch copies the table on SQLite, and dropping the old users
# table cascades (foreign_keys is on) to every row that names a user: their submissions,
# answers and grades were gone after a downgrade. SQLite alters a column in place since 3.35.


def upgrade() -> None:
    """Add users.locale (none known yet: English until the next launch says otherwise)."""
    op.add_column("users", sa.Column("locale", sa.String(length=35), nullable=True))


def downgrade() -> None:
    """Drop users.locale."""
    op.drop_column("users", "locale")
