"""The rwsw-replay and rwsw-dirth pages (issue 32 §4) of a synthetic RWSW run
(tests/support/synthetic/rwsw_replay_dirth.py): every number on the replay's step table and
the DIRTH TC x QD and operating-point tables compared with the stored records, the in-situ
overlay, the declared histogram choice, the SNIA header of a test after its
"-preconditioning" test, the HTML report, and `python -m pts compare`'s rows."""

from __future__ import annotations

import math
import re

import pytest

from pts.compare.data import compare, rwsw_rows
from pts.report.document import build_html
from pts.report.pages import snia_header
from pts.stored import rwsw_replay
from pts.stored.data import load_run
from tests.support.helpers import (
    ledger_by_test,
    of,
    page_headed,
    report_page_texts,
    table_row,
)
from tests.support.synthetic import rwsw_replay_dirth

pytestmark = pytest.mark.needs("pdftotext")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return rwsw_replay_dirth.build(tmp_path_factory.mktemp("rwsw-rd"), step_miss=3.0,
                                   log_mismatch=3)


@pytest.fixture(scope="module")
def pages(folder) -> list[str]:
    return report_page_texts(folder)


@pytest.fixture(scope="module")
def ledger(folder):
    return ledger_by_test(folder)


def num(cell: str) -> float:
    return float(cell.replace(",", ""))


def close(cell: str, value: float) -> bool:
    return math.isclose(num(cell), value, rel_tol=5e-4)


def test_replay_step_table_is_the_point_records(pages, ledger):
    text = page_headed(pages, "Replay Steps")
    points = of(ledger["rwsw-replay"], "point")
    assert len(points) == 3
    for p in points:
        cells = table_row(text, str(p["step"]))
        assert [cells[0], cells[1], cells[2]] == [f"{p['step_seconds']:g}",
                                                  str(p["replay_seconds"]),
                                                  str(p["oio_target"])]
        assert close(cells[3], p["oio_achieved"]) and close(cells[4], p["iops"])
        assert close(cells[6], p["lat_mean_us"])
        if p["insitu_iops"] is None:
            assert (cells[5], cells[7]) == ("n/a", "n/a")
        else:
            assert close(cells[5], p["insitu_iops"])
            assert close(cells[7], p["insitu_rt_mean_ms"] * 1000)
        # hold "iolog": the shares are those of the replayed log (*), within tolerance only
        # when that log's I/Os and bytes per direction are fio's (step 3's writes are not)
        assert cells[8] == ("yes*" if p["share_miss_pts"] <= 2.0 and p["step"] != 3
                            else "NO*")
    # totals: IOPS time-weighted, RT I/O-weighted; in-situ over the steps that have figures
    secs = sum(p["replay_seconds"] for p in points)
    ios = sum(p["iops"] * p["replay_seconds"] for p in points)
    replay = table_row(text, "Replay total")
    assert replay[0] == f"{secs:g}" and close(replay[1], ios / secs)
    assert close(replay[2], sum(p["lat_mean_us"] * p["iops"] * p["replay_seconds"]
                                for p in points) / ios)
    had = [p for p in points if p["insitu_iops"] is not None]
    insitu = table_row(text, "In-situ total")
    w = sum(p["insitu_iops"] * p["step_seconds"] for p in had)
    assert insitu[0] == f"{sum(p['step_seconds'] for p in had):g}"
    assert close(insitu[1], w / sum(p["step_seconds"] for p in had))
    assert close(insitu[2], sum(p["insitu_rt_mean_ms"] * 1000 * p["insitu_iops"]
                                * p["step_seconds"] for p in had) / w)
    flat = " ".join(text.split())
    assert "the capture over steps 1, 3; step 2 of the ATW recorded no in-situ figures" in flat
    assert "DECLARED: the replay did not reproduce its steps' shares within 2 points in " \
           "step 2 (max miss 3.00)." in flat
    assert "* steps 1, 2, 3: the shares of the replayed log (the part of the step's iolog fio " \
           "completed; one fio job cannot tell the streams apart), its I/Os and bytes per " \
           "direction compared with fio's" in flat
    assert "DECLARED: fio's I/Os or bytes per direction are not those of the replayed log in " \
           "step 3: the shares of the log are not what the drive was given." in flat


