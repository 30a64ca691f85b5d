"""A real PostgreSQL server for the index's tests (issue 41 §3): Debian's postgresql-15
binaries (/usr/lib/postgresql/15/bin, README command 2), a cluster initdb'd in a private
temporary folder, listening on a Unix socket there only (no TCP port), run as an unprivileged
user (postgres, else nobody, when the tests run as root: PostgreSQL refuses root; as
themselves otherwise), tuned for tests (fsync off: the cluster is thrown away).

It cannot outlive the tests: the postmaster is a child of the test process, started in the
foreground (not daemonised by pg_ctl) with the parent-death signal set after the switch of
user (prctl PR_SET_PDEATHSIG, SIGQUIT: PostgreSQL's immediate shutdown), so whatever kills the
test process, SIGKILL included, the kernel stops the server; server() stops it and removes its
folder at the end, on failure too; and a folder left by a killed session is removed by the
next one.

- server(): the context manager (the tests' session fixture: tests/index/conftest.py)
- Backend: where a test's index is (an SQLite file, or a database on the server) and how the
  test reads it, the same for both; NEEDS_POSTGRESQL: the needs marker of a test on the server
- Server.database(): a fresh database, its URL; Server.stop() / start(): the server gone
  mid-way and back; Server.url(): the URL of a database for a user and password
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pts.index import db, target
from pts.tools import liveness

# pgbench stands for Debian's postgresql-15 (tests/support/helpers.py TOOLS): its server
# binaries are not on PATH, pgbench's wrapper is
NEEDS_POSTGRESQL = pytest.mark.needs("pgbench")

PG_BIN = Path("/usr/lib/postgresql/15/bin")       # Debian's postgresql-15 server binaries
PREFIX = "pts-pg-"                      # /tmp/pts-pg-<pid namespace>-<pid of the tests>-XXXX
LOCK = "owner.lock"                     # held by the test process while its server lives
STALE_S = 60.0                          # a folder without its lock this old: its maker died
SUPERUSER = "pts"                                  # trusted on the socket
LAB_USER, LAB_PASSWORD = "lab", "lab-secret"        # password-checked (scram-sha-256)
READY_S = 60.0
PR_SET_PDEATHSIG = 1
HBA = f"""# tests/support/postgres.py: the Unix socket only
local all {SUPERUSER} trust
local all all scram-sha-256
"""
SETTINGS = {"listen_addresses": "", "fsync": "off", "synchronous_commit": "off",
            "full_page_writes": "off", "shared_buffers": "16MB", "max_connections": "30",
            "log_min_messages": "warning", "lc_messages": "C"}


def _account() -> pwd.struct_passwd | None:
    """Whom the server runs as: None (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise RuntimeError("running as root and neither a postgres nor a nobody user exists")


def as_account(account: pwd.struct_passwd | None):
    """preexec_fn: become `account`, then ask the kernel for SIGQUIT when we lose our parent
    (after the switch: a change of credentials clears the parent-death signal)."""
    def switch():
        if account is not None:
            os.setgroups([])
            os.setgid(account.pw_gid)
            os.setuid(account.pw_uid)
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGQUIT, 0, 0, 0) != 0:
            os._exit(121)
    return switch


def server_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    return env | {"LC_ALL": "C", "LANG": "C", "TZ": "UTC"}


def remove_stale(tmp: Path | None = None, now: float | None = None) -> list[Path]:
    """Folders of earlier sessions whose test process is gone (killed before its clean-up):
    judged by the lock their test process held (the kernel releases it at its death, in
    whatever pid namespace it ran: a test session in a container shares /tmp but not our
    pids), or, for one killed before it took its lock, by its pid in its own namespace.
    What cannot be judged (an older version's folder, without a lock or a namespace in its
    name) is kept."""
    gone, tmp = [], Path(tmp or tempfile.gettempdir())
    now = time.time() if now is None else now
    mark = liveness.namespace_mark()
    for d in tmp.glob(f"{PREFIX}*"):
        held = liveness.held(d / LOCK)
        if held is None:                     # no lock: killed between mkdtemp and hold
            ns, pid, *_ = d.name[len(PREFIX):].split("-") + ["", ""]
            with contextlib.suppress(OSError):
                held = ns != mark or not pid.isdigit() or Path(f"/proc/{pid}").exists() \
                    or now - d.stat().st_mtime < STALE_S
        if held is False:
            shutil.rmtree(d, ignore_errors=True)
            gone.append(d)
    return gone


