"""rwsw-dirth (pts.testdefs.rwsw.dirth) without a device: the TC x QD matrix highest OIO
first, the ATW at each point's OIO with fio's total-latency bins on every section, the
preconditioning at max OIO, the grid's spec check and its reduction (declared), one sweep
round when the spec says so, the operating points as PTS DIRTH chooses them with each one's
histogram from its own point in the last round, the --dry-run plan, the typed parameters."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from pts.config import spec_rwsw
from pts.config.spec import SpecError, _Reader
from pts.procedure import plan
from pts.procedure.rounds import Outcome, point_record
from pts.results import parameters, records
from pts.results.ledger import Ledger, read_records
from pts.testdefs import registry
from pts.testdefs.rwsw import dirth as rwsw_dirth
from tests.support.rwsw import atw_text, settings_with, with_rwsw

AR = 1 << 30
DEVICE = SimpleNamespace(capacity_bytes=AR, logical_sector=512, path="/dev/x")
ATW = atw_text("two", (("RND", "R", "4KiB", 70.0), ("SEQ", "W", "128KiB", 30.0)))


def settings(tmp_path: Path, **kw):
    return settings_with(tmp_path, ATW, **kw)


def reduced(tmp_path):
    return settings(tmp_path, dirth_thread_counts="32,4,1", dirth_queue_depths="32,2,1")


def test_the_matrix_runs_highest_oio_first():
    assert rwsw_dirth.matrix((32, 4, 1), (32, 2, 1)) == [
        (32, 32), (4, 32), (32, 2), (32, 1), (1, 32), (4, 2), (4, 1), (1, 2), (1, 1)]
    assert rwsw_dirth.matrix((2, 1), (2, 1)) == [(2, 2), (2, 1), (1, 2), (1, 1)]


def test_each_point_is_the_atw_at_its_oio_with_latency_bins(tmp_path):
    s = reduced(tmp_path)
    decl = rwsw_dirth.declare(s, DEVICE)
    assert [(p.thread_count, p.queue_depth) for p in decl.points] == rwsw_dirth.matrix(
        (32, 4, 1), (32, 2, 1))
    assert decl.tracking == {"ATW IOPS TC32/QD32": decl.points[0]} and decl.histograms
    tc32 = decl.job(decl.points[0]).sections
    # OIO 1024 spread 70/30 (oio_split "share"); every section reports fio's bins
    assert [(j.rw, j.numjobs, j.iodepth, j.flow) for j in tc32] == [
        ("randread", 1, 717, 700), ("write", 1, 307, 300)]
    assert all(j.lat_percentiles == s.spec.dirth.percentiles for j in tc32)
    assert all("lat_percentiles" in j.options() for j in tc32)
    last = decl.job(decl.points[-1]).sections
    assert [(j.iodepth, j.runtime) for j in last] == [(1, 1), (1, 1)]
    assert decl.until_steady and decl.max_rounds is None and decl.stop is None


def test_the_preconditioning_is_the_atw_at_max_oio_to_steady_state(tmp_path):
    pre = rwsw_dirth.declare_precondition(reduced(tmp_path), DEVICE)
    assert pre.test == "rwsw-dirth-preconditioning" and pre.until_steady
    assert (pre.thread_count, pre.queue_depth) == (32, 32)
    assert pre.parameters["precondition_oio"] == [32, 32]
    assert [j.iodepth for j in pre.job(pre.points[0]).sections] == [717, 307]


def test_a_reduced_grid_is_declared(tmp_path):
    (text,) = rwsw_dirth.deviations(reduced(tmp_path))
    assert "reduced to thread counts 32, 4, 1 x queue depths 32, 2, 1" in text
    assert rwsw_dirth.deviations(settings(tmp_path)) == []
    assert len(rwsw_dirth.declare(settings(tmp_path), DEVICE).points) == 49


def rwsw_text(**changes) -> str:
    text = (Path(spec_rwsw.__file__).parents[2] / "specs" / "rwsw-1.0.7.toml").read_text()
    for old, new in changes.items():
        assert old in text
        text = text.replace(old, new)
    return text


@pytest.mark.parametrize("bad", ["[32, 16, 8]", "[1, 2, 4]", "[4, 4, 1]", "[]"])
def test_the_spec_grid_must_run_highest_first_and_keep_one(tmp_path, bad):
    path = tmp_path / "rwsw-x.toml"
    path.write_text(rwsw_text(**{"thread_counts = [32, 16, 8, 6, 4, 2, 1]":
                                 f"thread_counts = {bad}"}))
    with pytest.raises(SpecError) as err:
        spec_rwsw.load(path, _Reader)
    assert "rwsw_dirth.thread_counts" in str(err.value) and "with 1" in str(err.value)


def test_one_sweep_round_when_the_spec_says_so(tmp_path):
    s = with_rwsw(reduced(tmp_path), {"rwsw_dirth": {"demand_to_steady_state": False}})
    decl = rwsw_dirth.declare(s, DEVICE)
    assert (decl.until_steady, decl.max_rounds) == (False, 1)
    assert "one sweep round" in decl.stop(1, {})


def bins_doc(fast: int, slow: int) -> dict:
    """fio json+ of one point: reads at 100 µs, writes at 2 ms (lat_ns bins)."""
    def d(n, ns):
        return {"total_ios": n, "iops": float(n), "io_bytes": n * 4096, "bw_bytes": n * 4096.0,
                "runtime": 1000, "lat_ns": {"mean": float(ns), "max": float(ns),
                                            "bins": {str(ns): n} if n else {}}}
    return {"jobs": [{"jobname": "s0", "error": 0, "read": d(fast, 100_000),
                      "write": d(0, 1)},
                     {"jobname": "s1", "error": 0, "read": d(0, 1),
                      "write": d(slow, 2_000_000)}]}


def test_operating_points_as_pts_dirth_with_histograms_from_the_last_round(tmp_path):
    s = settings(tmp_path, dirth_thread_counts="32,1", dirth_queue_depths="32,1")
    decl = rwsw_dirth.declare(s, DEVICE)
    folder = tmp_path / "run"
    (folder / "raw").mkdir(parents=True)
    ledger = Ledger(folder / "ledger.jsonl")
    iops = {(32, 32): 9000, (32, 1): 5000, (1, 32): 4000, (1, 1): 1000}
    for rnd in (1, 2):
        for p in decl.points:
            n = iops[(p.thread_count, p.queue_depth)] + rnd
            raw = f"raw/r{rnd}-p{p.index}.json"
            (folder / raw).write_text(json.dumps(bins_doc(n, n // 10)))
            ledger.append(point_record(records.Point, "rwsw-dirth", rnd, p, {
                "iops": float(n), "lat_mean_us": 100.0 + p.index, "raw": raw,
                "thread_count": p.thread_count, "queue_depth": p.queue_depth}))
    run = SimpleNamespace(settings=s, ledger=ledger, folder=folder, resume=None,
                          deviation=lambda *a: None)
    outcome = Outcome("steady", 2, 2, (1, 2), {}, "steady")
    chosen = rwsw_dirth.operating_points(run, outcome, {})
    assert [(c.name, c.point.label) for c in chosen] == [
        ("MaxIOPS", "TC32/QD32"), ("MidIOPS", "TC32/QD1"), ("MinIOPS", "TC1/QD1")]
    assert chosen[0].point.iops == 9001.5                  # the window's mean
    rwsw_dirth.record_histogram(run, chosen[2], 2)
    ledger.close()
    found, _ = read_records(folder / "ledger.jsonl")
    ops = [r for r in found if isinstance(r, records.OperatingPoint)]
    assert [(r.name, r.thread_count, r.queue_depth, r.rounds) for r in ops] == [
        ("MaxIOPS", 32, 32, [1, 2]), ("MidIOPS", 32, 1, [1, 2]), ("MinIOPS", 1, 1, [1, 2])]
    (hist,) = [r for r in found if isinstance(r, records.ResponseHistogram)]
    # the bins of TC1/QD1's own point in round 2: both sections, reads and writes merged
    assert hist.bins == {"100000": 1002, "2000000": 100} and hist.ios == 1102
    assert hist.raw == "raw/r2-p3.json" and "round 2" in hist.source
    assert (hist.name, hist.thread_count, hist.queue_depth) == ("MinIOPS", 1, 1)


def test_the_plan_lists_the_matrix_and_its_sections(tmp_path, monkeypatch):
    monkeypatch.setattr(plan, "setup_lines", lambda *a: ["(set-up lines)"])
    lines = registry.get("rwsw-dirth").plan(reduced(tmp_path), DEVICE, None)
    text = "\n".join(lines)
    assert lines[0].startswith("RWSW DIRTH Preconditioning test")
    assert "demand variation (rwsw-dirth): 9 points (TC x QD, highest OIO first: TC32/QD32, " \
           "TC4/QD32, TC32/QD2," in text
    assert "    [p08.s1]" in lines and "lat_percentiles=1" in text
    assert "DEVIATION: rwsw-dirth: TC x QD matrix reduced" in text
    assert "MaxIOPS (highest IOPS with ART below" in text


def test_the_parameters_are_the_rwsw_record_with_the_dirth_readings(tmp_path):
    s = reduced(tmp_path)
    for decl in (rwsw_dirth.declare_precondition(s, DEVICE), rwsw_dirth.declare(s, DEVICE)):
        assert parameters.typed(decl.test, decl.parameters).as_dict() == decl.parameters
    p = rwsw_dirth.declare(s, DEVICE).parameters
    assert p["matrix"][:2] == [[32, 32], [4, 32]] and p["thread_counts"] == [32, 4, 1]
    keys = {r["key"] for r in s.spec.readings_for("rwsw-dirth")}
    assert {"rwsw_dirth.thread_counts", "rwsw_dirth.histograms", "dirth.art_ceiling_us"} <= keys
