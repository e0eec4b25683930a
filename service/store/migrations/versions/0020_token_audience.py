"""A platform may name the `aud` its token endpoint wants in the tool's client assertion, when
that is not the token URL: Brightspace's "OAuth2 Audience" (D2L KB 23662), the
`authorization_server` of a platform's OpenID configuration (LTI Dynamic Registration 1.0).

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | Sequence[str] | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# In place, not as a batch: a batch copies the table on SQLite and drops the old one, and
# dropping platforms cascades (foreign_keys is on) to its deployments, users, courses and all
# their work (see 0012 and 0014). SQLite adds and drops a column in place since 3.35.


def upgrade() -> None:
    """Add platforms.token_audience (none: every platform keeps its token URL as `aud`)."""
    op.add_column("platforms", sa.Column("token_audience", sa.String(length=2048), nullable=True))


def downgrade() -> None:
    """Drop platforms.token_audience, in place."""
    op.execute("ALTER TABLE platforms DROP COLUMN token_audience")