def test_replay_overlay_pages_and_no_convergence_page(pages, folder, ledger):
    for name in ("IOPS per Step", "Response Time per Step"):
        text = " ".join(page_headed(pages, f"Replay vs In-Situ: {name}").split())
        assert "One point per capture step, in the capture's order" in text
        assert "step 2 of the ATW recorded no in-situ figures" in text
    # what the overlay plots: per step the replay's figures and the ATW step's in-situ ones
    test = next(t for t in load_run(folder).tests if t.name == "rwsw-replay")
    steps = of(ledger["rwsw-replay"], "test_start")[0]["parameters"]["steps"]
    points = of(ledger["rwsw-replay"], "point")
    assert [(r.iops, r.lat_mean_us, r.insitu_iops, r.insitu_rt_us)
            for r in rwsw_replay.steps(test)] == [
        (p["iops"], p["lat_mean_us"], s["insitu_iops"],
         None if s["insitu_rt_mean_ms"] is None else s["insitu_rt_mean_ms"] * 1000)
        for p, s in zip(points, steps, strict=True)]
    assert not any(re.search(r"RWSW Replay-Native — Steady State Convergence", p)
                   for p in pages)


def _grid(recs) -> dict[tuple[int, int], dict[str, float]]:
    first, last = of(recs, "test_end")[-1]["window"]
    acc: dict = {}
    for p in of(recs, "point"):
        if first <= p["round"] <= last:
            acc.setdefault((p["thread_count"], p["queue_depth"]), []).append(p)
    return {k: {f: sum(p[f] for p in v) / len(v) for f in ("iops", "lat_mean_us",
                                                           "lat_max_us", "sys_cpu_pct")}
            for k, v in acc.items()}


def test_dirth_tc_x_qd_table_is_the_window_means(pages, ledger):
    grid = _grid(ledger["rwsw-dirth"])
    text = page_headed(pages, "All Points")
    assert len(grid) == 4
    for (tc, qd), v in grid.items():
        line = next(c for c in (re.split(r"\s{2,}", x.strip()) for x in text.splitlines())
                    if c[:2] == [str(tc), str(qd)])
        assert close(line[2], v["iops"]) and close(line[3], v["lat_mean_us"])
        assert close(line[4], v["lat_max_us"])
    cpu = page_headed(pages, "System CPU Utilisation (%)")
    for tc in (2, 1):
        assert [num(c) for c in table_row(cpu, f"TC{tc}")] == pytest.approx(
            [grid[(tc, qd)]["sys_cpu_pct"] for qd in (2, 1)], rel=5e-4)
    assert "Demand Intensity: ART vs IOPS" in " ".join(pages)


def test_dirth_operating_points_histograms_and_the_declared_choice(pages, ledger):
    recs = ledger["rwsw-dirth"]
    text = page_headed(pages, "Operating Points")
    hists = {h["name"]: h for h in of(recs, "response_histogram")}
    for o in of(recs, "operating_point"):
        h = hists[o["name"]]
        cells = table_row(text, o["name"])
        assert cells[0] == f"TC{o['thread_count']}/QD{o['queue_depth']}"
        assert close(cells[1], o["iops"]) and close(cells[2], o["lat_mean_us"])
        assert close(cells[3], h["iops"]) and close(cells[4], h["lat_mean_us"])
        assert close(cells[5], h["lat_max_us"])
        page_headed(pages, f"Response Time Histogram: {o['name']} "
                    f"(TC{o['thread_count']}/QD{o['queue_depth']})")
    flat = " ".join(text.split())
    assert "each operating point's histogram is the json+ bins of its own demand point in " \
           "the last round measured" in flat
    assert "[rwsw_dirth] histograms = 'last-round', a reading" in flat
    assert "pre-write" not in flat.replace("no pre-write", "")