class Server:
    def __init__(self, home: Path, account):
        self.home, self.account = home, account
        self.data, self.sock, self.log = home / "data", home / "sock", home / "server.log"
        self.proc: subprocess.Popen | None = None
        self._names = itertools.count(1)

    def url(self, database: str, user: str = SUPERUSER, password: str | None = None) -> str:
        auth = user if password is None else f"{user}:{password}"
        return f"postgresql://{auth}@/{database}?host={self.sock}"

    def initdb(self) -> None:
        done = subprocess.run([str(PG_BIN / "initdb"), "-D", str(self.data), "-U", SUPERUSER,
                               "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"],
                              capture_output=True, text=True, env=server_env(), timeout=120,
                              preexec_fn=as_account(self.account))
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed ({done.returncode}): {done.stderr[-2000:]}")
        (self.data / "pg_hba.conf").write_text(HBA, encoding="utf-8")

    def start(self) -> None:
        argv = [str(PG_BIN / "postgres"), "-D", str(self.data), "-k", str(self.sock)]
        for k, v in SETTINGS.items():
            argv += ["-c", f"{k}={v}"]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, env=server_env(),
                                         preexec_fn=as_account(self.account))
        deadline = time.monotonic() + READY_S
        while not (self.sock / ".s.PGSQL.5432").exists() or not self._ready():
            if self.proc.poll() is not None:
                raise RuntimeError(f"postgres exited ({self.proc.returncode}): "
                                   f"{self.log.read_text(errors='replace')[-2000:]}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"postgres not ready in {READY_S:g} s")
            time.sleep(0.05)

    def _ready(self) -> bool:
        import psycopg
        try:
            psycopg.connect(self.url("postgres"), connect_timeout=2).close()
        except psycopg.OperationalError:
            return False
        return True

    def stop(self) -> None:
        """Fast shutdown (SIGINT: clients disconnected, open transactions rolled back)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGQUIT)
            self.proc.wait(timeout=30)

    def sql(self, statement: str, database: str = "postgres") -> None:
        import psycopg
        with psycopg.connect(self.url(database), autocommit=True) as conn:
            conn.execute(statement)

    def database(self) -> str:
        """A new empty database; its URL (the superuser, trusted on the socket)."""
        name = f"t{next(self._names)}"
        self.sql(f"CREATE DATABASE {name}")
        return self.url(name)


@contextlib.contextmanager
def server() -> Iterator[Server]:
    """A started PostgreSQL 15 cluster in a private temporary folder, with the role LAB_USER
    (password LAB_PASSWORD); stopped and removed at the end."""
    if not (PG_BIN / "postgres").exists():
        raise RuntimeError(f"no {PG_BIN / 'postgres'}: apt-get install postgresql-15")
    remove_stale()
    account = _account()
    home = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{liveness.namespace_mark()}-{os.getpid()}-"))
    lock = liveness.hold(home / LOCK)
    try:
        if account is not None:
            os.chown(home, account.pw_uid, account.pw_gid)
        s = Server(home, account)
        s.sock.mkdir()
        if account is not None:
            os.chown(s.sock, account.pw_uid, account.pw_gid)
        s.initdb()
        s.start()
        try:
            s.sql(f"CREATE ROLE {LAB_USER} LOGIN PASSWORD '{LAB_PASSWORD}'")
            yield s
        finally:
            s.stop()
    finally:
        shutil.rmtree(home, ignore_errors=True)
        os.close(lock)


class Backend:
    """Where a test's index is and how the test reads it, for either backend."""

    def __init__(self, kind: str, url: str | None = None):
        self.kind, self.url = kind, url

    def target(self, reports: Path) -> str:
        """The index of `reports`: its index.sqlite, or this test's database."""
        return str(reports / db.FILE_NAME) if self.url is None else self.url

    def args(self, reports: Path) -> list[str]:
        """The command's arguments that name it (none for the default SQLite file)."""
        return [] if self.url is None else ["--index", self.url]

    def connect(self, reports: Path, migrations=None) -> db.Index:
        where = self.target(reports)
        return target.connect(where) if migrations is None else \
            target.connect(where, migrations)

    def dump(self, reports: Path) -> dict:
        """Every row of the three tables, per table, sorted, without indexed_at."""
        index = self.connect(reports)
        try:
            return {t: sorted(tuple(v for k, v in r.items() if k != "indexed_at")
                              for r in index.rows(f"SELECT * FROM {t}"))
                    for t in ("runs", "tests", "figures")}
        finally:
            index.close()

    def one(self, reports: Path, sql: str, *args):
        index = self.connect(reports)
        try:
            return tuple(index.execute(sql, args).fetchone())
        finally:
            index.close()
