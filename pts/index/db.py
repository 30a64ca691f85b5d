"""Opening an index and what every backend shares: the Index (a connection, the SQL written
once with `?` placeholders, one transaction per run folder), the numbered migrations applied
to it (pts.index.schema), and the refusals with the reason and the fix (not a pts index,
versions edited out of order, a schema from a newer snia-pts).

Two backends, the same schema and migrations: an SQLite file (here: Python's sqlite3) and a
PostgreSQL database (pts.index.postgres, through psycopg 3). What differs between them, and
only this, is in their Index classes:
- placeholders: the SQL is written with `?` (sqlite3's); the PostgreSQL index turns them into
  psycopg's `%s`;
- the writers' lock: SQLite's BEGIN IMMEDIATE takes the database's write lock at once; on
  PostgreSQL BEGIN then a transaction-scoped advisory lock (pg_advisory_xact_lock), so that
  two `pts index` queue there too instead of colliding on a folder's keys;
- which tables exist: sqlite_master / information_schema.tables (the current schema);
- the connection's set-up: SQLite's WAL mode and foreign_keys pragma (PostgreSQL always
  enforces foreign keys and has no such mode);
- what errors are: sqlite3's or psycopg's classes (Index.IntegrityError for a row the schema
  refuses); booleans read back as 0/1 from SQLite and False/True from PostgreSQL (equal in
  Python).

Transactions are explicit (autocommit connections + BEGIN ... COMMIT): one per run folder in
build.py, one for the migrations, so an interrupted `pts index` (Ctrl-C, a crash, the server
gone) leaves every folder's rows either as they were or wholly replaced.
"""

from __future__ import annotations

import sqlite3
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from pts.index.schema import MIGRATIONS, VERSION_TABLE, Migration

FILE_NAME = "index.sqlite"        # the default index: REPORTS_DIR/index.sqlite
BUSY_TIMEOUT_S = 30.0             # another `pts index` writing: wait this long for it
REBUILD = ("the index is derived from the run folders and can be rebuilt: move {path} away "
           "and run `python -m pts index REPORTS_DIR` again")


class IndexUnusable(Exception):
    """The index cannot be opened or used; the message names it, why, and the fix."""


class Index(ABC):
    """An open index (SqliteIndex here, postgres.PostgresIndex: each gives the four abstract
    methods in its dialect). `where`: the file, or the URL without its password (for messages)."""

    kind = ""
    IntegrityError: type[Exception] = Exception

    def __init__(self, conn, where: str):
        self.conn, self.where = conn, where

    @abstractmethod
    def execute(self, sql: str, params: Sequence = ()):
        """The cursor of `sql` (written with `?` placeholders)."""

    @abstractmethod
    def executemany(self, sql: str, params: Iterable[Sequence]) -> None:
        """`sql` once per parameter row."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[Index]:
        """The writers' lock at once (two indexers queue, never deadlock) ... COMMIT; anything
        raised inside, Ctrl-C included, rolls the whole transaction back."""

    def rebuild(self) -> str:
        """How to start this index afresh (it is only a view of the folders)."""
        return REBUILD.format(path=self.where)

    @abstractmethod
    def tables(self) -> set[str]:
        """The names of the index's tables."""

    def columns(self, table: str) -> list[str]:
        return [d[0] for d in self.execute(f"SELECT * FROM {table} WHERE 1 = 0").description]

    def rows(self, sql: str, params: Sequence = ()) -> list[dict]:
        """The rows of a query as {column: value}."""
        cur = self.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    def close(self) -> None:
        self.conn.close()


class SqliteIndex(Index):
    kind = "sqlite"
    IntegrityError = sqlite3.IntegrityError

    def execute(self, sql: str, params: Sequence = ()):
        return self.conn.execute(sql, params)

    def executemany(self, sql: str, params: Iterable[Sequence]) -> None:
        self.conn.executemany(sql, params)

    @contextmanager
    def transaction(self) -> Iterator[Index]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def tables(self) -> set[str]:
        return {name for (name,) in self.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}


def _set_up(conn: sqlite3.Connection, index: SqliteIndex,
            migrations: Sequence[Migration]) -> None:
    """WAL mode and the migrations. Two processes opening a new index file at once (a run's
    live index and a dashboard's watcher, two runs on one REPORTS_DIR) race for the switch to
    WAL, which SQLite answers with "database is locked" at once, without its busy timeout
    (seen: 2 of 40 tries of four threads opening one new file): tried again for up to
    BUSY_TIMEOUT_S."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            migrate(index, migrations)
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def connect(path: str | Path, migrations: Sequence[Migration] = MIGRATIONS) -> SqliteIndex:
    """The SQLite index at `path` (created if absent), migrated to the newest of
    `migrations`. (A PostgreSQL URL: pts.index.target.connect.)"""
    path = Path(path)
    if path.is_dir():
        raise IndexUnusable(f"{path} is a folder: the index is a file (--index FILE)")
    if not path.parent.is_dir():
        raise IndexUnusable(f"cannot make the index {path}: {path.parent} is not a folder")
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error as exc:
        raise IndexUnusable(f"cannot open the index {path}: {exc}") from None
    index = SqliteIndex(conn, str(path))
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        _set_up(conn, index, migrations)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise IndexUnusable(f"{path} is not a usable SQLite database ({exc}); "
                            + REBUILD.format(path=path)) from None
    except BaseException:
        conn.close()
        raise
    return index


def transaction(index: Index):
    """index.transaction(): one transaction, rolled back whole by anything raised inside."""
    return index.transaction()


def versions(index: Index) -> list[int]:
    """The applied migrations' versions, in order ([] before the first)."""
    return [v for (v,) in index.execute("SELECT version FROM schema_version ORDER BY version")]


def migrate(index: Index, migrations: Sequence[Migration] = MIGRATIONS) -> list[int]:
    """Apply the migrations the index lacks, in one transaction; the versions applied."""
    where = index.where
    known = [m.version for m in migrations]
    with index.transaction():
        tables = index.tables()
        if tables and "schema_version" not in tables:
            noun = "an SQLite database" if index.kind == "sqlite" else "a PostgreSQL database"
            raise IndexUnusable(f"{where} is {noun} but not a pts index (tables "
                                f"{', '.join(sorted(tables))}; no schema_version): give "
                                "another one with --index")
        index.execute(VERSION_TABLE)
        have = versions(index)
        newest = max(have, default=0)
        if newest > known[-1]:
            raise IndexUnusable(
                f"{where} has schema version {newest}, newer than this snia-pts knows (up to "
                f"{known[-1]}): it was written by a newer snia-pts. Index with that version, "
                f"or give another index with --index; " + index.rebuild())
        if have != known[:len(have)]:
            raise IndexUnusable(f"{where} records schema versions {have}, not "
                                f"{known[:len(have)]} (edited by hand?); " + index.rebuild())
        applied = []
        for m in migrations[len(have):]:
            for statement in m.statements:
                index.execute(statement)
            index.execute("INSERT INTO schema_version (version, title, applied_at) "
                          "VALUES (?, ?, ?)", (m.version, m.title, time.time()))
            applied.append(m.version)
    return applied
