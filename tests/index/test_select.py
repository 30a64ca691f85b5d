"""`compare` and `qualify` with runs chosen by a query on the results index (`--where
KEY=VALUE ... --index`, pts.index.select) instead of folders: the runs chosen are the ones
that match, oldest first; nothing, too many, a bad key, no index, a folder gone since it was
indexed: each refused (exit 2) with the fix. Five small synthetic runs, indexed once."""

import csv
import json

import pytest

from pts.cli.main import main
from pts.index import build, db, select
from tests.support.synthetic.runfactory import build_run

# run id: (model, serial, firmware, day of November 2026, finished)
LAB = {"r1": ("M", "S1", "GDC5A", 1, True), "r2": ("M", "S2", "GDC5A", 2, True),
       "r3": ("M", "S1", "GDC6B", 3, True), "r4": ("M", "S2", "GDC6B", 4, False),
       "r5": ("N", "S9", "GDC5A", 5, True)}
DATASHEET = '[[require]]\ntest="iops"\ncell="RND 4KiB 0/100"\nmetric="iops"\nat_least=40000\n'


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    base = tmp_path_factory.mktemp("select")
    reports = base / "reports"
    folders = {}
    for run_id, (model, serial, firmware, day, done) in LAB.items():
        folder = build_run(reports / f"{model}_{serial}", run_id, finished=done)
        info = json.loads((folder / "run.json").read_text())
        info["device"] |= {"model": model, "serial": serial, "firmware": firmware}
        info |= {"run_id": run_id, "started": f"2026-11-{day:02d}T12:00:00+00:00"}
        (folder / "run.json").write_text(json.dumps(info))
        folders[run_id] = str(folder.resolve())
    conn = db.connect(reports / db.FILE_NAME)
    assert len(build.update(conn, [reports]).added) == 5
    assert dict(conn.execute("SELECT run_id, state FROM runs").fetchall())["r4"] == "unfinished"
    conn.close()
    (base / "ds.toml").write_text(DATASHEET)
    return base, folders


def chosen(lab, *where, latest=None, most=10):
    base, folders = lab
    found, _ = select.choose(str(base / "reports"), list(where), most, latest)
    names = {f: r for r, f in folders.items()}
    return [names[f] for f in found]


def test_terms_choose_finished_runs_oldest_first(lab):
    assert chosen(lab, "model=M") == ["r1", "r2", "r3"]           # r4 unfinished
    assert chosen(lab, "model=M", "state=unfinished") == ["r4"]
    assert chosen(lab, "firmware=GDC5*") == ["r1", "r2", "r5"]
    with pytest.raises(select.SelectError, match="no indexed run matches"):
        chosen(lab, "firmware=gdc5*")                 # case as written, as '=' is
    assert chosen(lab, "serial=S1", "firmware=GDC6B") == ["r3"]
    assert chosen(lab, "model=M", latest=2) == ["r2", "r3"]
    assert chosen(lab, "test=iops", "host=testhost", "spec=pts-2.0.2-enterprise") == [
        "r1", "r2", "r3", "r5"]
    assert chosen(lab, "run=r2") == ["r2"]


def test_compare_by_query(lab, capsys, tmp_path):
    base, folders = lab
    out = tmp_path / "out"
    code = main(["compare", "--where", "model=M", "--where", "serial=S1", "--index",
                 str(base / "reports"), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert f"2 runs from the index {base / 'reports' / db.FILE_NAME}" in err
    assert folders["r1"] in err and folders["r3"] in err
    with (out / "compare.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["run_id"] for r in rows if r["cell"] == "RND 4KiB 0/100"] == ["r1", "r3"]
    assert (out / "compare.pdf").read_bytes().startswith(b"%PDF")


@pytest.mark.parametrize("argv, words", [
    (["--where", "model=M", "--max-runs", "2"],
     ["3 indexed runs match --where model=M (finished runs): compare takes at most 2",
      "M S2 firmware GDC5A, run r2", "--latest 2"]),
    (["--where", "model=Z"], ["no indexed run matches --where model=Z (finished runs)",
                              "--where state=unfinished", "python -m pts index"]),
    (["--where", "model=M", "--where", "firmware=GDC6B"],
     ["give at least two runs", "matches one more"]),
    (["--where", "colour=red"], ["unknown key 'colour'", "model, serial, firmware"]),
    (["--where", "model"], ["give KEY=VALUE"]),
    (["--where", "verdict=maybe"], ["verdict is 'compliant' or 'not compliant'"]),
    (["--latest", "1"], ["--latest chooses among the runs of a query"]),
])
def test_compare_refuses_with_the_fix(lab, capsys, tmp_path, argv, words):
    base, _ = lab
    assert main(["compare", *argv, "--index", str(base / "reports"), "-o",
                 str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert all(w in err for w in words), err
    assert not (tmp_path / "compare.pdf").exists()


def test_qualify_by_query(lab, capsys):
    base, _ = lab
    index, ds = ["--index", str(base / "reports")], ["--datasheet", str(base / "ds.toml")]
    assert main(["qualify", "--where", "model=M", "--where", "firmware=GDC6B", *index, *ds]) == 0
    assert "1 of 1 requirements met (M S1, run r3)" in capsys.readouterr().out
    assert main(["qualify", "--where", "model=M", *index, *ds]) == 2
    err = capsys.readouterr().err
    assert "3 indexed runs match --where model=M (finished runs): qualify judges one run" in err
    assert "--latest 1" in err
    assert main(["qualify", "--where", "model=M", "--latest", "1", *index, *ds]) == 0
    assert "(M S1, run r3)" in capsys.readouterr().out
    assert main(["qualify", "--where", "verdict=compliant", "--where", "model=N", *index,
                 *ds]) == 0
    assert "(N S9, run r5)" in capsys.readouterr().out
    assert main(["qualify", *ds]) == 2
    assert "give the run: a RUN_DIR, or a query" in capsys.readouterr().err
    assert main(["qualify", str(base), "--where", "model=M", *ds]) == 2
    assert "not both" in capsys.readouterr().err


def test_no_index_and_a_folder_gone(lab, capsys, tmp_path, monkeypatch):
    base, folders = lab
    monkeypatch.delenv("PTS_INDEX", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["compare", "--where", "model=M"]) == 2          # reports/index.sqlite: none
    err = capsys.readouterr().err
    assert "no results index at reports/index.sqlite" in err and "pts index" in err
    assert main(["qualify", "--where", "run=r1", "--index", str(tmp_path / "x.sqlite"),
                 "--ocp", "2.0"]) == 2
    assert f"no results index at {tmp_path / 'x.sqlite'}" in capsys.readouterr().err
    assert not (tmp_path / "x.sqlite").exists()                 # never made by a reader
    gone = base / "reports" / "N_S9"
    gone.rename(base / "elsewhere")
    try:
        assert main(["qualify", "--where", "run=r5", "--index", str(base / "reports"),
                     "--ocp", "2.0"]) == 2
        err = capsys.readouterr().err
        assert f"names run folders that are gone: {folders['r5']}" in err
        assert "python -m pts index REPORTS_DIR" in err
    finally:
        (base / "elsewhere").rename(gone)
