"""The store: SQLAlchemy models, sessions and Alembic migrations. The database is the truth.

No Flask: the web app and the worker each open their store at start.
"""

from __future__ import annotations

from service.store.database import Store
from service.store.migrate import upgrade

__all__ = ["Store", "upgrade"]
