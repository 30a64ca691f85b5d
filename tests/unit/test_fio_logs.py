"""fio's per-interval logs read back (pts.tools.fio_logs) and turned into WSAT samples
(pts.testdefs.wsat):
thread logs summed by window, the partial last window fio does not log in the IOPS and
histogram logs, and the TGBW at the end equal to what fio wrote. Log lines are in the
format fio 3.33 writes (checked on a loop device, see pts/fio_logs.py)."""

from types import SimpleNamespace

import pytest

from pts.procedure import steady_state
from pts.testdefs import wsat
from pts.tools import fio_logs, histogram
from pts.tools.fio import Direction, FioResult, Summary

BS = 4096


def write_logs(folder, per_thread: list[list[int]], lat_ns: int = 1000, partial=True):
    """Threads' IOPS per 1 s window; the latency log also gets a partial last line."""
    for n, iops in enumerate(per_thread, 1):
        lines = [f"{(k + 1) * 1000 + n}, {v}, 1, 0, 0" for k, v in enumerate(iops)]
        (folder / f"w_iops.{n}.log").write_text("\n".join(lines) + "\n")
        lat = [f"{(k + 1) * 1000}, {lat_ns * (k + 1)}, 1, 0, 0" for k in range(len(iops))]
        if partial:
            lat.append(f"{len(iops) * 1000 + 400}, {lat_ns * 9}, 1, 0, 0")
        (folder / f"w_lat.{n}.log").write_text("\n".join(lat) + "\n")
        counts = [0] * histogram.PLAT_NR
        counts[200], counts[300] = v - 1 if (v := iops[0]) else 0, 1
        hist = [f"{(k + 1) * 1000}, 1, {BS}, " + ", ".join(map(str, counts))
                for k in range(len(iops))]
        (folder / f"w_clat_hist.{n}.log").write_text("\n".join(hist) + "\n")
    return str(folder / "w")


def test_intervals_sum_threads_and_stop_at_the_shortest(tmp_path):
    prefix = write_logs(tmp_path, [[100, 200, 300], [10, 20]])
    ivs = fio_logs.intervals(prefix, 1000)
    assert [iv.iops for iv in ivs] == [110, 220]          # window 3: only thread 1 logged it
    assert [iv.ios for iv in ivs] == [110, 220]
    assert ivs[0].lat_mean_ns == 1000 and ivs[1].lat_mean_ns == 2000
    hist = ivs[0].clat_histogram
    assert histogram.total(hist) == 100 + 10 and histogram.maximum(hist) == \
        histogram.bin_value(300)
    assert fio_logs.partial_lat_mean_ns(prefix, 2) == pytest.approx((3000 + 9000 + 9000) / 3)


def test_missing_logs_and_garbage_are_named(tmp_path):
    with pytest.raises(fio_logs.FioLogError, match="no fio IOPS log"):
        fio_logs.intervals(str(tmp_path / "none"), 1000)
    (tmp_path / "x_iops.1.log").write_text("1000, 5, 1, 0, 0\nnot a line\n")
    with pytest.raises(fio_logs.FioLogError, match="x_iops.1.log line 2"):
        fio_logs.intervals(str(tmp_path / "x"), 1000)


def plan(interval=1, capacity=1000 * BS):
    return wsat.Plan(capacity=capacity, ar_bytes=capacity, fills=4, hours=24,
                     per_thread=capacity * 2, bytes_planned=capacity * 4, limit_s=86400,
                     interval_s=interval)


