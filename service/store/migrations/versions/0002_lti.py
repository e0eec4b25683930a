"""LTI: one-time logins and nonces, course memberships, and the launch's service URLs.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the LTI tables and columns."""
    with op.batch_alter_table("platforms") as table:
        table.add_column(
            sa.Column(
                "auto_add_deployments", sa.Boolean(), nullable=False, server_default=sa.false()
            )
        )
    with op.batch_alter_table("courses") as table:
        table.add_column(sa.Column("line_items_url", sa.String(length=2048), nullable=True))
        table.add_column(sa.Column("memberships_url", sa.String(length=2048), nullable=True))
    with op.batch_alter_table("placements") as table:
        table.add_column(
            sa.Column("title", sa.String(length=255), nullable=False, server_default="")
        )
    op.create_table(
        "memberships",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("course_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("roles", sa.Text(), nullable=False),
        sa.Column("teacher", sa.Boolean(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("seen_at", sa.DateTime(), nullable=True),
        sa.Column("roster_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["course_id"],
            ["courses.id"],
            name=op.f("fk_memberships_course_id_courses"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_memberships_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memberships")),
        sa.UniqueConstraint("course_id", "user_id", name=op.f("uq_memberships_course_id_user_id")),
    )
    op.create_table(
        "lti_logins",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=64), nullable=False),
        sa.Column("platform_id", sa.Integer(), nullable=False),
        sa.Column("nonce", sa.String(length=64), nullable=False),
        sa.Column("browser_hash", sa.String(length=64), nullable=False),
        sa.Column("storage_target", sa.String(length=255), nullable=True),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.Column("used_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["platform_id"],
            ["platforms.id"],
            name=op.f("fk_lti_logins_platform_id_platforms"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_logins")),
        sa.UniqueConstraint("state", name=op.f("uq_lti_logins_state")),
    )
    op.create_index(op.f("ix_lti_logins_expires_at"), "lti_logins", ["expires_at"])
    op.create_table(
        "lti_nonces",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("issuer", sa.String(length=2048), nullable=False),
        sa.Column("nonce", sa.String(length=255), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lti_nonces")),
        sa.UniqueConstraint("issuer", "nonce", name=op.f("uq_lti_nonces_issuer_nonce")),
    )
    op.create_index(op.f("ix_lti_nonces_expires_at"), "lti_nonces", ["expires_at"])


def downgrade() -> None:
    """Drop what upgrade added."""
    op.drop_index(op.f("ix_lti_nonces_expires_at"), table_name="lti_nonces")
    op.drop_table("lti_nonces")
    op.drop_index(op.f("ix_lti_logins_expires_at"), table_name="lti_logins")
    op.drop_table("lti_logins")
    op.drop_table("memberships")
    with op.batch_alter_table("placements") as table:
        table.drop_column("title")
    with op.batch_alter_table("courses") as table:
        table.drop_column("memberships_url")
        table.drop_column("line_items_url")
    with op.batch_alter_table("platforms") as table:
        table.drop_column("auto_add_deployments")
