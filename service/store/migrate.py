"""Migrations: bring the database to the newest schema (on start-up, or `codeblanks db upgrade`)."""

from __future__ import annotations

import time

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from service.store.database import Store

_LOCK = 0x636F6465  # any fixed number: PostgreSQL's advisory lock for migrations


def config() -> Config:
    """Return Alembic's configuration, pointing at the migrations inside this package."""
    cfg = Config()
    cfg.set_main_option("script_location", "service.store:migrations")
    return cfg


def upgrade(store: Store, wait_s: float = 60.0) -> None:
    """Apply every migration not applied yet; safe when several processes start at once."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            _upgrade(store)
            return
        except OperationalError as exc:
            # SQLite: processes starting together queue on one write lock; on a slow machine
            # the queue can outlast the busy timeout. Starting late beats failing to start.
            if not store.is_sqlite or "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _upgrade(store: Store) -> None:
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
