"""HIR and XSR pages rendered from synthetic ledgers (no device): the wait-state table with
its ratios, a redone (resumed) wait state counted once, the XSR table with recovery times
('never' stated) and the rule on the page."""

from __future__ import annotations

from pts.report import render
from tests.support.helpers import pdf_text
from tests.support.synthetic.runfactory import T0, RunFolder, run_json

RULE = ("recovery time = time from the switch to the first of 5 consecutive intervals whose "
        "TP all lie within 10 % of the group's final level (mean TP of its last 25%); "
        "'never' if that does not happen within the group")
TCQD = {"thread_count": 4, "queue_depth": 32}     # required of every test (parameters.py)


def hir_run(root):
    run = RunFolder(root / "hir", run_json(deviations=["HIR: 2 repetitions"]))
    run.record("test_start", test="hir", title="Host Idle Recovery", clause="PTS 2.0.2 HIR",
               parameters={**TCQD, "point_seconds": 60, "write_seconds": 5,
                           "idle_seconds": [5, 50], "repetitions": 2, "window_rounds": 5,
                           "tracking": [
                   {"label": "RND 4KiB 0/100", "rw_mix": "0/100", "block_size": 4096}],
                   "wait_state_names": ["WS1", "WS10"]})   # spec: idle / 5 s write
    run.record("hir_baseline", test="hir", ss_iops=2000.0, window=[1, 5], steady=True,
               rounds=5)
    t = T0 + 100
    for state, idle, iops in ((1, 5, 1900.0), (2, 50, 3600.0)):
        for attempt in range(2 if state == 2 else 1):       # state 2 redone after a resume
            run.record("hir_write", test="hir", state=state, idle_s=idle, segment="lead_in",
                       interval=1, start=t, end=t + 10, idle_before_s=None, ios=1e4,
                       iops=1000.0)
            for k in range(1, 3):
                t += 5 + idle
                run.record("hir_write", test="hir", state=state, idle_s=idle,
                           segment="wait", interval=k, start=t, end=t + 5,
                           idle_before_s=idle + 0.004, ios=iops * 5,
                           iops=iops + 100 * attempt)
        for k in range(1, 3):
            t += 5
            run.record("hir_write", test="hir", state=state, idle_s=idle, segment="baseline",
                       interval=k, start=t, end=t + 5, idle_before_s=None, ios=1e4,
                       iops=2000.0)
        run.record("hir_state", test="hir", state=state, idle_s=idle, write_s=5,
                   repetitions=2, wait_iops=iops, baseline_iops=2000.0, ss_iops=2000.0,
                   ratio=iops / 2000, idle_measured_s=[idle, idle + 0.002, idle + 0.004],
                   raw="raw/hir/ws1")
    run.record("test_end", test="hir", status="complete", rounds=5, steady_round=5,
               window=[1, 5], message="2 wait states done")
    return run.path


def xsr_run(root):
    run = RunFolder(root / "xsr", run_json())
    run.record("test_start", test="xsr", title="Cross Stimulus Recovery",
               clause="PTS 2.0.2 XSR", parameters={"recovery_rule": RULE,
                                                   "interval_seconds": 60, **TCQD, "groups": []})
    shapes = {1: [500.0] * 10, 2: [300, 150, 100, 100, 100, 100, 100, 100, 100, 100],
              3: [100 + 40 * k for k in range(10)]}             # 3 never settles
    for g, tps in shapes.items():
        for k, tp in enumerate(tps):
            start = (g - 1) * 600 + 60 * k
            run.record("xsr_interval", test="xsr", group=g, interval=k + 1, start_s=start,
                       end_s=start + 60, tp_mbps=tp, iops=tp, lat_mean_us=1000.0 / tp * 100,
                       clat_max_us=5000.0 / tp * 100)
        rec = {2: (120.0, True), 3: (None, False)}.get(g, (None, None))
        run.record("xsr_group", test="xsr", group=g, pattern="rnd" if g == 2 else "seq",
                   block_size=8192 if g == 2 else 1 << 20, seconds=600, intervals=10,
                   end_tp_mbps=tps[-1], final_level_mbps=sum(tps[-3:]) / 3,
                   peak_lat_mean_us=max(1000.0 / v * 100 for v in tps),
                   peak_clat_max_us=max(5000.0 / v * 100 for v in tps),
                   recovery_s=rec[0], recovered=rec[1], raw=f"raw/xsr/group-{g}.json")
    run.record("test_end", test="xsr", status="complete", rounds=3, steady_round=None,
               window=[1, 3], message="3 access groups done")
    return run.path


def flat(text: str) -> str:
    return " ".join(text.split())


def test_hir_pages_table_and_resumed_state(tmp_path):
    text = flat(pdf_text(render(hir_run(tmp_path))))
    assert "Host Idle Recovery: IOPS vs time, all wait states" in text
    # The wait states' names as the run recorded them (spec file wait_state_naming).
    assert "wait state WS1 (5 s idle)" in text and "wait state WS10 (50 s idle)" in text
    assert "WS10 " in text[text.index("Wait / baseline"):]     # the table row
    assert "mean IOPS per wait state" in text
    table = text[text.index("Wait / baseline"):]
    # Per state: reps, mean IOPS after idle, return to baseline, SS baseline, ratio (the
    # redone state 2 counts its last attempt's records; its hir_state holds its mean).
    assert "2 1,900 2,000 2,000 0.95" in table and "2 3,600 2,000 2,000 1.80" in table
    assert "Idle measured before each write" in text and "planned 50 s" in text


def test_xsr_pages_table_and_rule(tmp_path):
    text = flat(pdf_text(render(xsr_run(tmp_path))))
    assert "Cross Stimulus Recovery: transition group 1 -> group 2" in text
    assert "transition group 2 -> group 3" in text
    assert "ART and MRT vs time" in text
    assert "120 s (2.0 min)" in text
    assert "never (not settled within the group)" in text
    assert "Recovery time: the suite's definition" in text
    assert "within 10 % of the group's final level" in text


def test_a_redone_wait_state_keeps_only_its_last_attempt(tmp_path):
    from types import SimpleNamespace

    from pts.report.pages.recovery import hir_writes
    from pts.results import records
    from pts.results.ledger import read_records
    found, _ = read_records(hir_run(tmp_path) / "ledger.jsonl")
    writes = hir_writes(SimpleNamespace(recovery=tuple(
        r for r in found if isinstance(r, records.HirWrite))))
    assert [w.segment for w in writes[2]] == ["lead_in", "wait", "wait", "baseline",
                                              "baseline"]
    assert [w.iops for w in writes[2] if w.segment == "wait"] == [3700.0, 3700.0]
