"""`python -m pts index`: add, update, drop, idempotent; folders in progress, broken or not
runs at all; an interrupted index leaves every folder's rows whole and the next one carries
on. Copies of tests/data/reference-run under a tmp report folder; each test against an
SQLite file and a PostgreSQL database (`backend`, tests/index/conftest.py)."""

import json
import shutil

import pytest

from pts.cli.main import main
from pts.index import build, db
from tests.support.helpers import DATA

REFERENCE = DATA / "reference-run"


def add_run(reports, name):
    folder = reports / "model_serial" / name
    shutil.copytree(REFERENCE, folder)
    return folder


def index(reports, capsys, backend, *more) -> tuple[str, str]:
    assert main(["index", str(reports), *backend.args(reports), *more]) == 0
    out = capsys.readouterr()
    return out.out, out.err


def rows_of(backend, reports, folder) -> dict:
    return {t: [r for r in rows if r[0] == str(folder.resolve())]
            for t, rows in backend.dump(reports).items()}


def test_add_again_update_drop(tmp_path, capsys, backend):
    reports = tmp_path / "reports"
    r1, r2 = add_run(reports, "r1"), add_run(reports, "r2")
    out, _ = index(reports, capsys, backend)
    assert "2 added, 0 updated, 0 dropped, 0 unchanged" in out and "2 runs indexed" in out
    first = backend.dump(reports)
    assert [len(first[t]) for t in ("runs", "tests", "figures")] == [2, 22, 302]

    out, _ = index(reports, capsys, backend)              # idempotent, and says so
    assert "nothing changed (0 added, 0 updated, 0 dropped, 2 unchanged" in out
    assert backend.dump(reports) == first

    # r2 stops in its last test: the xsr test_end is gone, so the test and the run are open
    ledger = r2 / "ledger.jsonl"
    lines = ledger.read_text(encoding="utf-8").splitlines(keepends=True)
    ledger.write_text("".join(x for x in lines if not ('"test_end"' in x and '"xsr"' in x)),
                      encoding="utf-8")
    out, _ = index(reports, capsys, backend)
    assert "0 added, 1 updated, 0 dropped, 1 unchanged" in out
    assert backend.one(reports, "SELECT state, ended_at FROM runs WHERE folder = ?",
                       str(r2.resolve())) == ("unfinished", None)
    assert backend.one(reports, "SELECT state, ended_at FROM tests WHERE folder = ? AND "
                       "name = 'xsr'", str(r2.resolve())) == ("incomplete", None)
    assert rows_of(backend, reports, r1) == {
        t: [r for r in first[t] if r[0] == str(r1.resolve())] for t in first}

    shutil.rmtree(r2)
    out, _ = index(reports, capsys, backend)
    assert "0 added, 0 updated, 1 dropped, 1 unchanged" in out and "1 runs indexed" in out
    assert rows_of(backend, reports, r2) == {"runs": [], "tests": [], "figures": []}
    assert backend.dump(reports) == {t: [r for r in first[t] if r[0] == str(r1.resolve())]
                                     for t in first}


def test_drops_only_under_the_folders_given(tmp_path, capsys, backend):
    """Two report folders in one index: indexing one never drops the other's rows."""
    a, b = tmp_path / "a", tmp_path / "b"
    add_run(a, "r1"), add_run(b, "r1")
    where = backend.url or str(tmp_path / "all.sqlite")
    assert main(["index", str(a), str(b), "--index", where]) == 0
    assert "2 added" in capsys.readouterr().out
    shutil.rmtree(a / "model_serial")
    assert main(["index", str(a), "--index", where]) == 0
    out = capsys.readouterr().out
    assert "0 added, 0 updated, 1 dropped, 0 unchanged" in out and "1 runs indexed" in out
    index_ = db.connect(where) if backend.url is None else backend.connect(a)
    assert index_.execute("SELECT root FROM runs").fetchall() == [(str(b.resolve()),)]
    index_.close()


