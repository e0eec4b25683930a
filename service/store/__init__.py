"""The store: SQLAlchemy models, sessions and Alembic migrations. The database is the truth."""

from __future__ import annotations

from flask import Flask

from service.store.database import Store
from service.store.migrate import upgrade

__all__ = ["Store", "init_app"]


def init_app(app: Flask) -> Store:
    """Open the configured database, migrate it unless told not to, and attach it."""
    store = Store(app.config["SETTINGS"].database)
    if app.config.get("MIGRATE_ON_START", True):
        upgrade(store)
    app.extensions["store"] = store
    return store
