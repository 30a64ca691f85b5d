"""A new figure is added in one place (issue 48 §1): one row added to the figure catalogue
(pts.stored.figures, in a temporary registry the fixture restores) and the results index,
`history`, the CSV export, the OCPTV export and `compare` all show it, read the way the row
says, with the row's name, unit and better direction. And a test family the catalogue does not
know is an error naming it and the fix in every reader, never a fallback to IOPS.

The runs: four of tests/support/synthetic/history_lab.py's (IOPS tests; two of firmware FW-A
and two of FW-B, RND 4KiB 0/100 40000 / 40400 IOPS on FW-A and 36000 / 36800 on FW-B, its
points' MRT 1280e6 / IOPS us: higher on FW-B), built once per module.
"""

from __future__ import annotations

import csv
import io
from dataclasses import replace

import pytest

from pts.cli.main import main
from pts.compare import cli as compare_cli
from pts.compare.data import compare_views
from pts.export import cli as export_cli
from pts.export import ocptv
from pts.index import build, db, history
from pts.index import rows as index_rows
from pts.stored import figures
from pts.stored.cells import cell_label, window_cells
from pts.stored.data import load_run
from tests.support.synthetic.history_lab import LAB_X, lab_run

W = ("0/100", 4096)
IOPS = {"FW-A": (40000.0, 40400.0), "FW-B": (36000.0, 36800.0)}
# The new figure: the IOPS test's points' maximum response time per cell (their lat_max_us),
# under a name no reader knows (so it can only come from this row).
NEW = figures.Figure("iops", "mrt_us", "Maximum response time (MRT)", "us", figures.LOWER,
                     figures.CELL, "lat_max_us",
                     frozenset({figures.INDEX, figures.CSV, figures.OCPTV, figures.COMPARE}))


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The four runs under a REPORTS_DIR (not indexed: each test indexes under its catalogue)."""
    root = tmp_path_factory.mktemp("catalogue") / "reports"
    day = 1
    for firmware, values in IOPS.items():
        for k, v in enumerate(values):
            lab_run(root, LAB_X, f"SN-{k + 1}", firmware, day, {W: v})
            day += 1
    return root


@pytest.fixture
def catalogue():
    """A temporary registry: the rows as they are, to edit; the module's restored after."""
    kept = figures.CATALOGUE
    try:
        yield kept
    finally:
        figures.CATALOGUE = kept


def folders(lab) -> list:
    return sorted(p.parent for p in lab.rglob("run.json"))


def index_of(lab, tmp_path):
    conn = db.connect(tmp_path / db.FILE_NAME)
    summary = build.update(conn, [lab])
    assert len(summary.added) == 4, summary.line()
    return conn


def readers(lab, tmp_path) -> dict:
    """Every output's figures named "mrt_us" (metric name -> values) for the first run, and
    history's over the four."""
    run = load_run(folders(lab)[0])
    conn = index_of(lab, tmp_path)
    try:
        index = {r["cell"]: r for r in conn.rows("SELECT * FROM figures WHERE metric = ? AND "
                                                 "folder = ?", ("mrt_us", str(run.folder)))}
        h = history.history(conn, LAB_X, ("FW-A", "FW-B"), level=0.5)
    finally:
        conn.close()
    test = next(t for t in run.tests if t.name == "iops")
    csv_rows = [r for r in csv.DictReader(io.StringIO(export_cli.csv_text(run)))
                if r["metric"] == "mrt_us"]
    lines = [x["testStepArtifact"]["measurement"] for x in ocptv.lines(run)
             if "measurement" in x.get("testStepArtifact", {})]
    ocptv_found = {m["name"][:-len(" mrt_us")]: m for m in lines
                   if m["name"].endswith(" mrt_us")}
    comparison = compare_views([run, load_run(folders(lab)[2])])
    compared = [r for r in csv.DictReader(io.StringIO(compare_cli.to_csv(comparison)))
                if r["metric"] == "mrt_us"]
    return {"test": test, "index": index, "csv": csv_rows, "ocptv": ocptv_found,
            "compare": compared, "history": [v for v in h.verdicts if v.metric == "mrt_us"]}


