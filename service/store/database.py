"""The store's engine and sessions, for SQLite (embedded) and PostgreSQL alike."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, CursorResult, Engine, create_engine, event, make_url, text
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.sql.expression import Executable

_SQLITE_BUSY_MS = 10_000


class Store:
    """One database: an engine per process, and short transactions on it.

    The engine is made again in a forked child (Celery's prefork pool, gunicorn), because
    pooled connections must never be shared across processes.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        self._pid = os.getpid()
        self._engine = self._connect()
        self._sessions = sessionmaker(self._engine, expire_on_commit=False)
        # reads need no write lock: on SQLite they begin DEFERRED and never wait for writers
        reader = self._engine.execution_options(sqlite_begin="DEFERRED")
        self._reads = sessionmaker(reader, expire_on_commit=False)

    @property
    def engine(self) -> Engine:
        """Return this process's engine."""
        if os.getpid() != self._pid:
            # the parent's connections stay open for the parent; this child gets its own
            self._engine.dispose(close=False)
            self._pid = os.getpid()
        return self._engine

    @contextmanager
    def session(self) -> Iterator[Session]:
        """Yield a session in a transaction: committed at the end, rolled back on error."""
        self.engine  # noqa: B018  (forked? drop the inherited connections first)
        with self._sessions() as session, session.begin():
            yield session

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """Yield a connection in a transaction, committed at the end: Core statements only.

        For the paths every submission takes: the ORM session's own bookkeeping costs more
        than the statements it would run.
        """
        with self.engine.begin() as connection:
            yield connection

    @contextmanager
    def reading(self) -> Iterator[Session]:
        """Yield a session for reads only (on SQLite it takes no write lock)."""
        self.engine  # noqa: B018  (forked? drop the inherited connections first)
        with self._reads() as session, session.begin():
            yield session

    def ping(self) -> None:
        """Raise unless the database answers a trivial query."""
        with self.reading() as session:
            session.execute(text("SELECT 1"))

    def dispose(self) -> None:
        """Close every pooled connection (tests, and the end of a command)."""
        self._engine.dispose()

    def _connect(self) -> Engine:
        if not self.is_sqlite:
            return create_engine(
                self.url,
                pool_pre_ping=True,  # a restarted server leaves dead connections in the pool
                pool_size=5,
                max_overflow=10,
                connect_args={"connect_timeout": 5},
            )
        path = make_url(self.url).database
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)  # the instance dir, at first
        engine = create_engine(self.url, connect_args={"timeout": _SQLITE_BUSY_MS / 1000})
        event.listen(engine, "connect", _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
        return engine


def changed(
    session: Session | Connection,
    statement: Executable,
    parameters: Mapping[str, Any] | None = None,
) -> int:
    """Run an UPDATE in the session's (or connection's) transaction; return the rows matched."""
    # on the connection, not through the ORM: no objects to keep in step, and less overhead
    connection = session.connection() if isinstance(session, Session) else session
    result = connection.execute(statement, parameters)
    assert isinstance(result, CursorResult)
    return int(result.rowcount)


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets readers run beside the one writer; the driver's own transaction handling is
    # off so that _sqlite_begin decides how a transaction starts
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={_SQLITE_BUSY_MS}")
    cursor.close()


def _sqlite_begin(connection: Any) -> None:
    # IMMEDIATE takes the write lock up front (waiting up to busy_timeout), so a transaction
    # that reads and then writes cannot fail half-way with SQLITE_BUSY; every transaction
    # here is short (no run happens inside one), so serialising writers costs little.
    # Store.reading() asks for DEFERRED: a reader sees a snapshot and never waits.
    mode = connection.get_execution_options().get("sqlite_begin", "IMMEDIATE")
    # straight on the driver: through exec_driver_sql this took a third of a short
    # transaction's CPU, and a BEGIN has no parameters, rows or types to handle
    connection.connection.driver_connection.execute(f"BEGIN {mode}")
