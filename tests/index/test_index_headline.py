"""The index's figures of the tests whose report tables are not a block size x R/W mix matrix
(pts.index.headline): DIRTH/CBW operating points, HIR and XSR tables, the RWSW tests' shares
achieved, the Latency test's QoS levels; each against what the report's page reads (its own
functions where it has them: pts.report.pages.latency_qos.qos_cells, recovery.state_names,
pts.stored.rwsw / rwsw_replay), on tests/data/reference-run and a synthetic RWSW run."""

import math

import pytest

from pts.index import build, headline
from pts.report.pages import latency_qos as qos_page
from pts.report.pages import recovery
from pts.results import records
from pts.results.ledger import read_records
from pts.stored import fmt, rwsw, rwsw_replay
from pts.stored.data import load_run
from tests.support.index_reference import copy_reference, index_folder
from tests.support.synthetic import rwsw_replay_dirth


@pytest.fixture
def reference(indexed_reference):
    return indexed_reference


def figures(conn, test) -> dict:
    return {(r["metric"], r["cell"]): r for r in conn.rows(
        "SELECT * FROM figures WHERE test = ? ORDER BY position", (test,))}


def shown(rows: dict) -> dict:
    return {k: (r["value"], r["shown"]) for k, r in rows.items()}


def of_test(run, name):
    return next(t for t in run.tests if t.name == name)


def test_operating_points_are_the_pages_records(reference):
    """The Operating Points table: per point IOPS and ART (rounds), TC/QD, the capture's
    IOPS, ART and MRT, from the operating_point and response_histogram records."""
    conn, run = reference
    found = read_records(run.folder / "ledger.jsonl")[0]
    for name in ("dirth", "cbw"):
        ops = [r for r in found if r.test == name and isinstance(r, records.OperatingPoint)]
        hists = {r.name: r for r in found if r.test == name
                 and isinstance(r, records.ResponseHistogram)}
        want = {}
        for o in ops:
            h = hists[o.name]
            want |= {("iops", o.name): (o.iops, "ok"), ("lat_mean_us", o.name):
                     (o.lat_mean_us, "ok"), ("thread_count", o.name): (o.thread_count, "ok"),
                     ("queue_depth", o.name): (o.queue_depth, "ok"),
                     ("capture_iops", o.name): (h.iops, "ok"),
                     ("capture_lat_mean_us", o.name): (h.lat_mean_us, "ok"),
                     ("capture_lat_max_us", o.name): (h.lat_max_us, "ok")}
        got = figures(conn, name)
        assert shown(got) == want and len(want) == 3 * 7
        assert [o.name for o in ops] == ["MaxIOPS", "MidIOPS", "MinIOPS"]
        assert got[("iops", "MaxIOPS")]["rounds"] == len(ops[0].rounds) == 5
        assert got[("thread_count", "MaxIOPS")]["unit"] == "TC"


def test_hir_table_is_the_pages(reference):
    conn, run = reference
    hir = of_test(run, "hir")
    name = recovery.state_names(hir)
    base = [r for r in hir.recovery if isinstance(r, records.HirBaseline)][-1]
    want = {("baseline_iops", ""): (base.ss_iops, "ok")}
    states = {r.state: r for r in hir.recovery if isinstance(r, records.HirState)}
    for k, s in sorted(states.items()):
        want |= {("wait_iops", name(k)): (s.wait_iops, "ok"),
                 ("return_iops", name(k)): (s.baseline_iops, "ok"),
                 ("ss_iops", name(k)): (s.ss_iops, "ok"),
                 ("wait_ratio", name(k)): (s.ratio, "ok")}
    got = figures(conn, "hir")
    assert shown(got) == want
    assert [c for m, c in got if m == "wait_ratio"] == ["WS1", "WS2", "WS3", "WS5", "WS10"]
    assert got[("wait_ratio", "WS10")]["value"] == pytest.approx(101726.23900838626 / 92160.0)


def test_xsr_table_is_the_pages(reference):
    conn, run = reference
    xsr = of_test(run, "xsr")
    groups = {r.group: r for r in xsr.recovery if isinstance(r, records.XsrGroup)}
    want = {}
    for g, r in sorted(groups.items()):
        cell = f"{g}: {r.pattern.upper()} {fmt.block_size(r.block_size)} W"
        want |= {("end_tp_mbps", cell): (r.end_tp_mbps, "ok"),
                 ("final_level_mbps", cell): (r.final_level_mbps, "ok"),
                 ("peak_lat_mean_us", cell): (r.peak_lat_mean_us, "ok"),
                 ("peak_clat_max_us", cell): (r.peak_clat_max_us, "ok")}
        if g > 1:
            want[("recovery_s", cell)] = (r.recovery_s, "ok")
    got = figures(conn, "xsr")
    assert shown(got) == want and len(want) == 3 * 4 + 2
    assert ("recovery_s", "2: RND 8 KiB W") in got and got[("recovery_s",
                                                            "2: RND 8 KiB W")]["unit"] == "s"


