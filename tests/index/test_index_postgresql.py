"""The index on a real PostgreSQL 15 server (tests/support/postgres.py; the tests shared with
SQLite run against it through `backend`): the same rows as SQLite for the reference run; a
server that cannot be reached, a refused password, a database that does not exist, a URL
that is not one, no psycopg: each a clear error naming the fix, the run folders untouched;
the server stopped mid-way: the command stops saying so, nothing is lost and the next run
catches up; PTS_INDEX; and the test server itself dies with the tests, whatever kills them."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pts.cli.main import main
from pts.index import build
from tests.support import postgres
from tests.support.helpers import DATA, REPO
from tests.support.postgres import NEEDS_POSTGRESQL, Backend

REFERENCE = DATA / "reference-run"
pytestmark = NEEDS_POSTGRESQL


def add_run(reports, name):
    folder = reports / "model_serial" / name
    shutil.copytree(REFERENCE, folder)
    return folder


def tree(reports) -> dict:
    """Every file of the run folders: its size, mtime (ns) and bytes (nothing changed)."""
    root = reports / "model_serial"
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns, p.read_bytes())
            for p in sorted(root.rglob("*")) if p.is_file()}


def alive(pid: int) -> bool:
    """A process and not yet a zombie waiting for its new parent to reap it."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_the_reference_run_has_the_same_rows_in_sqlite_and_postgresql(tmp_path, capsys,
                                                                       pg_server):
    reports = tmp_path / "reports"
    add_run(reports, "r1"), add_run(reports, "r2")
    sqlite, pg = Backend("sqlite"), Backend("postgresql", pg_server.database())
    for b in (sqlite, pg):
        assert main(["index", str(reports), *b.args(reports)]) == 0
    out = capsys.readouterr().out
    assert out.count("2 added, 0 updated, 0 dropped") == 2
    lite, post = sqlite.dump(reports), pg.dump(reports)
    assert [len(post[t]) for t in ("runs", "tests", "figures")] == [2, 22, 302]
    assert post == lite
    # one of the lab's questions, the same SQL on both (docs/index.md's example)
    question = ("SELECT r.firmware, r.serial, f.value FROM figures f JOIN runs r ON "
                "r.folder = f.folder WHERE f.test = 'iops' AND f.metric = 'iops' AND "
                "f.cell = ? AND f.shown = 'ok' ORDER BY r.folder")
    answers = [b.connect(reports).rows(question, ("RND 4KiB 0/100",)) for b in (sqlite, pg)]
    assert answers[0] == answers[1] and len(answers[0]) == 2
    assert answers[0][0]["value"] > 0


def test_an_unreachable_index_is_a_clear_error_and_touches_no_folder(tmp_path, capsys,
                                                                     pg_server, monkeypatch):
    reports = tmp_path / "reports"
    add_run(reports, "r1")
    before = tree(reports)

    def refused(url) -> str:
        assert main(["index", str(reports), "--index", url]) == 2
        out = capsys.readouterr()
        assert out.out == "" and "run `python -m pts index` again" in out.err
        return " ".join(out.err.split())

    nowhere = f"postgresql://pts@/pts?host={tmp_path / 'no-server-here'}"
    err = refused(nowhere)
    assert f"cannot reach the PostgreSQL index {nowhere} (connection" in err
    assert "No such file or directory" in err
    assert "Is the PostgreSQL server running and accepting connections there?" in err

    wrong = pg_server.url("postgres", postgres.LAB_USER, "not-the-password")
    err = refused(wrong)
    assert f'password authentication failed for user "{postgres.LAB_USER}"' in err
    assert "The server refused the user or password" in err
    assert "not-the-password" not in err and f"{postgres.LAB_USER}:***@" in err

    err = refused(pg_server.url("no_such_db"))
    assert 'database "no_such_db" does not exist' in err and "createdb" in err

    err = refused(pg_server.url("postgres") + "&colour=blue")
    assert "is not a PostgreSQL URL libpq can read" in err and "colour" in err
    assert "postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE" in err

    monkeypatch.setitem(sys.modules, "psycopg", None)          # psycopg not installed
    err = refused(pg_server.url("postgres"))
    assert "a PostgreSQL index needs psycopg 3 and libpq" in err
    assert "pip install -e '.[postgresql]'" in err and "libpq5" in err
    assert tree(reports) == before and not (reports / "index.sqlite").exists()


