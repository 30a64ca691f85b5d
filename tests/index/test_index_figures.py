"""The index's rows of tests/data/reference-run against pts.stored's own reading of the same
folder (and the export's, another reader of pts.stored): the run, its tests, and each
headline figure as the report shows it. The run is copied, indexed and loaded once per test
process (conftest: indexed_reference)."""

import json

import pytest

from pts.export.cli import rows as export_rows
from pts.index import rows
from pts.stored import host_ceiling, latency_qos, waf
from pts.stored.cells import window_cells
from tests.support.index_reference import copy_reference


@pytest.fixture
def indexed(indexed_reference):
    return indexed_reference


def figures(conn, test=None) -> dict:
    sql, args = "SELECT * FROM figures", ()
    if test is not None:
        sql, args = sql + " WHERE test = ?", (test,)
    return {(r["test"], r["metric"], r["cell"]): r for r in conn.rows(sql, args)}


def label(test, c) -> str:
    return f"{test.parameters.get('access') or 'RND'} {c.block_size / 1024:g}KiB {c.rw_mix}"


def expected_cells(test, metric, short=frozenset()) -> dict:
    """Per cell, (value, shown) as the report's table shows it, from pts.stored.cells."""
    out = {}
    for c in window_cells(test, metric):
        shown = "N/A" if c.na else "n/r" if (c.rw_mix, c.block_size) in short \
            else "no data" if c.mean is None else "ok"
        out[(test.name, metric, label(test, c))] = (c.mean if shown == "ok" else None, shown)
    return out


def expected(run) -> dict:
    """Every figure the index should hold, read here from pts.stored."""
    out = {}
    for t in run.tests:
        if t.name == "iops":
            out |= expected_cells(t, "iops")
        elif t.name.startswith("throughput-"):
            out |= expected_cells(t, "mbps")
        elif t.name == "latency":
            short = latency_qos.short_cells(t, t.typed.percentile or 99.999)
            for metric in ("lat_mean_us", "lat_max_us", "iops"):
                out |= expected_cells(t, metric)
            out |= expected_cells(t, "lat_percentile_us", short)
        elif t.name == "wsat":
            cell = f"RND {t.typed.block_sizes[0] / 1024:g}KiB 0/100"
            for metric, key in (("iops", "ss_average"), ("fob_iops", "fob_iops"),
                                ("fob_ss_ratio", "fob_ss_ratio")):
                out[(t.name, metric, cell)] = (t.result[key], "ok")
        if t.counters:
            value = waf.of_test(run, t).value
            out[(t.name, "waf", "")] = (value, "not given" if value is None else "ok")
    return out


def test_every_figure_is_the_stored_runs(indexed):
    """The matrix tests' figures and WAF (test_index_headline.py: operating points, HIR, XSR,
    RWSW shares, QoS levels: 95 more rows of the reference run)."""
    conn, run = indexed
    want, every = expected(run), figures(conn)
    got = {k: g for k, g in every.items() if k[0] in ("iops", "throughput-1024k",
                                                      "throughput-128k", "wsat")
           or (k[0] == "latency" and not k[1].startswith("qos_")) or k[1] == "waf"}
    assert len(every) == len(got) + 95
    assert set(got) == set(want)
    # 12 IOPS cells, 2 x 2 Throughput, 4 x 9 Latency, 3 WSAT, the IOPS test's WAF
    assert len(got) == 12 + 4 + 36 + 3 + 1
    assert {k: (g["value"], g["shown"]) for k, g in got.items()} == want
    na = [g for g in got.values() if g["shown"] == "N/A"]
    assert len(na) == 3 + 4 * 3         # the 0.5 KiB cells of IOPS and of Latency's 4 tables
    assert sum(g["shown"] == "ok" for g in got.values()) == 56 - 15
    assert all("smaller than the logical sector size" in g["reason"] for g in na)


def test_headline_figures_are_the_exports(indexed):
    """The export CSV's steady-state column (another reader of pts.stored) per cell."""
    conn, run = indexed
    got = figures(conn)
    checked = 0
    for t in run.tests:
        for r in export_rows(t):
            if t.name in ("dirth", "cbw", "hir", "xsr") or "precondition" in t.name:
                continue
            metric = "lat_mean_us" if t.name == "latency" else r["metric"]
            row = got[(t.name, metric, r["cell"])]
            assert row["value"] == (None if r["steady_state"] == "N/A" else r["steady_state"])
            assert row["unit"] == {"IOPS": "IOPS", "MB/s": "MB/s", "us": "us"}[r["unit"]]
            checked += 1
    assert checked == 12 + 4 + 9 + 1


