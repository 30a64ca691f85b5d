"""--power's windows of the tests without rounds of points (issue 51 §3) on the read side: the
reference run with phase_power records of a known W for WSAT's run and each sample, HIR's wait
states (their wait and baseline runs) and XSR's groups (tests/support/powered_run.add_phases).
Their figures come out as worked out by hand on the Power page, in the read model's records
(WSAT's final window W and IOPS/W, each wait state's, each group's) and from there in the
catalogue's rows of the index, OCPTV and the CSV export; the reference run shows none."""

from __future__ import annotations

import csv
import io
import math

import pytest

from pts.export import cli as export_cli
from pts.export import ocptv
from pts.index import rows as index_rows
from pts.report.pages import power as power_page
from pts.results import records
from pts.stored import figures
from pts.stored import power as stored_power
from pts.stored.data import load_run
from tests.support import powered_run
from tests.support.powered_run import REFERENCE, phase_watts

PHASE_METRICS = {"wsat": {"power_w", "iops_per_w"}, "hir": {"wait_power_w", "wait_iops_per_w"},
                 "xsr": {"power_w", "mbps_per_w"}}


@pytest.fixture(scope="module")
def phased(tmp_path_factory):
    folder = tmp_path_factory.mktemp("phased") / "run"
    return load_run(powered_run.add_phases(powered_run.build(folder)))


def the_test(run, name):
    return next(t for t in run.tests if t.name == name)


def test_the_power_page_lists_each_phase_with_its_figure_per_watt(phased):
    wsat = the_test(phased, "wsat")
    page = stored_power.page(phased, wsat)
    assert page.cells == () and page.rounds == ()
    rows = {(p, n): (j, w, cover, per) for p, n, j, w, cover, per in page.phases}
    assert rows["run", 1][1] == 4.5 and rows["run", 1][3] == pytest.approx(
        wsat.result["iops"] / 4.5)
    for s in wsat.samples:
        j, w, cover, per = rows["sample", s.number]
        assert (w, cover) == (phase_watts("sample", s.number), 1.0)
        assert per == pytest.approx(s.iops / w)
    assert page.sources[0].mean_w == 4.5                 # over the run, the whole of it
    xsr = the_test(phased, "xsr")
    groups = {n: per for p, n, _, _, _, per in stored_power.page(phased, xsr).phases}
    tps = {g: [r.tp_mbps for r in xsr.recovery if isinstance(r, records.XsrInterval)
               and r.group == g] for g in groups}
    assert groups == {g: pytest.approx(math.fsum(v) / len(v) / phase_watts("group", g))
                      for g, v in tps.items()}
    text = " ".join(getattr(f, "text", "") for f in power_page.build(phased, wsat))
    assert "Power: per phase (emulated)" in text and "Power: per cell" not in text


def test_the_records_hold_the_figures_the_catalogue_reads(phased):
    wsat = the_test(phased, "wsat")
    a, b = wsat.result["ss_window"]
    window = [s for s in wsat.samples if a <= s.number <= b]
    joules = math.fsum(phase_watts("sample", s.number) * (s.end_s - s.start_s) for s in window)
    seconds = math.fsum(s.end_s - s.start_s for s in window)
    assert wsat.result["power_w"] == pytest.approx(joules / seconds)
    assert wsat.result["iops_per_w"] == pytest.approx(
        math.fsum(s.iops * (s.end_s - s.start_s) for s in window) / joules)
    hir = the_test(phased, "hir")
    states = [r for r in hir.recovery if isinstance(r, records.HirState)]
    assert states and all(s.wait_power_w == phase_watts("wait", s.state) and
                          s.wait_iops_per_w == pytest.approx(s.wait_iops / s.wait_power_w)
                          for s in states)
    assert all(isinstance(r, records.HirState) for r in hir.records_of(records.HirState))
    indexed = index_rows.figure_rows(phased)
    for name, metrics in PHASE_METRICS.items():
        assert metrics <= {r["metric"] for r in indexed if r["test"] == name}, name
    (w,) = [r["value"] for r in indexed if r["test"] == "wsat" and r["metric"] == "power_w"]
    assert w == pytest.approx(wsat.result["power_w"])
    by_state = {r["cell"]: r["value"] for r in indexed if r["metric"] == "wait_power_w"}
    assert sorted(by_state.values()) == sorted(phase_watts("wait", s.state) for s in states)
    names = {m["name"] for line in ocptv.lines(phased)
             for m in [line.get("testStepArtifact", {}).get("measurement", {})] if m}
    assert any(n.startswith("xsr group 2 ") and n.endswith(" mbps_per_w") for n in names)
    assert any(n.startswith("hir state 1 ") and n.endswith(" wait_iops_per_w") for n in names)
    rows = list(csv.DictReader(io.StringIO(export_cli.csv_text(phased))))
    assert {r["metric"] for r in rows if r["test"] == "wsat"} >= PHASE_METRICS["wsat"]
    assert figures.better("xsr", "mbps_per_w") == figures.HIGHER
    assert figures.better("hir", "wait_power_w") == figures.NONE


def test_a_run_without_power_shows_none_of_them():
    run = load_run(REFERENCE)
    for name, metrics in PHASE_METRICS.items():
        test = the_test(run, name)
        assert stored_power.page(run, test) is None
        assert not metrics & {f.metric for f in figures.of(test, figures.INDEX)}, name