def test_the_server_stopped_mid_way_loses_nothing_and_the_next_run_catches_up(
        tmp_path, capsys, pg_server, monkeypatch):
    reports = tmp_path / "reports"
    add_run(reports, "r1")
    pg = Backend("postgresql", pg_server.database())
    argv = ["index", str(reports), "--index", pg.url]
    assert main(argv) == 0
    r2, r3 = add_run(reports, "r2"), add_run(reports, "r3")
    before = tree(reports)
    real, writes = build.insert, []

    def insert(conn, table, columns, found):      # the server stops as r3's figures go in
        if table == "figures":
            writes.append(1)
            if len(writes) == 2:
                pg_server.stop()
        return real(conn, table, columns, found)

    monkeypatch.setattr(build, "insert", insert)
    capsys.readouterr()
    try:
        assert main(argv) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert f"lost the connection to the PostgreSQL index {pg.url} mid-way" in err
        assert "the folders indexed before are in the index and the one in flight is not" in err
        assert "run `python -m pts index` again" in err
        assert tree(reports) == before                # the folders untouched
        assert main(argv) == 2                         # down: said so at once
        assert "cannot reach the PostgreSQL index" in capsys.readouterr().err
    finally:
        pg_server.start()
    monkeypatch.undo()
    r2_rows = pg.one(reports, "SELECT COUNT(*) FROM figures WHERE folder = ?",
                     str(r2.resolve()))
    assert r2_rows == (151,)                           # r2 was committed before the stop
    assert pg.one(reports, "SELECT COUNT(*) FROM runs WHERE folder = ?",
                  str(r3.resolve())) == (0,)          # r3 rolled back whole
    assert main(argv) == 0
    assert "1 added, 0 updated, 0 dropped, 2 unchanged" in capsys.readouterr().out
    sqlite = Backend("sqlite")                         # the same as an index made in one go
    assert main(["index", str(reports)]) == 0
    assert pg.dump(reports) == sqlite.dump(reports)


def test_pts_index_names_the_database_for_every_command(tmp_path, capsys, pg_server,
                                                        monkeypatch):
    reports = tmp_path / "reports"
    add_run(reports, "r1")
    url = pg_server.database()
    monkeypatch.setenv("PTS_INDEX", url)
    assert main(["index", str(reports)]) == 0
    assert f"index {url}: 1 added" in capsys.readouterr().out
    assert not (reports / "index.sqlite").exists()
    assert Backend("postgresql", url).one(reports, "SELECT COUNT(*) FROM runs") == (1,)
    other = tmp_path / "other.sqlite"                 # --index wins over the environment
    assert main(["index", str(reports), "--index", str(other)]) == 0
    assert other.exists()


def test_the_test_server_dies_with_the_tests_whatever_kills_them(tmp_path):
    """A process holding a server (as a pytest session does) killed with SIGKILL: no clean-up
    runs, and the postmaster goes all the same (its parent-death signal); the folder left is
    removed by the next session (remove_stale). The RWSW tests' cluster (tests/support/apps.py
    postgres(), on a file system of their own) is held by the same process and goes too: it
    was started by pg_ctl, daemonised, and outlived a killed session (seen: with its
    parent-death signal left out, its postmaster was alive after the kill and this failed)."""
    fs = Path(tempfile.mkdtemp(prefix="pts-test-pg-", dir="/dev/shm"))
    fs.chmod(0o755)                       # the postgres user walks into it
    code = ("import time; from pathlib import Path; from tests.support import apps, postgres\n"
            f"with postgres.server() as s, apps.postgres(Path({str(fs)!r})):\n"
            "    print(s.proc.pid, s.home, flush=True); time.sleep(600)\n")
    holder = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        try:
            line = holder.stdout.readline().split()
            assert line, holder.stderr.read()
            pid, home = int(line[0]), line[1]
            app = int((fs / "postgres" / "data" / "postmaster.pid").read_text().split()[0])
            assert alive(pid) and alive(app)
        finally:
            holder.send_signal(signal.SIGKILL)
            holder.wait(timeout=30)
        deadline = time.monotonic() + 20
        while (alive(pid) or alive(app)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid), f"postgres {pid} outlived its test process"
        assert not alive(app), f"the RWSW tests' postgres {app} outlived its test process"
    finally:
        shutil.rmtree(fs, ignore_errors=True)
    assert os.path.isdir(home)
    assert str(home) in {str(p) for p in postgres.remove_stale()}
    assert not os.path.exists(home)
