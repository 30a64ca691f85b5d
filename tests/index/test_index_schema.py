"""The index's database: WAL, numbered migrations each applied once, and what is refused
with the reason and the fix (a newer schema, a file that is not a pts index or not SQLite,
versions out of order); `python -m pts index --help` and its bad input. Against an SQLite
file and a PostgreSQL database (`backend`, tests/index/conftest.py) where both apply."""

import sqlite3

import pytest

from pts.cli.main import main
from pts.index import db
from pts.index.schema import MIGRATIONS, VERSION, Migration

# a statement failing half-way through a migration, in each backend's words
NO_TABLE = {"sqlite": "no such table: nowhere", "postgresql": 'relation "nowhere" does not exist'}


def test_a_new_index_has_every_migration_once(tmp_path, backend):
    index = backend.connect(tmp_path)
    if backend.kind == "sqlite":
        assert index.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert index.execute("PRAGMA foreign_keys").fetchone() == (1,)
    assert db.versions(index) == [m.version for m in MIGRATIONS] == list(range(1, VERSION + 1))
    assert {"schema_version", "runs", "tests", "figures"} <= index.tables()
    index.close()
    index = backend.connect(tmp_path)             # opened again: nothing applied twice
    assert index.execute("SELECT COUNT(*) FROM schema_version").fetchone() == (VERSION,)
    index.close()


def test_a_later_migration_is_applied_once_on_an_older_index(tmp_path, backend):
    backend.connect(tmp_path).close()
    newer = (*MIGRATIONS, Migration(VERSION + 1, "a column more",
                                    ("ALTER TABLE runs ADD COLUMN sample TEXT",)))
    index = backend.connect(tmp_path, newer)
    assert db.versions(index) == list(range(1, VERSION + 2))
    assert "sample" in index.columns("runs")
    index.close()
    index = backend.connect(tmp_path, newer)      # ALTER TABLE twice would raise: applied once
    assert db.versions(index) == list(range(1, VERSION + 2))
    index.close()


def test_a_failing_migration_leaves_the_index_as_it_was(tmp_path, backend):
    backend.connect(tmp_path).close()
    broken = (*MIGRATIONS, Migration(VERSION + 1, "half done", (
        "ALTER TABLE runs ADD COLUMN sample TEXT", "ALTER TABLE nowhere ADD COLUMN x TEXT")))
    with pytest.raises(db.IndexUnusable, match=NO_TABLE[backend.kind]):
        backend.connect(tmp_path, broken)
    index = backend.connect(tmp_path)
    assert db.versions(index) == list(range(1, VERSION + 1))
    assert "sample" not in index.columns("runs")
    index.close()


def test_an_index_from_a_newer_snia_pts_is_refused(tmp_path, capsys, backend):
    reports = tmp_path / "reports"
    reports.mkdir()
    index = backend.connect(reports)
    index.execute("INSERT INTO schema_version VALUES (?, 'from the future', 0)", (VERSION + 5,))
    index.close()
    with pytest.raises(db.IndexUnusable) as exc:
        backend.connect(reports)
    assert f"schema version {VERSION + 5}, newer than this snia-pts knows (up to " \
        f"{VERSION})" in str(exc.value) and "rebuilt" in str(exc.value)
    assert main(["index", str(reports), *backend.args(reports)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"index: {backend.target(reports)} has schema version {VERSION + 5}")
    if backend.kind == "sqlite":             # refused, not touched: no rows, same versions
        conn = sqlite3.connect(backend.target(reports))
        assert conn.execute("SELECT MAX(version), COUNT(*) FROM schema_version").fetchone() \
            == (VERSION + 5, VERSION + 1)
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone() == (0,)
        conn.close()
    else:
        import psycopg
        with psycopg.connect(backend.url) as conn:
            assert conn.execute("SELECT MAX(version), COUNT(*) FROM schema_version") \
                .fetchone() == (VERSION + 5, VERSION + 1)
            assert conn.execute("SELECT COUNT(*) FROM runs").fetchone() == (0,)


def test_versions_out_of_order_are_refused(tmp_path, backend):
    index = backend.connect(tmp_path)
    index.execute("DELETE FROM schema_version WHERE version = 1")
    index.execute("INSERT INTO schema_version VALUES (0, 'by hand', 0)")
    index.close()
    with pytest.raises(db.IndexUnusable,          # 1 replaced by 0; the later ones kept
                       match=r"records schema versions \[0(, \d+)*\], not \[1(, \d+)*\]"):
        backend.connect(tmp_path)


def test_files_that_are_no_pts_index_are_refused(tmp_path):
    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    with pytest.raises(db.IndexUnusable, match="an SQLite database but not a pts index"):
        db.connect(other)
    text = tmp_path / "notes.sqlite"
    text.write_text("these are my notes, not a database\n" * 100, encoding="utf-8")
    with pytest.raises(db.IndexUnusable, match="not a usable SQLite database"):
        db.connect(text)
    assert text.read_text(encoding="utf-8").startswith("these are my notes")
    with pytest.raises(db.IndexUnusable, match="is a folder"):
        db.connect(tmp_path)


def test_help_and_bad_arguments(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("PTS_INDEX", raising=False)
    with pytest.raises(SystemExit):
        main(["index", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for words in ("REPORTS_DIR/index.sqlite", "--index FILE|URL", "--full", "folders stay the "
                  "truth", "One transaction per run folder", "a second run changes nothing",
                  "postgresql://USER@HOST/DATABASE", "PTS_INDEX", "$PTS_INDEX if set",
                  "pip install -e '.[postgresql]'"):
        assert words in text, words
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert main(["index", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    assert "say which index holds them with --index FILE or URL" in capsys.readouterr().err
    assert main(["index", str(tmp_path / "a"), "--index", "mysql://lab:pw@db/pts"]) == 2
    err = capsys.readouterr().err
    assert ("mysql://lab:***@db/pts is not an index: an index is an SQLite file or a "
            "postgresql:// URL (from --index): give --index an SQLite file") in err
    assert "pw" not in err
    assert main(["index", str(tmp_path / "missing")]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert not (tmp_path / "a" / db.FILE_NAME).exists()


def test_processes_opening_a_new_index_at_once_all_get_it(tmp_path):
    """Several openers of one new index file at once (a run's live index and a dashboard's
    watcher, two runs on one REPORTS_DIR) all get it migrated: the switch to WAL that SQLite
    refuses at once with "database is locked" is tried again (db._set_up). Before: 2 of 40
    tries of four threads failed."""
    import threading

    failed = []
    for n in range(60):
        path = tmp_path / f"{n}" / db.FILE_NAME
        path.parent.mkdir()

        def open_it(path=path):
            try:
                db.connect(path).close()
            except db.IndexUnusable as exc:
                failed.append(str(exc))
        threads = [threading.Thread(target=open_it) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert failed == []
