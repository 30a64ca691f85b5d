"""A synthetic RWSW run folder (rwsw-wsat + rwsw-streams), records shaped as the runner writes
them (compare a real one: tests/e2e/test_rwsw_integration.py), so the RWSW pages, compare and
the dashboard are tested without a device.

The ATW is three streams, 60/30/10 %, derived from a capture (its [provenance] holds what
`python -m pts workload -o` writes: cumulative list, OIO histogram, stream map). rwsw-wsat's
round r: IOPS = WSAT_IOPS[r-1] x scale, every stream's achieved share = target + MISS[stream]
(so SEQ 128K W misses by `seq_miss` points); rwsw-streams' round r: STREAM_IOPS[k] x
STEADY_CURVE-like multipliers, steady at round 7.

    folder = build(tmp_path)                       # compliant (not emulated, no deviation)
    folder = build(tmp_path, "b", scale=0.5, seq_miss=3.0)   # slower, SEQ outside 2 points
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pts.config.spec import load_spec
from pts.procedure import steady_state
from tests.support.synthetic.runfactory import RunFolder, round_evidence, run_json

SPEC = "pts-2.0.2-enterprise"
STREAMS = (("RND 4K R", 60.0, "100/0", 4096), ("RND 4K W", 30.0, "0/100", 4096),
           ("SEQ 128K W", 10.0, "0/100", 131072))
WSAT_IOPS = (90000.0, 60000.0, 42000.0, 40000.0, 40500.0, 40000.0, 39800.0)
STREAM_IOPS = (120000.0, 50000.0, 4000.0)
CURVE = (3.0, 2.0, 1.08, 1.04, 1.0, 1.0, 1.0)           # steady window 3..7
CAPACITY = 64 << 30
PROVENANCE = {
    "capture_file": "db.capture", "capture_sha256": "ab" * 32, "capture_source": "tracefs",
    "device": "/dev/nvme0n1", "host": "dbhost", "process_filter": "db_bench",
    "from_s": 0.0, "to_s": 600.0, "step_seconds": 300.0, "lost_events": 7, "top_n": 3,
    "coverage_pct": 92.0, "oio_median": 4, "oio_p95": 12, "oio_max": 20,
    "oio_rule": "median", "seq_rule": "previous-end", "rwsw_spec": "rwsw-1.0.7",
    "cumulative_streams": ["RND 4K R", "RND 4K W", "SEQ 128K W", "RND 8K R"],
    "cumulative_ios": [552, 276, 92, 80], "cumulative_bytes": [552 * 4096, 276 * 4096,
                                                               92 * 131072, 80 * 8192],
    "oio_seconds": [100.0, 50.0, 200.0, 150.0, 100.0],
    "map_streams": ["RND 4K R", "RND 4K W", "SEQ 128K W"], "map_start_s": [0.0, 300.0],
    "map_shares_pct": [[55.0, 30.0, 7.0], [60.0, 25.0, 11.0]],
}


def atw(provenance: dict | None = None) -> dict:
    return {"name": "db_bench three", "sha256": "cd" * 32, "path": "/tmp/db.toml",
            "thread_count": 2, "queue_depth": 2, "oio": 4,
            "streams": [{"stream": s, "share_pct": p} for s, p, _, _ in STREAMS],
            "provenance": dict(PROVENANCE if provenance is None else provenance)}


def parameters(test: str, tracking: list[dict], provenance: dict | None) -> dict:
    return {"thread_count": 2, "queue_depth": 2, "active_range_pct": 100,
            "active_range_bytes": CAPACITY, "write_cache": "WCD", "data_pattern": "random",
            "access": "ATW", "point_seconds": 60, "max_rounds": len(CURVE),
            "window_rounds": 5, "max_data_excursion": 0.2, "max_slope_excursion": 0.1,
            "tracking": tracking, "atw": atw(provenance), "oio_split": "share",
            "flow_sleep_us": 10, "share_tolerance_pct": 2.0, "capacity_bytes": CAPACITY,
            "rwsw_spec": "SNIA RWSW PTS for Datacenter Storage 1.0.7",
            "stop_at_steady_state": False,
            "readings": load_spec(SPEC).readings_for(test)}


def miss(seq_miss: float) -> dict[str, float]:
    """Per stream, achieved - target in points (the shares still sum to 100)."""
    return {"RND 4K R": -seq_miss * 0.5, "RND 4K W": -seq_miss * 0.5, "SEQ 128K W": seq_miss}


def start_purged(run: RunFolder, test: str, title: str, clause: str, p: dict) -> None:
    """An RWSW test's opening records: its test_start, the purge, the write cache set."""
    run.record("test_start", test=test, title=title, clause=clause, parameters=p)
    run.record("purge", test=test, method="nvme-format", command=["nvme", "format"], ok=True,
               seconds=5.0, deviation=False)
    run.record("write_cache", test=test, required="WCD", actual="write through",
               settable=True, when="before test")