def test_latency_qos_levels_are_the_qos_tables(reference):
    """The Response Time QoS table's 99.99 / 99.999 / 99.9999 % per cell, as the page
    computes them from the window points' json+ bins (not the 5 9s table's)."""
    conn, run = reference
    lat = of_test(run, "latency")
    cells = qos_page.qos_cells(run, lat)
    got = {k: r for k, r in figures(conn, "latency").items() if k[0].startswith("qos_")}
    want = {}
    for c in cells:
        label = f"RND {c.block_size / 1024:g}KiB {c.rw_mix}"
        for lv in c.levels:
            want[(f"qos_{lv.pct:g}_us", label)] = (lv.us, "ok")
    assert shown(got) == want and len(want) == 6 * 3        # 0.5 KiB cells: N/A, no row
    assert {m for m, _ in got} == {"qos_99.99_us", "qos_99.999_us", "qos_99.9999_us"}
    assert all(r["rounds"] == 5 for r in got.values())
    five = figures(conn, "latency")[("lat_percentile_us", "RND 4KiB 0/100")]["value"]
    assert got[("qos_99.999_us", "RND 4KiB 0/100")]["value"] != five   # another table


def test_not_selected_not_recovered_and_no_bins(tmp_path):
    """A point not selected (the rule the reason), a group that never recovered, a latency
    test whose fio JSON is gone: each as the report's cell says it."""
    def edit(lines):
        for r in lines:
            if r["type"] == "operating_point" and r["test"] == "cbw" and r["name"] == "MinIOPS":
                r.update(selected=False, thread_count=None, queue_depth=None, iops=None,
                         lat_mean_us=None, rule="no point below the ART ceiling")
            if r["type"] == "xsr_group" and r["group"] == 3:
                r.update(recovered=False, recovery_s=None)
        return lines

    conn, run = copy_reference(tmp_path, edit, drop_raw=True)
    cbw = figures(conn, "cbw")
    assert {k: (r["value"], r["shown"], r["reason"]) for k, r in cbw.items()
            if k[1] == "MinIOPS"} == {
        (m, "MinIOPS"): (None, "not selected", "no point below the ART ceiling")
        for m in ("iops", "lat_mean_us", "thread_count", "queue_depth")}
    never = figures(conn, "xsr")[("recovery_s", "3: SEQ 1024 KiB W")]
    assert (never["value"], never["shown"]) == (None, "not recovered")
    qos = [r for k, r in figures(conn, "latency").items() if k[0].startswith("qos_")]
    assert len(qos) == 18 and {r["shown"] for r in qos} == {"no data"}
    assert all("no latency bins" in r["reason"] for r in qos)
    conn.close()


def test_rwsw_shares_achieved_are_the_tables(tmp_path):
    """rwsw-wsat's ATW Target vs Achieved (averages of the point records' achieved shares,
    computed here from the ledger) and rwsw-replay's steps (step 2 misses by 3 points)."""
    folder = rwsw_replay_dirth.build(tmp_path / "reports", step_miss=3.0)
    conn = index_folder(tmp_path / "reports", folder)
    run = load_run(folder)
    wsat = of_test(run, "rwsw-wsat")
    got = figures(conn, "rwsw-wsat")
    points = [p for p in wsat.points]
    for s in wsat.parameters["atw"]["streams"]:
        seen = [x["achieved_pct"] for p in points for x in p.streams
                if x["stream"] == s["stream"]]
        miss = max(abs(a - s["share_pct"]) for a in seen)
        name = s["stream"]
        assert got[("share_target_pct", name)]["value"] == s["share_pct"]
        assert math.isclose(got[("share_achieved_pct", name)]["value"],
                            sum(seen) / len(seen), rel_tol=1e-12)
        assert got[("share_achieved_pct", name)]["rounds"] == len(seen)
        assert math.isclose(got[("share_max_miss_pts", name)]["value"], miss, rel_tol=1e-12)
        assert got[("share_within", name)]["value"] == (1.0 if miss <= 2.0 else 0.0)
    assert shown(got) == {(m, r.stream): (v, "ok") for r in rwsw.shares(wsat) for m, v in (
        ("share_target_pct", r.target_pct), ("share_achieved_pct", r.achieved_pct),
        ("share_max_miss_pts", r.max_miss_pts), ("share_within", float(r.within)))}
    steps = rwsw_replay.steps(of_test(run, "rwsw-replay"))
    replay = figures(conn, "rwsw-replay")
    assert shown(replay) == {k: v for r in steps for k, v in (
        (("share_max_miss_pts", f"step {r.step}"), (r.miss_pts, "ok")),
        (("share_within", f"step {r.step}"), (float(r.within), "ok")))}
    assert replay[("share_within", "step 2")]["value"] == 0.0
    assert replay[("share_within", "step 1")]["value"] == 1.0
    ops = figures(conn, "rwsw-dirth")
    assert {c for _, c in ops} == {"MaxIOPS", "MidIOPS", "MinIOPS"}
    conn.close()


def test_a_new_reader_reads_every_folder_again(tmp_path, monkeypatch):
    """READER went up with these figures: an index made by the older reader is read again."""
    conn, _ = copy_reference(tmp_path)
    conn.execute("UPDATE runs SET reader = reader - 1")
    again = build.update(conn, [tmp_path / "reports"])
    assert len(again.updated) == 1 and not again.added
    assert conn.execute("SELECT COUNT(*) FROM figures WHERE test = 'hir'").fetchone()[0] == 21
    assert headline.qos_metric(99.9999) == "qos_99.9999_us"
    conn.close()
