"""The demo LMS's state in one SQLite file; every call opens its own connection (thread-safe)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import asdict, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from demo.lms_models import LineItem, Link, Score, Tool

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS tools (client_id TEXT PRIMARY KEY, data TEXT NOT NULL,
                                  created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS links (id TEXT PRIMARY KEY, course_id TEXT NOT NULL,
                                  data TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS lineitems (id INTEGER PRIMARY KEY AUTOINCREMENT,
                                      course_id TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS scores (id INTEGER PRIMARY KEY AUTOINCREMENT,
                                   lineitem_id INTEGER NOT NULL, user_id TEXT NOT NULL,
                                   body TEXT NOT NULL, timestamp TEXT NOT NULL,
                                   received REAL NOT NULL, applied INTEGER NOT NULL);
-- A teacher's clearing of a grade in the LMS's own gradebook (Moodle's reset).
CREATE TABLE IF NOT EXISTS cleared (lineitem_id INTEGER NOT NULL, user_id TEXT NOT NULL,
                                    at REAL NOT NULL);
-- One-time things: registration tokens, message hints, deep-linking data, used jti/nonces.
CREATE TABLE IF NOT EXISTS grants (kind TEXT NOT NULL, key TEXT NOT NULL, data TEXT NOT NULL,
                                   expires REAL NOT NULL, used INTEGER NOT NULL DEFAULT 0,
                                   PRIMARY KEY (kind, key));
"""