def test_a_run_cut_mid_record_is_indexed_as_far_as_it_reads(tmp_path, capsys, backend):
    reports = tmp_path / "reports"
    r1 = add_run(reports, "r1")
    index(reports, capsys, backend)
    before = backend.dump(reports)
    with (r1 / "ledger.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"type": "point", "test": "iops", "round": 8, "rw_m')     # torn last line
    out, err = index(reports, capsys, backend)
    assert "1 updated" in out and err == ""
    after = backend.dump(reports)
    assert after["figures"] == before["figures"] and after["tests"] == before["tests"]
    notes = json.loads(backend.one(reports, "SELECT notes_json FROM runs")[0])
    assert any("torn last record skipped" in n for n in notes)


def test_broken_folders_never_stop_the_command(tmp_path, capsys, backend):
    reports = tmp_path / "reports"
    good, corrupt, no_json = (add_run(reports, n) for n in ("good", "corrupt", "nojson"))
    lines = (corrupt / "ledger.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    lines[100] = "{not json\n"
    (corrupt / "ledger.jsonl").write_text("".join(lines), encoding="utf-8")
    (no_json / "run.json").write_text("[1, 2]", encoding="utf-8")
    loose = reports / "loose"
    loose.mkdir()
    (loose / "ledger.jsonl").write_text("", encoding="utf-8")
    session = reports / "sessions" / "20261121T120000"
    session.mkdir(parents=True)
    (session / "session.json").write_text("{}", encoding="utf-8")
    out, err = index(reports, capsys, backend)
    assert "2 added, 0 updated, 0 dropped, 0 unchanged, 1 refused, 2 skipped" in out
    assert f"refused: {no_json.resolve()}: " in err and "does not hold a JSON object" in err
    assert f"skipped: {loose.resolve()}: ledger.jsonl without run.json" in err
    assert f"skipped: {session.resolve()}: a several-device session folder" in err
    assert f"indexed from run.json only: {corrupt.resolve()}: " in err and "line 101" in err
    state, error, model, serial, tests = backend.one(
        reports, "SELECT state, error, model, serial, test_count FROM runs WHERE folder = ?",
        str(corrupt.resolve()))
    assert (state, model, serial, tests) == ("unreadable", "Synthetic NVMe SSD",
                                              "SN-TEST-0042", 0)
    assert "line 101: corrupt ledger record" in error
    assert backend.one(reports, "SELECT COUNT(*) FROM tests WHERE folder = ?",
                       str(corrupt.resolve())) == (0,)
    assert backend.one(reports, "SELECT state FROM runs WHERE folder = ?",
                       str(good.resolve())) == ("finished",)
    # run again: the same folders refused and skipped, nothing changed
    out, _ = index(reports, capsys, backend)
    assert "nothing changed (0 added, 0 updated, 0 dropped, 2 unchanged, 1 refused" in out


def interrupt_at(monkeypatch, folder_number, count=30):
    """Ctrl-C while the figure rows of the `folder_number`-th folder written (0: the first)
    are inserted, after `count` of them."""
    real, calls = build.params, []

    def params(columns, found):
        rows = real(columns, found)
        if "metric" in columns:
            calls.append(1)
        if "metric" not in columns or len(calls) - 1 != folder_number:
            yield from rows
            return
        for n, row in enumerate(rows):
            if n == count:
                raise KeyboardInterrupt
            yield row

    monkeypatch.setattr(build, "params", params)


def consistent(backend, reports):
    """Nothing dangling: SQLite's own checks; on PostgreSQL (which enforces its keys
    always), no test or figure without its run and test."""
    index_ = backend.connect(reports)
    try:
        if backend.kind == "sqlite":
            assert index_.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert index_.execute("PRAGMA foreign_key_check").fetchall() == []
        assert index_.execute(
            "SELECT COUNT(*) FROM figures f LEFT JOIN tests t ON t.folder = f.folder AND "
            "t.name = f.test LEFT JOIN runs r ON r.folder = f.folder "
            "WHERE t.name IS NULL OR r.folder IS NULL").fetchone() == (0,)
    finally:
        index_.close()


def test_an_interrupted_index_leaves_whole_folders_and_the_next_carries_on(
        tmp_path, capsys, monkeypatch, backend):
    reports = tmp_path / "reports"
    r1, r2 = add_run(reports, "r1"), add_run(reports, "r2")
    index(reports, capsys, backend)
    before = backend.dump(reports)
    ledger = r2 / "ledger.jsonl"          # r2 changed, r3 new: both to write, in that order
    lines = ledger.read_text(encoding="utf-8").splitlines(keepends=True)
    ledger.write_text("".join(x for x in lines if not ('"test_end"' in x and '"xsr"' in x)),
                      encoding="utf-8")
    r3 = add_run(reports, "r3")
    argv = ["index", str(reports), *backend.args(reports)]

    interrupt_at(monkeypatch, 0)        # in r2's update: rolled back whole, its old rows kept
    with pytest.raises(KeyboardInterrupt):
        main(argv)
    assert backend.dump(reports) == before
    consistent(backend, reports)
    monkeypatch.undo()
    interrupt_at(monkeypatch, 1)        # in r3's addition: r2 done, r3 not there at all
    with pytest.raises(KeyboardInterrupt):
        main(argv)
    consistent(backend, reports)
    assert backend.one(reports, "SELECT state FROM runs WHERE folder = ?",
                       str(r2.resolve())) == ("unfinished",)
    assert rows_of(backend, reports, r3) == {"runs": [], "tests": [], "figures": []}
    monkeypatch.undo()
    capsys.readouterr()
    out, _ = index(reports, capsys, backend)
    assert "1 added, 0 updated, 0 dropped, 2 unchanged" in out and "3 runs indexed" in out
    assert backend.one(reports, "SELECT COUNT(*) FROM figures WHERE folder = ?",
                       str(r3.resolve())) == (151,)
    assert rows_of(backend, reports, r1) == {
        t: [r for r in before[t] if r[0] == str(r1.resolve())] for t in before}


def test_rows_the_schema_refuses_are_one_folders_problem(tmp_path, capsys, monkeypatch,
                                                          backend):
    """A folder whose rows break a key (here: every figure twice) is refused, rolled back;
    the other folders are indexed."""
    reports = tmp_path / "reports"
    add_run(reports, "r1"), add_run(reports, "r2")
    real = build.rows.figure_rows

    def twice(run):
        found = real(run)
        return found + found if run.folder.name == "r1" else found

    monkeypatch.setattr(build.rows, "figure_rows", twice)
    out, err = index(reports, capsys, backend)
    assert "1 added, 0 updated, 0 dropped, 0 unchanged, 1 refused" in out
    key = {"sqlite": "UNIQUE constraint failed",
           "postgresql": 'duplicate key value violates unique constraint "figures_pkey"'}
    assert f"r1: its rows break the index's schema ({key[backend.kind]}" in err
    assert backend.one(reports, "SELECT COUNT(*) FROM runs") == (1,)
    assert backend.one(reports, "SELECT COUNT(*) FROM figures") == (151,)