def test_a_figure_added_to_the_catalogue_is_in_every_output(lab, tmp_path, catalogue):
    figures.CATALOGUE = (*catalogue, NEW)
    found = readers(lab, tmp_path)
    test = found["test"]
    want = {cell_label(test, c.rw_mix, c.block_size): c.mean
            for c in window_cells(test, "lat_max_us") if not c.na}
    assert len(want) >= 6 and want["RND 4KiB 0/100"] == pytest.approx(1280e6 / 40000)
    # the index (and so the dashboard): one row per cell, the row's unit, the window mean
    assert {c: (r["value"], r["unit"], r["shown"]) for c, r in found["index"].items()
            if r["shown"] == "ok"} == {c: (v, "us", "ok") for c, v in want.items()}
    # the CSV export
    assert {r["cell"]: (float(r["steady_state"]), r["unit"]) for r in found["csv"]
            if r["steady_state"] != "N/A"} == {c: (v, "us") for c, v in want.items()}
    # OCPTV: a measurement per cell
    assert {c: (m["value"], m["unit"]) for c, m in found["ocptv"].items()} == \
        {c: (v, "us") for c, v in want.items()}
    # compare: both runs' values per cell
    assert {r["cell"] for r in found["compare"]} >= set(want)
    assert len(found["compare"]) == 2 * len({r["cell"] for r in found["compare"]})
    # history: the figure over the four runs, judged by the row's better direction: the MRT
    # is higher on FW-B, and lower is better
    (w,) = [v for v in found["history"] if v.cell == "RND 4KiB 0/100"]
    assert (w.unit, w.a.n, w.b.n, w.verdict) == ("us", 2, 2, history.REGRESSED), w
    assert w.a.mean == pytest.approx((1280e6 / 40000 + 1280e6 / 40400) / 2)


def test_without_the_row_no_output_has_it(lab, tmp_path, catalogue):
    found = readers(lab, tmp_path)
    assert not any(found[k] for k in ("index", "csv", "ocptv", "compare", "history"))


def test_the_row_s_better_direction_decides_history(lab, tmp_path, catalogue):
    figures.CATALOGUE = (*catalogue, replace(NEW, better=figures.HIGHER))
    (w,) = [v for v in readers(lab, tmp_path)["history"] if v.cell == "RND 4KiB 0/100"]
    assert w.verdict == history.IMPROVED


def test_an_unknown_family_is_an_error_naming_it_never_iops(lab, tmp_path, catalogue, capsys):
    figures.CATALOGUE = tuple(f for f in catalogue if f.family != "iops")
    folder = folders(lab)[0]
    with pytest.raises(figures.UnknownFamily) as e:
        figures.of("iops", figures.CSV)
    assert "no family 'iops'" in str(e.value) and "pts/stored/figures.py" in str(e.value)
    for argv in (["export", str(folder), "--csv"], ["export", str(folder), "--ocptv"],
                 ["compare", str(folder), str(folders(lab)[1]), "-o", str(tmp_path / "c")]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "test 'iops': the figure catalogue has no family 'iops'" in err, (argv, err)
    conn = db.connect(tmp_path / db.FILE_NAME)
    try:
        build.update(conn, [lab])
        errors = [r["error"] for r in conn.rows("SELECT error FROM runs")]
    finally:
        conn.close()
    assert len(errors) == 4 and all("no family 'iops'" in (x or "") for x in errors), errors


def test_a_row_of_a_kind_no_reader_knows_is_an_error_naming_it(lab, catalogue):
    figures.CATALOGUE = (*catalogue, replace(NEW, read="nosuch_kind"))
    run = load_run(folders(lab)[0])
    for output in (lambda: index_rows.figure_rows(run), lambda: export_cli.csv_text(run),
                   lambda: ocptv.lines(run), lambda: compare_cli.to_csv(compare_views([run, run]))):
        with pytest.raises(ValueError, match="kind.s. of read nosuch_kind have no reader in"):
            output()
