"""Opening an index: an SQLite file (Python's sqlite3), WAL mode (readers such as the dashboard
go on reading while `pts index` writes), foreign keys on, the schema migrated to this code's
version (pts.index.schema), and refused with the reason and the fix when it is not a pts
index, was hand-edited out of order, or comes from a newer snia-pts.

Transactions are explicit (isolation_level None + BEGIN IMMEDIATE): one per run folder in
build.py, one for the migrations, so an interrupted `pts index` leaves every folder's rows
either as they were or wholly replaced.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from pts.index.schema import MIGRATIONS, VERSION_TABLE, Migration

FILE_NAME = "index.sqlite"        # the default index: REPORTS_DIR/index.sqlite
BUSY_TIMEOUT_S = 30.0             # another `pts index` writing: wait this long for it
REBUILD = ("the index is derived from the run folders and can be rebuilt: move {path} away "
           "and run `python -m pts index REPORTS_DIR` again")


class IndexUnusable(Exception):
    """The index cannot be opened or used; the message names the file, why, and the fix."""


def connect(path: str | Path, migrations: Sequence[Migration] = MIGRATIONS) -> sqlite3.Connection:
    """The index at `path` (created if absent), migrated to the newest of `migrations`."""
    path = Path(path)
    if path.is_dir():
        raise IndexUnusable(f"{path} is a folder: the index is a file (--index FILE)")
    if not path.parent.is_dir():
        raise IndexUnusable(f"cannot make the index {path}: {path.parent} is not a folder")
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error as exc:
        raise IndexUnusable(f"cannot open the index {path}: {exc}") from None
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA journal_mode = WAL")
        migrate(conn, path, migrations)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise IndexUnusable(f"{path} is not a usable SQLite database ({exc}); "
                            + REBUILD.format(path=path)) from None
    except BaseException:
        conn.close()
        raise
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE (the write lock at once: two indexers queue, never deadlock) ...
    COMMIT; anything raised inside, Ctrl-C included, rolls the whole transaction back."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def versions(conn: sqlite3.Connection) -> list[int]:
    """The applied migrations' versions, in order ([] before the first)."""
    return [v for (v,) in conn.execute("SELECT version FROM schema_version ORDER BY version")]


def migrate(conn: sqlite3.Connection, path: Path,
            migrations: Sequence[Migration] = MIGRATIONS) -> list[int]:
    """Apply the migrations the index lacks, in one transaction; the versions applied."""
    tables = {name for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'")}
    if tables and "schema_version" not in tables:
        raise IndexUnusable(f"{path} is an SQLite database but not a pts index (tables "
                            f"{', '.join(sorted(tables))}; no schema_version): give another "
                            "file with --index")
    known = [m.version for m in migrations]
    with transaction(conn):
        conn.execute(VERSION_TABLE)
        have = versions(conn)
        newest = max(have, default=0)
        if newest > known[-1]:
            raise IndexUnusable(
                f"{path} has schema version {newest}, newer than this snia-pts knows (up to "
                f"{known[-1]}): it was written by a newer snia-pts. Index with that version, "
                f"or give another file with --index; " + REBUILD.format(path=path))
        if have != known[:len(have)]:
            raise IndexUnusable(f"{path} records schema versions {have}, not "
                                f"{known[:len(have)]} (edited by hand?); "
                                + REBUILD.format(path=path))
        applied = []
        for m in migrations[len(have):]:
            for statement in m.statements:
                conn.execute(statement)
            conn.execute("INSERT INTO schema_version (version, title, applied_at) "
                         "VALUES (?, ?, ?)", (m.version, m.title, time.time()))
            applied.append(m.version)
    return applied
