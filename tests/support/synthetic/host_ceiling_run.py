"""A synthetic run with the host ceiling of issue 33 §1 (docs/results-format.md: the
`host_ceiling` record, a point's `host_bound`): IOPS, Latency and Throughput 1024 KiB of
runfactory(_extra), a small WSAT, each with a host_ceiling record right before its
test_start, and BOUND points marked host-bound in the ledger as the runner marks them.

    build(tmp_path)                 # IOPS: 3 host-bound points in its window, 1 outside;
                                    # Latency: 1 (by latency); Throughput: ceiling not
                                    # measured (error); WSAT: its result host-bound
    build(tmp_path, bound=False)    # every ceiling measured, no point host-bound
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.synthetic.runfactory import RunFolder, run_json, write_iops_test
from tests.support.synthetic.runfactory_extra import write_latency_test, write_throughput_test

SHARE, MARGIN = 0.8, 0.1
CEILING_JOBS = {
    "iops": [
        {"label": "RND 4KiB 100/0 TC4/QD32", "rw": "randread", "block_size": 4096,
         "numjobs": 4, "iodepth": 32, "iops": 110_000.0, "mbps": 450.56, "lat_mean_us": 1163.6,
         "raw": "raw/iops/host-ceiling-0.json"},
        {"label": "RND 1024KiB 65/35 TC4/QD32", "rw": "randrw", "block_size": 1048576,
         "numjobs": 4, "iodepth": 32, "iops": 2_400.0, "mbps": 2516.58, "lat_mean_us": 53_333.0,
         "raw": "raw/iops/host-ceiling-1.json"}],
    "latency": [
        {"label": "RND 4KiB 100/0 TC1/QD1", "rw": "randread", "block_size": 4096,
         "numjobs": 1, "iodepth": 1, "iops": 13_100.0, "mbps": 53.66, "lat_mean_us": 76.3,
         "raw": "raw/latency/host-ceiling-0.json"}],
    "wsat": [
        {"label": "RND 4KiB 0/100 TC4/QD32", "rw": "randwrite", "block_size": 4096,
         "numjobs": 4, "iodepth": 32, "iops": 70_000.0, "mbps": 286.72, "lat_mean_us": 1828.6,
         "raw": "raw/wsat/host-ceiling-0.json"}],
}
NOT_MEASURED = {"throughput-1024k": "--host-ceiling off"}
# (test, round, index) -> host_bound (figure: the point's own value, filled in by build)
BOUND = {
    # index 1: RND 4KiB 100/0, index 3: RND 1024KiB 65/35 (runfactory's loop order)
    ("iops", 4, 1): ("IOPS", "iops", 110_000.0, "RND 4KiB 100/0 TC4/QD32"),
    ("iops", 6, 1): ("IOPS", "iops", 110_000.0, "RND 4KiB 100/0 TC4/QD32"),
    ("iops", 7, 3): ("MB/s", "mbps", 2516.58, "RND 1024KiB 65/35 TC4/QD32"),
    ("iops", 2, 1): ("IOPS", "iops", 110_000.0, "RND 4KiB 100/0 TC4/QD32"),   # not in window
    ("latency", 5, 1): ("latency", "lat_mean_us", 76.3, "RND 4KiB 100/0 TC1/QD1"),
}


def _ceiling(test: str, time: float, jobs: dict[str, list[dict]]) -> dict:
    error = NOT_MEASURED.get(test) or (None if test in jobs else "not root")
    return {"type": "host_ceiling", "time": time, "test": test,
            "device": None if error else "null_blk",
            "engine": "io_uring (fixedbufs, registerfiles)", "cpus": None if error else "0-3",
            "seconds": 2, "points": [] if error else jobs[test], "share": SHARE,
            "margin": MARGIN, "error": error}


def _judged(by: str, figure: float, ceiling: float, label: str) -> dict:
    limit = ceiling * (1 + MARGIN) if by == "latency" else ceiling * SHARE
    return {"by": by, "figure": figure, "ceiling": ceiling, "limit": limit,
            "ceiling_label": label}


def _wsat(run: RunFolder, bound: bool) -> None:
    run.record("test_start", test="wsat", title="Write Saturation", clause="8",
               parameters={})
    for k in range(1, 6):
        run.record("sample", test="wsat", sample=k, start_s=k - 1.0, end_s=float(k),
                   ios=60_000.0, iops=60_000.0, lat_mean_us=2133.0, clat_max_us=9000.0,
                   clat_percentile_us=None, bytes_written=k * 60_000 * 4096.0,
                   tgbw_gb=k * 0.24576, drive_fills=k * 0.001, partial=False, steady=None)
    result = {"stop": "time", "bytes_written": 1_228_800_000, "bytes_planned": 4 * 10**12,
              "seconds": 5.0, "tgbw_gb": 1.2288, "drive_fills": 0.005, "samples": 5,
              "fob_iops": 60_000.0, "ss_window": [1, 5], "ss_average": 60_000.0,
              "fob_ss_ratio": 1.0, "final_window_steady": True, "first_steady_sample": 5,
              "steady_from_sample": 5, "ss_evidence": None, "iops": 60_000.0,
              "lat_mean_us": 2133.0, "lat_max_us": 9000.0, "lat_percentile_us": None,
              "raw": "raw/wsat/wsat.json"}
    if bound:
        result["host_bound"] = _judged("IOPS", 60_000.0, 70_000.0, "RND 4KiB 0/100 TC4/QD32")
    run.record("wsat_result", test="wsat", **result)
    run.record("test_end", test="wsat", status="complete", rounds=5, steady_round=None,
               window=None, message="time limit reached; 5 samples")


def build(root: Path, name: str = "hc", *, bound: bool = True) -> Path:
    run = RunFolder(root / name, run_json())
    write_iops_test(run, (3.0, 2.0, 1.08, 1.04, 1.0, 1.0, 1.0))
    write_latency_test(run)
    write_throughput_test(run, 1048576)
    _wsat(run, bound)
    inject(run.path, CEILING_JOBS, BOUND if bound else {})
    return run.path


def inject(folder: Path, jobs: dict[str, list[dict]], marked: dict) -> None:
    """Rewrite `folder`'s ledger as a run of issue 33 writes it: a host_ceiling record before
    each test_start (jobs[test], or NOT_MEASURED's error), and `host_bound` on every point
    (`marked` (test, round, index) -> (by, field, ceiling, label), else null)."""
    ledger = folder / "ledger.jsonl"
    out = []
    for line in ledger.read_text().splitlines():
        rec = json.loads(line)
        if rec["type"] == "test_start":      # the ceiling is measured before the test
            out.append(json.dumps(_ceiling(rec["test"], rec["time"] - 0.5, jobs)))
        key = (rec.get("test"), rec.get("round"), rec.get("index"))
        if rec["type"] == "point" and key in marked:
            by, field, ceiling, label = marked[key]
            rec["host_bound"] = _judged(by, rec[field], ceiling, label)
        elif rec["type"] == "point":
            rec["host_bound"] = None
        out.append(json.dumps(rec))
    ledger.write_text("\n".join(out) + "\n")