def test_header_reads_the_preconditioning_test(folder, pages):
    run = load_run(folder)
    replay = next(t for t in run.tests if t.name == "rwsw-replay")
    setup = dict(snia_header.cells(run, replay)[2])
    assert setup["Purge"] == "nvme-format (under rwsw-replay-preconditioning)"
    assert setup["Pre-Condition 2"].startswith("rwsw-replay-preconditioning: the ATW at TC/QD "
                                               "2/2 (TOIO 4), SS rounds 3..7")
    dirth = next(t for t in run.tests if t.name == "rwsw-dirth")
    test_rows = dict(snia_header.cells(run, dirth)[3])
    assert (test_rows["TC (demand)"], test_rows["Histograms"]) == ("2, 1", "last-round")
    # the family comes from the name's registry entry, not a "-precondition" suffix or a
    # continues_from parameter
    odd = dataclass_replace(replay, name="rwsw-replay-precondition",
                            parameters=dict(replay.parameters, continues_from="x"))
    assert snia_header.family(odd) == "rwsw"
    assert snia_header.family(dataclass_replace(replay, name="dirth-precondition")) == \
        "dirth-cbw-precondition"


def dataclass_replace(test, **changes):
    import dataclasses
    return dataclasses.replace(test, **changes)


def test_a_long_replay_fits_its_setup_table(folder):
    """A native-length replay records hundreds of steps: they are the Replay Steps table's
    rows, not one "Parameter steps" cell (a cell taller than a page stopped the whole report:
    reportlab's LayoutError on a 25-step replay); an unknown parameter is cut to a cell."""
    from pts.report.pages import summary
    run = load_run(folder)
    (test,) = [t for t in run.tests if t.name == "rwsw-replay"]
    steps = test.parameters["steps"] * 100
    test.parameters.update(steps=steps, future_list=list(range(5000)))
    rows = dict(summary.test_setup_rows(run, test))
    assert "Parameter steps" not in rows, rows.get("Parameter steps", "")[:200]
    cell = rows["Parameter future list"]
    whole = summary.fmt.text(list(range(5000)))
    assert cell.startswith(whole[:summary.CELL_CHARS]) and len(cell) < summary.CELL_CHARS + 120
    assert f"({len(whole):,} characters; the whole value is in" in cell


def test_html_report_has_the_pages(folder):
    html = build_html(load_run(folder))
    for heading in ("Replay vs In-Situ: IOPS per Step", "Replay Steps", "All Points",
                    "Demand Intensity: ART vs IOPS", "Operating Points",
                    "Response Time Histogram: MaxIOPS (TC2/QD2)"):
        assert heading in html


def test_compare_rows_are_each_runs_steps_and_points(tmp_path):
    a = rwsw_replay_dirth.build(tmp_path, "a", serial="SN-A")
    b = rwsw_replay_dirth.build(tmp_path, "b", scale=0.5, serial="SN-B")
    c = compare([a, b])
    assert {"rwsw-replay", "rwsw-dirth"} <= set(c.common)
    replay = {r.label: r for r in rwsw_rows(c.tests("rwsw-replay"))}
    points = [{p["step"]: p for p in of(ledger_by_test(f)["rwsw-replay"], "point")}
              for f in (a, b)]
    for step in (1, 2, 3):
        assert replay[f"step {step} IOPS"].values == tuple(p[step]["iops"] for p in points)
        assert replay[f"step {step} ART"].values == tuple(p[step]["lat_mean_us"]
                                                          for p in points)
        assert math.isclose(replay[f"step {step} IOPS"].diffs[1], -50.0)
    dirth = {r.label: r for r in rwsw_rows(c.tests("rwsw-dirth"))}
    grids = [_grid(ledger_by_test(f)["rwsw-dirth"]) for f in (a, b)]
    assert len(dirth) == 8
    for (tc, qd) in grids[0]:
        assert dirth[f"TC{tc}/QD{qd} IOPS"].values == pytest.approx(
            tuple(g[(tc, qd)]["iops"] for g in grids))