def wsat_test(run: RunFolder, scale: float, seq_miss: float, provenance) -> None:
    test = "rwsw-wsat"
    p = parameters(test, [{"label": "ATW IOPS", "rw_mix": "60/40", "block_size": 0}],
                   provenance) | {"stop_drive_fills": 2.0, "stop_hours": 24.0}
    start_purged(run, test, "RWSW Multi-WSAT", "RWSW 1.0.7 Multi-WSAT (rwsw-digest §5)", p)
    history: dict[str, list[float]] = {"ATW IOPS": []}
    off = miss(seq_miss)
    for number, base in enumerate(WSAT_IOPS, 1):
        iops = base * scale
        start = run.clock
        streams = [{"stream": s, "section": f"p00.s{k}", "target_pct": t,
                    "achieved_pct": t + off[s] * (number % 2), "ios": int(iops * 60 * t / 100),
                    "iops": iops * t / 100, "lat_mean_us": 50.0 + k} for k, (s, t, _, _)
                   in enumerate(STREAMS)]
        run.record("point", advance=60, test=test, round=number, index=0, rw_mix="60/40",
                   read_pct=60, block_size=0, na=False, iops=iops, read_iops=iops * 0.6,
                   write_iops=iops * 0.4, mbps=iops * 0.02, lat_mean_us=100.0,
                   lat_max_us=900.0, read_bytes=int(iops * 60 * 0.6 * 4096),
                   write_bytes=int(iops * 60 * 0.4 * 16384), ios=int(iops * 60),
                   streams=streams, share_miss_pts=abs(off["SEQ 128K W"]) * (number % 2),
                   shares_within_tolerance=abs(seq_miss) <= 2.0, oio_target=4,
                   oio_achieved=3.9, start=start, end=start + 60,
                   raw=f"raw/{test}/round-{number:02d}/p00.json")
        history["ATW IOPS"].append(iops)
        evidence, steady = round_evidence(history, number)
        run.record("round", test=test, round=number, tracking={"ATW IOPS": iops},
                   steady_state=evidence, steady=steady)
    n = len(WSAT_IOPS)
    run.record("test_end", test=test, status="complete", rounds=n, steady_round=n,
               window=[n - 4, n], message=f"stop rule: time limit reached at round {n}")


def streams_test(run: RunFolder, scale: float, provenance) -> None:
    test = "rwsw-streams"
    tracking = [{"label": f"{s} IOPS", "rw_mix": mix, "block_size": bs}
                for s, _, mix, bs in STREAMS]
    start_purged(run, test, "RWSW Individual Streams-WSAT",
                 "RWSW 1.0.7 Individual Streams-WSAT (rwsw-digest §5)",
                 parameters(test, tracking, provenance))
    history: dict[str, list[float]] = {t["label"]: [] for t in tracking}
    for number, m in enumerate(CURVE, 1):
        for k, (s, _, mix, bs) in enumerate(STREAMS):
            iops = STREAM_IOPS[k] * m * scale
            start = run.clock
            reads = mix == "100/0"
            run.record("point", advance=60, test=test, round=number, index=k, rw_mix=mix,
                       read_pct=100 if reads else 0, block_size=bs, na=False, iops=iops,
                       read_iops=iops if reads else 0.0, write_iops=0.0 if reads else iops,
                       mbps=iops * bs / 1e6, lat_mean_us=4e6 / iops, lat_max_us=4e7 / iops,
                       read_bytes=int(iops * 60 * bs) if reads else 0,
                       write_bytes=0 if reads else int(iops * 60 * bs), ios=int(iops * 60),
                       start=start, end=start + 60,
                       raw=f"raw/{test}/round-{number:02d}/p{k:02d}.json")
            history[f"{s} IOPS"].append(iops)
        evidence, steady = round_evidence(history, number)
        run.record("round", test=test, round=number,
                   tracking={k: v[-1] for k, v in history.items()}, steady_state=evidence,
                   steady=steady)
    n = len(CURVE)
    steady = all(steady_state.check(v[-5:]).steady for v in history.values())
    run.record("test_end", test=test, status="steady" if steady else "not_steady", rounds=n,
               steady_round=n if steady else None, window=[n - 4, n],
               message="steady state reached")


def build(root: Path, name: str = "rwsw", *, scale: float = 1.0, seq_miss: float = 0.5,
          provenance: dict | None = None, serial: str = "SN-RWSW-1",
          more: Callable[[RunFolder], None] | None = None) -> Path:
    """A complete RWSW run folder under root/name (see the module's docstring);
    provenance: the ATW's [provenance] (default PROVENANCE; {} as a hand-written ATW);
    more: records more tests after these (rwsw_replay_dirth.build)."""
    info = run_json(emulated=False)
    info["device"] = dict(info["device"], serial=serial, capacity_bytes=CAPACITY)
    run = RunFolder(root / name, info)
    wsat_test(run, scale, seq_miss, provenance)
    streams_test(run, scale, provenance)
    if more is not None:
        more(run)
    return run.path
