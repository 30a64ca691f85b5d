"""The index in a PostgreSQL database, for a lab whose hosts write into one place: given as a
URL (`--index postgresql://USER@HOST/DATABASE`, or PTS_INDEX), through psycopg 3 (the
maintained PostgreSQL driver for Python; its pure-Python package over the system's libpq,
Debian's libpq5: docs/index.md says why). The same schema and migrations as SQLite
(pts.index.schema, pts.index.db.migrate); the differences are named in pts.index.db.

Everything that reaches the server goes through PostgresIndex, which turns psycopg's errors
into IndexUnusable with the problem and the fix: the server cannot be reached (down, wrong
host or port), the password or user is refused, the database does not exist, the URL is not
one, or the connection is lost mid-way (the folders indexed before are in, the one in flight
is rolled back by the server; the run folders are never touched: run `pts index` again). The
password is never printed: messages show the URL with `***` in its place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from pts.index.db import Index, IndexUnusable, migrate
from pts.index.schema import MIGRATIONS, Migration

SCHEMES = ("postgresql://", "postgres://")     # libpq's URL schemes
CONNECT_TIMEOUT_S = 10                          # a host that does not answer: give up then
# pg_advisory_xact_lock's key: every `pts index` writing to one database queues on it
# (SQLite: BEGIN IMMEDIATE). Any constant; this one spells "ptsindex" in ASCII.
WRITERS_LOCK = 0x707473696E646578
INSTALL = ("pip install -e '.[postgresql]' (psycopg 3) and Debian's libpq5 (apt-get install "
           "libpq5; README command 2 installs it with postgresql-15)")
AGAIN = ("nothing was written into the run folders; run `python -m pts index` again once the "
         "index can be reached")


def is_url(target: str) -> bool:
    return target.startswith(SCHEMES)


def redact(url: str) -> str:
    """The URL without its password (user:PASSWORD@ and password=...)."""
    url = re.sub(r"^([a-z]+://[^:/@?]*:)[^@/?]*@", r"\1***@", url)
    return re.sub(r"(password=)[^&\s]*", r"\1***", url)


class PostgresIndex(Index):
    kind = "postgresql"

    def __init__(self, conn, where: str, psycopg):
        super().__init__(conn, where)
        self.psycopg = psycopg
        self.IntegrityError = psycopg.IntegrityError

    def execute(self, sql: str, params: Sequence = ()):
        with self.errors():
            return self.conn.execute(placeholders(sql), tuple(params))

    def executemany(self, sql: str, params: Iterable[Sequence]) -> None:
        with self.errors(), self.conn.cursor() as cur:
            cur.executemany(placeholders(sql), params)

    @contextmanager
    def transaction(self) -> Iterator[Index]:
        with self.errors():
            self.conn.execute("BEGIN")
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITERS_LOCK,))
        try:
            yield self
        except BaseException:
            if not self.conn.broken:        # a lost server has rolled it back itself
                try:
                    self.conn.execute("ROLLBACK")
                except self.psycopg.OperationalError:
                    pass
            raise
        with self.errors():
            self.conn.execute("COMMIT")

    def tables(self) -> set[str]:
        return {name for (name,) in self.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema()")}

    def rebuild(self) -> str:
        return (f"the index is derived from the run folders and can be rebuilt: give an "
                f"empty database (e.g. dropdb and createdb it again) and run "
                f"`python -m pts index REPORTS_DIR --index {self.where}` again")

    @contextmanager
    def errors(self) -> Iterator[None]:
        """A connection lost mid-way (the server stopped, the network cut) as IndexUnusable;
        other errors (a row the schema refuses) as they are."""
        try:
            yield
        except self.psycopg.OperationalError as exc:
            if not self.conn.broken:
                raise
            raise IndexUnusable(
                f"lost the connection to the PostgreSQL index {self.where} mid-way "
                f"({first_line(exc)}): every run folder is written in one transaction, so "
                "the folders indexed before are in the index and the one in flight is not; "
                f"is the server running? {AGAIN}: it carries on where it stopped") from None


def placeholders(sql: str) -> str:
    """sqlite3's `?` as psycopg's `%s` (a literal % doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


def first_line(exc: BaseException) -> str:
    lines = [x.strip() for x in str(exc).splitlines() if x.strip()]
    return "; ".join(lines[:2]) or type(exc).__name__


def refused(where: str, exc: BaseException) -> str:
    """Why a connection failed, from libpq's message, with the fix."""
    text = str(exc)
    if re.search(r"password authentication failed|authentication failed|no password "
                 r"supplied|password is required", text):
        fix = ("The server refused the user or password: check the URL's user and password "
               "(or ~/.pgpass, PGPASSWORD) and the server's pg_hba.conf")
    elif re.search(r'database "[^"]*" does not exist', text):
        fix = ("The database does not exist: create it (createdb -h HOST -U USER NAME) or "
               "fix the URL's database name")
    elif re.search(r'role "[^"]*" does not exist', text):
        fix = "The user (role) does not exist on the server: create it or fix the URL's user"
    else:
        fix = ("Is the PostgreSQL server running and accepting connections there? Start it, "
               "or fix the URL's host and port (check with: psql 'URL')")
    return f"cannot reach the PostgreSQL index {where} ({first_line(exc)}). {fix}; {AGAIN}"


def connect(url: str, migrations: Sequence[Migration] = MIGRATIONS) -> PostgresIndex:
    """The PostgreSQL index at `url`, migrated to the newest of `migrations`."""
    where = redact(url)
    try:
        import psycopg
    except ImportError as exc:          # psycopg missing, or it found no libpq
        raise IndexUnusable(f"--index {where}: a PostgreSQL index needs psycopg 3 and libpq "
                            f"({exc}): {INSTALL}; {AGAIN}") from None
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.ProgrammingError as exc:       # libpq could not parse it
        raise IndexUnusable(f"{where} is not a PostgreSQL URL libpq can read "
                            f"({first_line(exc)}): write it as "
                            f"postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE; {AGAIN}") from None
    except psycopg.OperationalError as exc:
        raise IndexUnusable(refused(where, exc)) from None
    index = PostgresIndex(conn, where, psycopg)
    try:
        migrate(index, migrations)
    except psycopg.Error as exc:
        conn.close()
        raise IndexUnusable(f"{where}: the index's schema could not be brought to this "
                            f"version ({first_line(exc)}); " + index.rebuild()) from None
    except BaseException:
        conn.close()
        raise
    return index