def result(io_bytes: int, runtime_ms: int) -> FioResult:
    write = Direction(io_bytes=io_bytes, total_ios=io_bytes // BS, runtime_ms=runtime_ms)
    return FioResult(None, Summary(read=Direction(), write=write), 0, 0, 0)


def test_partial_last_window_becomes_a_partial_sample(tmp_path):
    prefix = write_logs(tmp_path, [[1000, 1000, 1000], [1000, 1000, 1000]])
    logged = 6000 * BS
    found = wsat.samples(prefix, result(logged + 500 * BS, 3500), plan(), BS, 99.999)
    assert [s.partial for s in found] == [False, False, False, True]
    tail = found[-1]
    assert tail.ios == 500 and tail.iops == pytest.approx(1000) and tail.end_s == 3.5
    assert tail.bytes_written == logged + 500 * BS           # TGBW ends at what fio wrote
    assert [s.bytes_written for s in found[:3]] == [2000 * BS, 4000 * BS, 6000 * BS]
    rec = found[1].record(1000 * BS, None).to_json()
    assert rec["drive_fills"] == 4 and rec["tgbw_gb"] == pytest.approx(4000 * BS / 1e9)
    assert rec["clat_max_us"] == pytest.approx(histogram.bin_value(300) / 1e3)


def test_a_sliver_after_the_last_window_is_added_to_it(tmp_path):
    prefix = write_logs(tmp_path, [[1000, 1000]], partial=False)
    found = wsat.samples(prefix, result(2003 * BS, 2010), plan(), BS, 99.999)
    assert [s.partial for s in found] == [False, False]
    assert found[-1].bytes_written == 2003 * BS


def test_steady_windows_and_steady_from():
    rule = SimpleNamespace(window_rounds=5, max_data_excursion=0.2, max_slope_excursion=0.1)
    values = [100, 100, 100, 100, 100, 50, 30, 30, 30, 30, 30, 30]
    ev = wsat.steady_windows(values, rule)
    assert ev[:4] == [None] * 4
    assert [e.steady for e in ev[4:]] == [True, False, False, False, False, False, True, True]
    assert ev[-1].rounds == (8, 9, 10, 11, 12)
    assert ev[-1] == steady_state.check(values[-5:], [8, 9, 10, 11, 12])
    assert wsat._steady_from(ev) == 11


def test_sample_percentile_only_where_the_io_count_resolves_it(tmp_path):
    # 2 threads x 1,000 I/Os per window: 2,000 I/Os resolve 99.8 % (needs 500), not
    # 99.999 % (needs 100,000): no value then, never the window's slowest I/O.
    prefix = write_logs(tmp_path, [[1000, 1000], [1000, 1000]], partial=False)
    res = result(4000 * BS, 2000)
    five = wsat.samples(prefix, res, plan(), BS, 99.999)
    assert [s.clat_percentile_us for s in five] == [None, None]
    assert all(s.clat_max_us == histogram.bin_value(300) / 1e3 for s in five)
    three = wsat.samples(prefix, res, plan(), BS, 99.8)
    assert [s.clat_percentile_us for s in three] == [histogram.bin_value(200) / 1e3] * 2
    assert histogram.total(three[0].clat_histogram) == 2000


def test_wsat_qos_records_whole_run_and_final_window():
    from pts.config.spec import load_spec
    from pts.testdefs import wsat_qos
    whole = {100_000: 1_999_999, 5_000_000: 1}                # 2,000,000 I/Os, total latency
    write = Direction(io_bytes=2_000_000 * BS, total_ios=2_000_000, runtime_ms=20_000,
                      iops=100_000, lat_mean_ns=100_002, lat_max_ns=5_000_100,
                      lat_histogram=whole)
    res = FioResult("RUN/raw/wsat/wsat.json", Summary(read=Direction(), write=write), 0, 0, 0)
    run = SimpleNamespace(spec=load_spec(), relative=lambda p: "raw/wsat/wsat.json")
    window = [{90_000: 20_000}, {90_000: 19_999, 3_000_000: 1}]   # 40,000 I/Os, clat
    recs = wsat_qos.records_of(run, res, window, 10, 4_000.0, (4, 8))
    assert [r.name for r in recs] == ["Whole run", "Final window (samples 4-8)"]
    first, last = recs
    assert first.ios == 2_000_000 and first.source == wsat_qos.WHOLE_RUN_SOURCE
    assert [(r["pct"], r["resolvable"], r["us"]) for r in first.percentiles] == [
        (99.99, True, 100.0), (99.999, True, 100.0), (99.9999, True, 100.0)]
    assert first.lat_max_us == pytest.approx(5_000.1)
    assert last.ios == 40_000 and last.source == wsat_qos.WINDOW_SOURCE
    assert [(r["pct"], r["resolvable"], r["us"]) for r in last.percentiles] == [
        (99.99, True, 90.0), (99.999, False, None), (99.9999, False, None)]
    assert last.lat_max_us == 3_000.0 and (last.thread_count, last.queue_depth) == (4, 32)
    assert last.bins == {"90000": 39_999, "3000000": 1}
