"""The index's database: WAL, numbered migrations each applied once, and what is refused
with the reason and the fix (a newer schema, a file that is not a pts index or not SQLite,
versions out of order); `python -m pts index --help` and its bad input."""

import sqlite3

import pytest

from pts.cli.main import main
from pts.index import db
from pts.index.schema import MIGRATIONS, VERSION, Migration


def test_a_new_index_is_wal_with_every_migration_once(tmp_path):
    path = tmp_path / "index.sqlite"
    conn = db.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert conn.execute("PRAGMA foreign_keys").fetchone() == (1,)
    assert db.versions(conn) == [m.version for m in MIGRATIONS] == list(range(1, VERSION + 1))
    tables = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"schema_version", "runs", "tests", "figures"} <= tables
    conn.close()
    conn = db.connect(path)                  # opened again: nothing applied twice
    assert conn.execute("SELECT COUNT(*) FROM schema_version").fetchone() == (VERSION,)
    conn.close()


def test_a_later_migration_is_applied_once_on_an_older_index(tmp_path):
    path = tmp_path / "index.sqlite"
    db.connect(path).close()
    newer = (*MIGRATIONS, Migration(VERSION + 1, "a column more",
                                    ("ALTER TABLE runs ADD COLUMN sample TEXT",)))
    conn = db.connect(path, newer)
    assert db.versions(conn) == list(range(1, VERSION + 2))
    assert "sample" in {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
    conn.close()
    conn = db.connect(path, newer)           # ALTER TABLE twice would raise: applied once
    assert db.versions(conn) == list(range(1, VERSION + 2))
    conn.close()


def test_a_failing_migration_leaves_the_index_as_it_was(tmp_path):
    path = tmp_path / "index.sqlite"
    db.connect(path).close()
    broken = (*MIGRATIONS, Migration(VERSION + 1, "half done", (
        "ALTER TABLE runs ADD COLUMN sample TEXT", "ALTER TABLE nowhere ADD COLUMN x TEXT")))
    with pytest.raises(db.IndexUnusable, match="no such table: nowhere"):
        db.connect(path, broken)
    conn = db.connect(path)
    assert db.versions(conn) == list(range(1, VERSION + 1))
    assert "sample" not in {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
    conn.close()


def test_an_index_from_a_newer_snia_pts_is_refused(tmp_path, capsys):
    reports = tmp_path / "reports"
    reports.mkdir()
    path = reports / db.FILE_NAME
    conn = db.connect(path)
    conn.execute("INSERT INTO schema_version VALUES (?, 'from the future', 0)", (VERSION + 5,))
    conn.close()
    with pytest.raises(db.IndexUnusable) as exc:
        db.connect(path)
    assert f"schema version {VERSION + 5}, newer than this snia-pts knows (up to " \
        f"{VERSION})" in str(exc.value) and "move" in str(exc.value)
    assert main(["index", str(reports)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"index: {path} has schema version {VERSION + 5}")
    conn = sqlite3.connect(path)             # refused, not touched: no rows, same versions
    assert conn.execute("SELECT MAX(version) FROM schema_version").fetchone() == (VERSION + 5,)
    assert conn.execute("SELECT COUNT(*) FROM runs").fetchone() == (0,)
    conn.close()


def test_versions_out_of_order_are_refused(tmp_path):
    path = tmp_path / "index.sqlite"
    conn = db.connect(path)
    conn.execute("DELETE FROM schema_version WHERE version = 1")
    conn.execute("INSERT INTO schema_version VALUES (0, 'by hand', 0)")
    conn.close()
    with pytest.raises(db.IndexUnusable, match=r"records schema versions \[0\], not \[1\]"):
        db.connect(path)


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


def test_help_and_bad_arguments(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["index", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for words in ("REPORTS_DIR/index.sqlite", "--index FILE", "--full", "folders stay the "
                  "truth", "One transaction per run folder", "a second run changes nothing"):
        assert words in text, words
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert main(["index", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    assert "say which file holds their index with --index FILE" in capsys.readouterr().err
    assert main(["index", str(tmp_path / "a"), "--index", "postgresql://lab/pts"]) == 2
    assert "only an SQLite file is supported so far" in capsys.readouterr().err
    assert main(["index", str(tmp_path / "missing")]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert not (tmp_path / "a" / db.FILE_NAME).exists()