class Records:
    """Tools, links, line items, scores and one-time grants of the demo platform."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        # Outside _tx: executescript commits by itself, and WAL cannot be set in a transaction.
        with contextlib.closing(sqlite3.connect(path, timeout=30)) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        # IMMEDIATE takes the write lock up front, so read-then-write steps (score ordering,
        # one-time grants) cannot interleave between threads or processes.
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        finally:
            db.close()

    # tools
    def put_tool(self, tool: Tool) -> None:
        """Insert or replace a tool registration."""
        with self._tx() as db:
            db.execute(
                "INSERT OR REPLACE INTO tools VALUES (?, ?, ?)",
                (tool.client_id, json.dumps(asdict(tool)), time.time()),
            )

    def tool(self, client_id: str) -> Tool | None:
        """Return the tool registered under `client_id`, if any."""
        with self._tx() as db:
            row = db.execute("SELECT data FROM tools WHERE client_id = ?", (client_id,)).fetchone()
        return _tool(row[0]) if row else None

    def tools(self) -> list[Tool]:
        """Return every registered tool, oldest first."""
        with self._tx() as db:
            rows = db.execute("SELECT data FROM tools ORDER BY created").fetchall()
        return [_tool(r[0]) for r in rows]

    # links
    def put_link(self, link: Link) -> None:
        """Insert or replace a resource link."""
        with self._tx() as db:
            db.execute(
                "INSERT OR REPLACE INTO links VALUES (?, ?, ?, ?)",
                (link.id, link.course_id, json.dumps(asdict(link)), time.time()),
            )

    def link(self, link_id: str) -> Link | None:
        """Return a resource link by id."""
        with self._tx() as db:
            row = db.execute("SELECT data FROM links WHERE id = ?", (link_id,)).fetchone()
        return Link(**json.loads(row[0])) if row else None

    def links(self, course_id: str) -> list[Link]:
        """Return a course's resource links in the order they were made."""
        with self._tx() as db:
            rows = db.execute(
                "SELECT data FROM links WHERE course_id = ? ORDER BY created, id", (course_id,)
            ).fetchall()
        return [Link(**json.loads(r[0])) for r in rows]

    # line items
    def add_lineitem(self, item: LineItem) -> LineItem:
        """Save a new line item (its `id` is ignored) and return it with its id."""
        with self._tx() as db:
            cur = db.execute(
                "INSERT INTO lineitems (course_id, data) VALUES (?, '{}')", (item.course_id,)
            )
            assert cur.lastrowid is not None
            saved = replace(item, id=cur.lastrowid)
            db.execute(
                "UPDATE lineitems SET data = ? WHERE id = ?", (json.dumps(asdict(saved)), saved.id)
            )
        return saved

    def put_lineitem(self, item: LineItem) -> None:
        """Replace an existing line item."""
        with self._tx() as db:
            db.execute(
                "UPDATE lineitems SET data = ? WHERE id = ?", (json.dumps(asdict(item)), item.id)
            )

    def lineitem(self, lineitem_id: int) -> LineItem | None:
        """Return a line item by id."""
        with self._tx() as db:
            row = db.execute("SELECT data FROM lineitems WHERE id = ?", (lineitem_id,)).fetchone()
        return LineItem(**json.loads(row[0])) if row else None

    def lineitems(self, course_id: str) -> list[LineItem]:
        """Return a course's line items by id."""
        with self._tx() as db:
            rows = db.execute(
                "SELECT data FROM lineitems WHERE course_id = ? ORDER BY id", (course_id,)
            ).fetchall()
        return [LineItem(**json.loads(r[0])) for r in rows]

    def delete_lineitem(self, lineitem_id: int) -> None:
        """Delete a line item and the scores it received."""
        with self._tx() as db:
            db.execute("DELETE FROM lineitems WHERE id = ?", (lineitem_id,))
            db.execute("DELETE FROM scores WHERE lineitem_id = ?", (lineitem_id,))

    # scores
    def add_score(
        self, lineitem_id: int, user_id: str, body: dict[str, Any], whole: bool = True
    ) -> Score:
        """Keep a received score; apply it only if it is a later second than every applied one.

        A score not applied is kept too (applied=False): the caller answers it with a 409.
        `whole` False: the caller has checked the order itself (Canvas) and it is applied.
        """
        if not whole:
            with self._tx() as db:
                now = time.time()
                cur = db.execute(
                    "INSERT INTO scores (lineitem_id, user_id, body, timestamp, received, applied)"
                    " VALUES (?, ?, ?, ?, ?, 1)",
                    (lineitem_id, user_id, json.dumps(body), body["timestamp"], now),
                )
                assert cur.lastrowid is not None
            return Score(cur.lastrowid, lineitem_id, user_id, body, now, True)
        second = whole_second(body["timestamp"])
        with self._tx() as db:
            rows = db.execute(
                "SELECT timestamp FROM scores WHERE lineitem_id = ? AND user_id = ? AND applied",
                (lineitem_id, user_id),
            ).fetchall()
            cleared = db.execute(
                "SELECT max(at) FROM cleared WHERE lineitem_id = ? AND user_id = ?",
                (lineitem_id, user_id),
            ).fetchone()[0]
            # Moodle refuses a score unless its timestamp is later than the grade it holds, in
            # whole seconds: a retry, a reorder or a second score in the same second loses.
            # Clearing a grade stamps it too (grade_grades.timemodified = time()).
            applied = all(whole_second(r[0]) < second for r in rows) and (
                cleared is None or int(cleared) < second
            )
            now = time.time()
            cur = db.execute(
                "INSERT INTO scores (lineitem_id, user_id, body, timestamp, received, applied)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (lineitem_id, user_id, json.dumps(body), body["timestamp"], now, int(applied)),
            )
            assert cur.lastrowid is not None
        return Score(cur.lastrowid, lineitem_id, user_id, body, now, applied)

    def scores(self, lineitem_id: int | None = None, user_id: str | None = None) -> list[Score]:
        """Return received scores, oldest first, optionally of one line item and/or user."""
        sql = "SELECT id, lineitem_id, user_id, body, received, applied FROM scores WHERE 1=1"
        args: list[Any] = []
        if lineitem_id is not None:
            sql += " AND lineitem_id = ?"
            args.append(lineitem_id)
        if user_id is not None:
            sql += " AND user_id = ?"
            args.append(user_id)
        with self._tx() as db:
            rows = db.execute(sql + " ORDER BY id", args).fetchall()
        return [Score(r[0], r[1], r[2], json.loads(r[3]), r[4], bool(r[5])) for r in rows]

    def clear(self, lineitem_id: int, user_id: str) -> float:
        """Blank a user's grade on a line item, as a teacher's reset in Moodle does; return when."""
        now = time.time()
        with self._tx() as db:
            db.execute("INSERT INTO cleared VALUES (?, ?, ?)", (lineitem_id, user_id, now))
        return now

    def cleared(self, lineitem_id: int) -> dict[str, float]:
        """Return when each user's grade on a line item was last cleared."""
        with self._tx() as db:
            rows = db.execute(
                "SELECT user_id, max(at) FROM cleared WHERE lineitem_id = ? GROUP BY user_id",
                (lineitem_id,),
            ).fetchall()
        return {str(user): float(at) for user, at in rows}

    # one-time grants
    def grant(self, kind: str, key: str, data: dict[str, Any], ttl_s: float) -> None:
        """Record a one-time grant (e.g. a registration token) valid for `ttl_s` seconds."""
        with self._tx() as db:
            db.execute("DELETE FROM grants WHERE expires < ?", (time.time() - 3600,))
            db.execute(
                "INSERT INTO grants (kind, key, data, expires) VALUES (?, ?, ?, ?)",
                (kind, key, json.dumps(data), time.time() + ttl_s),
            )

    def peek(self, kind: str, key: str) -> dict[str, Any] | None:
        """Return a live, unused grant without using it."""
        with self._tx() as db:
            row = db.execute(
                "SELECT data FROM grants WHERE kind = ? AND key = ? AND NOT used AND expires >= ?",
                (kind, key, time.time()),
            ).fetchone()
        return json.loads(row[0]) if row else None

    def take(self, kind: str, key: str) -> dict[str, Any] | None:
        """Use up a live grant and return its data; None if unknown, used or expired."""
        with self._tx() as db:
            row = db.execute(
                "SELECT data FROM grants WHERE kind = ? AND key = ? AND NOT used AND expires >= ?",
                (kind, key, time.time()),
            ).fetchone()
            if row:
                db.execute("UPDATE grants SET used = 1 WHERE kind = ? AND key = ?", (kind, key))
        return json.loads(row[0]) if row else None

    def remember(self, kind: str, key: str, until: float) -> bool:
        """Record that `key` was seen (a jti, a nonce); False if it was seen before."""
        with self._tx() as db:
            cur = db.execute(
                "INSERT OR IGNORE INTO grants (kind, key, data, expires, used)"
                " VALUES (?, ?, '{}', ?, 1)",
                (kind, key, max(until, time.time() + 3600)),
            )
        return cur.rowcount == 1


def whole_second(timestamp: str) -> int:
    """Return an ISO 8601 timestamp as Unix seconds, the fraction dropped (PHP's strtotime)."""
    return (datetime.fromisoformat(timestamp) - _EPOCH) // timedelta(seconds=1)


def _tool(data: str) -> Tool:
    raw = json.loads(data)
    raw["redirect_uris"] = tuple(raw["redirect_uris"])
    raw["scopes"] = tuple(raw["scopes"])
    return Tool(**raw)
