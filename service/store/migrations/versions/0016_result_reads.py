"""What the LMS holds, read back: a placement's results reads, and what each pair's read found.

The reads have a table of their own (a row once one is asked for) rather than columns of
placements, which older migrations' tests still write through the models.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create line_item_reads, and add read_given, read_maximum, read_at to grades: nothing
    was read before, so all are empty."""
    op.create_table(
        "line_item_reads",
        sa.Column("placement_id", sa.Integer(), nullable=False),
        sa.Column("requested_at", sa.DateTime(), nullable=True),
        sa.Column("read_at", sa.DateTime(), nullable=True),
        sa.Column("error", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["placement_id"],
            ["placements.id"],
            name=op.f("fk_line_item_reads_placement_id_placements"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("placement_id", name=op.f("pk_line_item_reads")),
    )
    with op.batch_alter_table("grades") as batch:
        batch.add_column(sa.Column("read_given", sa.Float(), nullable=True))
        batch.add_column(sa.Column("read_maximum", sa.Float(), nullable=True))
        batch.add_column(sa.Column("read_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    """Drop them again."""
    with op.batch_alter_table("grades") as batch:
        for name in ("read_at", "read_maximum", "read_given"):
            batch.drop_column(name)
    op.drop_table("line_item_reads")
