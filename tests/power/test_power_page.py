"""The read side of --power (issue 51 §3) on a constructed run: the reference run
(tests/data/reference-run) with a point_power record of a known mean W for each IOPS point
(5 W + 0.1 W x the point's index, one gap in one window point) and two power_source
records. Its cells' W and IOPS/W (pts.stored.power, the figure catalogue's rows) come out as
worked out by hand, in the index, the CSV and OCPTV exports and compare; the Power page is
built, naming each source with what it measures and its interval, the gap shown; and the
reference run itself (no --power) shows none of them."""

from __future__ import annotations

import csv
import io

import pytest

from pts.compare import cli as compare_cli
from pts.compare import pdf as compare_pdf
from pts.compare.data import compare_views, compared
from pts.export import cli as export_cli
from pts.export import ocptv
from pts.index import rows as index_rows
from pts.report.pages import power as power_page
from pts.report.pages.registry import pages_for
from pts.stored import figures
from pts.stored import power as stored_power
from pts.stored.cells import window_cells
from pts.stored.data import load_run
from tests.support import powered_run
from tests.support.powered_run import REFERENCE, watts

POWER_METRICS = {"power_w", "energy_j", "iops_per_w"}


@pytest.fixture(scope="module")
def powered(tmp_path_factory):
    return load_run(powered_run.build(tmp_path_factory.mktemp("powered") / "run"))


def iops_test(run):
    return next(t for t in run.tests if t.name == "iops")


def test_cells_hold_w_and_iops_per_w_as_worked_out_by_hand(powered):
    test = iops_test(powered)
    assert test.window_rounds
    for iops, w, per in zip(window_cells(test, "iops"), window_cells(test, "power_w"),
                            window_cells(test, "iops_per_w"), strict=True):
        if iops.na:
            assert w.na and per.na
            continue
        index = next(p.index for p in test.points
                     if (p.rw_mix, p.block_size) == (iops.rw_mix, iops.block_size))
        assert w.mean == pytest.approx(watts(index))       # the FIRST source's
        assert per.mean == pytest.approx(iops.mean / watts(index))


def test_the_catalogue_rows_reach_the_index_csv_ocptv_and_compare(powered):
    test = iops_test(powered)
    assert POWER_METRICS <= {f.metric for f in figures.of(test, figures.INDEX)}
    indexed = [r for r in index_rows.figure_rows(powered) if r["metric"] == "iops_per_w"]
    cell = window_cells(test, "iops_per_w")[-1]
    assert any(r["value"] == pytest.approx(cell.mean) for r in indexed)
    rows = list(csv.DictReader(io.StringIO(export_cli.csv_text(powered))))
    assert {r["metric"] for r in rows if r["test"] == "iops"} >= POWER_METRICS
    names = {m["name"] for line in ocptv.lines(powered)
             for m in [line.get("testStepArtifact", {}).get("measurement", {})] if m}
    assert any(n.endswith(" iops_per_w") for n in names)
    assert POWER_METRICS <= {f.metric for f in compared(test)}
    comparison = compare_views([powered, powered])
    assert {r["metric"] for r in csv.DictReader(io.StringIO(compare_cli.to_csv(comparison)))
            } >= POWER_METRICS
    titles = [getattr(f, "text", "") for f in compare_pdf.test_pages(comparison, "iops")]
    assert "mean power (W), side by side" in titles and "IOPS/W, side by side" in titles
    # history's verdicts: more I/O per watt is better; W and J have no better direction
    assert [figures.better("iops", m) for m in ("iops_per_w", "power_w", "energy_j")] == \
        [figures.HIGHER, figures.NONE, figures.NONE]
    assert figures.better("throughput-128k", "mbps_per_w") == figures.HIGHER


def test_the_power_page_names_each_source_and_shows_the_gap(powered):
    test = iops_test(powered)
    page = stored_power.page(powered, test)
    assert [(s.name, s.measures, s.interval_s) for s in page.sources] == \
        [("emulated", "drive", 0.5), ("ipmi:10.0.0.5,user=admin", "server", 1.0)]
    assert page.sources[0].with_gaps == 1 and page.sources[0].uncovered_s == pytest.approx(2.0)
    assert page.sources[1].mean_w == pytest.approx(200.0)
    assert page.gaps == (("emulated", 4, 0, [[10.0, 12.0]]),)
    tracked = [r for r in page.rounds if r[1]]            # the window's rounds
    assert tracked and all(r[4] is not None and r[5] is not None for r in tracked)
    assert page.round_energy[0] == (1, 1 in test.window_rounds, 501.0, 5.01, 1.0)
    assert len(page.round_energy) == len(test.rounds)
    story = power_page.build(powered, test)
    text = " ".join(getattr(f, "text", "") for f in story)
    assert "Power: sources" in text and "Power: gaps" in text
    assert "Power: energy per round (emulated)" in text
    report = [getattr(f, "text", "") for f in pages_for(powered, test)]
    assert "Power: per cell, measurement window" in report        # registered for the test


def test_a_run_without_power_shows_none_of_it():
    run = load_run(REFERENCE)
    test = iops_test(run)
    assert stored_power.page(run, test) is None and power_page.build(run, test) == []
    assert not POWER_METRICS & {f.metric for f in figures.of(test, figures.INDEX)}
    assert not POWER_METRICS & {r["metric"] for r in index_rows.figure_rows(run)}