def test_iops_window_rounds_and_units(indexed):
    conn, run = indexed
    (iops,) = [t for t in run.tests if t.name == "iops"]
    got = figures(conn, "iops")
    for c in iops.cells:
        row = got[("iops", "iops", label(iops, c))]
        assert (row["rw_mix"], row["block_size"], row["rounds"]) == (c.rw_mix, c.block_size,
                                                                     c.rounds)
        assert row["unit"] == "IOPS" and row["host_bound"] == 0
    assert got[("iops", "waf", "")]["value"] == pytest.approx(2.7285714285714286)


def test_the_run_row_is_the_stored_run(indexed):
    conn, run = indexed
    (row,) = conn.rows("SELECT * FROM runs")
    d = run.device
    assert (row["model"], row["serial"], row["firmware"], row["capacity_bytes"],
            row["transport"], row["emulated"]) == (d.model, d.serial, d.firmware,
                                                   d.capacity_bytes, d.transport, 0)
    assert row["host"] == run.platform["hostname"] == "testhost"
    assert (row["spec_name"], row["spec_title"]) == (run.spec["name"], run.spec["title"])
    assert json.loads(row["options_json"]) == run.options
    assert json.loads(row["deviations_json"]) == [x.text for x in run.deviations]
    assert row["deviation_count"] == len(run.deviations) == 9
    assert (row["compliant"], row["verdict"]) == (0, run.verdict.text)
    assert row["state"] == "finished" and row["error"] is None
    assert row["started"] == run.started and row["run_id"] == run.run_id
    assert row["last_record_at"] == row["ended_at"] == run.finished
    assert row["test_count"] == len(run.tests) == 11
    assert row["folder"] == str(run.folder) and row["reader"] == rows.READER


def test_test_rows_are_the_stored_tests(indexed):
    conn, run = indexed
    got = {r["name"]: r for r in conn.rows("SELECT * FROM tests ORDER BY position")}
    assert list(got) == [t.name for t in run.tests]
    for t in run.tests:
        r = got[t.name]
        assert (r["state"], r["status"], r["title"]) == (t.state, t.status, t.title)
        assert (r["window_first"], r["window_last"]) == (t.window or (None, None))
        assert r["rounds"] == (t.end.rounds if t.end.rounds is not None else len(t.rounds))
        assert r["started_at"] == t.started and r["ended_at"] == t.end.time
    assert got["iops"]["steady"] == 1 and got["iops"]["steady_round"] == 7
    assert got["wsat"]["steady"] == int(run.tests[4].result["final_window_steady"])
    assert got["xsr"]["steady"] is None          # no steady-state check: access groups


def test_unresolvable_and_host_bound_cells_as_the_report_marks_them(tmp_path):
    """A window point of the Latency test's RND 4KiB 0/100 with 5,000 I/Os (the 99.999 %
    level needs 100,000) shows n/r; an IOPS window point judged host-bound is marked."""
    def edit(lines):
        for r in lines:
            if r["type"] == "point" and r["test"] == "latency" and r["round"] == 5 \
                    and (r["rw_mix"], r["block_size"]) == ("0/100", 4096):
                r["ios"] = 5000
            if r["type"] == "point" and r["test"] == "iops" and r["round"] == 6 \
                    and (r["rw_mix"], r["block_size"]) == ("100/0", 4096):
                r["host_bound"] = {"by": "iops", "figure": 750000.0, "ceiling": 760000.0}
        return lines

    conn, run = copy_reference(tmp_path, edit)
    lat = next(t for t in run.tests if t.name == "latency")
    assert latency_qos.short_cells(lat, 99.999) == {("0/100", 4096)}
    assert set(host_ceiling.cell_marks(run.tests[0])) == {("100/0", 4096)}
    want = expected(run)
    got = {k: g for k, g in figures(conn).items() if k in want}
    assert set(got) == set(want)
    assert {k: (g["value"], g["shown"]) for k, g in got.items()} == want
    nr = got[("latency", "lat_percentile_us", "RND 4KiB 0/100")]
    assert (nr["shown"], nr["value"]) == ("n/r", None) and "100,000 I/Os" in nr["reason"]
    assert got[("latency", "lat_mean_us", "RND 4KiB 0/100")]["shown"] == "ok"
    assert [k for k, g in got.items() if g["host_bound"]] == [("iops", "iops",
                                                               "RND 4KiB 100/0")]
    conn.close()
