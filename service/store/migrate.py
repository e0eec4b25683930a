"""Migrations: bring the database to the newest schema (on start-up, or `codeblanks db upgrade`)."""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text

from service.store.database import Store

_LOCK = 0x636F6465  # any fixed number: PostgreSQL's advisory lock for migrations


def config() -> Config:
    """Return Alembic's configuration, pointing at the migrations inside this package."""
    cfg = Config()
    cfg.set_main_option("script_location", "service.store:migrations")
    return cfg


def upgrade(store: Store) -> None:
    """Apply every migration not applied yet; safe when several processes start at once."""
    cfg = config()
    with store.engine.begin() as connection:
        # web and worker processes start together; one migrates, the others wait and then
        # find nothing to do (SQLite serialises through BEGIN IMMEDIATE)
        if not store.is_sqlite:
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK})
        cfg.attributes["connection"] = connection
        command.upgrade(cfg, "head")


def is_current(store: Store) -> bool:
    """Return whether the database is at the newest migration."""
    head = ScriptDirectory.from_config(config()).get_current_head()
    with store.engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision() == head
