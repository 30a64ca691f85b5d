"""More synthetic tests for the run folders of tests/support/synthetic/runfactory.py: a Latency
test whose
points keep fio json+ JSON files (raw/latency/round-NN/pNN.json with total-latency bins) and
Throughput tests (one per block size), in the record layout of docs/results-format.md.

    run = RunFolder(tmp_path / "run", run_json())
    write_latency_test(run)                     # steady at round 7, bins in raw/
    write_throughput_test(run, 1048576)

Latency bins per point: all I/Os at BASE_NS[cell] but a tail of 30 at 3x, 5 at 8x and one
at 20x (the maximum), so the three QoS levels differ; the I/O count of a point is IOS[cell]
(4 KiB 100/0: 1,200,000, everything resolvable; 4 KiB others 200,000: 99.9999 % not
resolvable; 8 KiB 50,000: only 99.99 % resolvable).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pts.procedure import steady_state
from tests.support.synthetic.runfactory import STEADY_CURVE, RunFolder, round_evidence

LAT_MIXES = ("100/0", "65/35", "0/100")
LAT_BLOCK_SIZES = (8192, 4096, 512)
LAT_NA_REASON = "block size 512 B is smaller than the logical sector (4096 B)"
BASE_NS = {("100/0", 8192): 90_000, ("100/0", 4096): 80_000, ("65/35", 8192): 40_000,
           ("65/35", 4096): 30_000, ("0/100", 8192): 25_000, ("0/100", 4096): 20_000}
IOS = {("100/0", 8192): 50_000, ("100/0", 4096): 1_200_000, ("65/35", 8192): 50_000,
       ("65/35", 4096): 200_000, ("0/100", 8192): 50_000, ("0/100", 4096): 200_000}
TAIL = ((3, 30), (8, 5), (20, 1))     # (x base latency, I/Os)
LAT_TRACKING = {"label": "RND 4KiB 0/100 ART", "rw_mix": "0/100", "block_size": 4096,
                "metric": "lat_mean_us"}


def latency_bins(base_ns: int, ios: int) -> dict[int, int]:
    bins = {base_ns: ios - sum(n for _, n in TAIL)}
    bins |= {base_ns * k: n for k, n in TAIL}
    return bins


def _direction(bins: dict[int, int], bs: int, seconds: float = 1.0) -> dict:
    n = sum(bins.values())
    if not n:
        return {"iops": 0.0, "io_bytes": 0, "bw_bytes": 0.0, "total_ios": 0, "runtime": 0,
                "lat_ns": {"mean": 0.0, "max": 0, "min": 0}}
    mean = sum(k * v for k, v in bins.items()) / n
    return {"iops": n / seconds, "io_bytes": n * bs, "bw_bytes": n * bs / seconds,
            "total_ios": n, "runtime": int(seconds * 1000),
            "lat_ns": {"mean": mean, "max": max(bins), "min": min(bins),
                       "bins": {str(k): v for k, v in bins.items()}}}


def fio_document(mix: str, bs: int, multiplier: float) -> dict:
    """A json+ fio document of one point: reads all at the base latency, writes with the
    tail (a pure mix: all of it in its one direction)."""
    base = int(BASE_NS[(mix, bs)] * multiplier)
    ios = IOS[(mix, bs)]
    read_pct = int(mix.split("/")[0])
    reads = 0 if read_pct == 0 else ios if read_pct == 100 else round(ios * read_pct / 100)
    tail = latency_bins(base, ios)
    if read_pct == 100:
        read, write = tail, {}
    elif read_pct == 0:
        read, write = {}, tail
    else:
        read, write = {base: reads}, latency_bins(base, ios - reads)
    return {"fio version": "fio-3.33",
            "jobs": [{"jobname": "p00", "error": 0, "read": _direction(read, bs),
                      "write": _direction(write, bs)}]}


def write_latency_test(run: RunFolder, curve: Sequence[float] = STEADY_CURVE, *,
                       keep_raw: bool = True) -> None:
    """A Latency test (TC 1 / QD 1) whose latencies follow `curve` (one multiplier per
    round); keep_raw False leaves the fio JSON files out (as if raw/ were deleted)."""
    params = {"thread_count": 1, "queue_depth": 1, "active_range_pct": 100,
              "active_range_bytes": 960197124096, "write_cache": "WCD",
              "data_pattern": "random", "point_seconds": 1, "max_rounds": len(curve),
              "window_rounds": 5, "max_data_excursion": 0.2, "max_slope_excursion": 0.1,
              "rw_mixes": list(LAT_MIXES), "block_sizes": list(LAT_BLOCK_SIZES),
              "tracking": [LAT_TRACKING], "percentile": 99.999}
    run.record("test_start", test="latency", title="Latency", clause="9", parameters=params)
    run.record("purge", test="latency", method="trim", command=None, ok=True, seconds=1.0,
               deviation=False)
    run.record("write_cache", test="latency", required="WCD", actual="write through",
               settable=True, when="before WIPC")
    run.record("wipc", advance=600, test="latency", block_size=131072,
               bytes_expected=2 * 960197124096, bytes_written=2 * 960197124096, seconds=600.0,
               thread_count=1, queue_depth=1, raw="raw/latency/wipc.json")
    history: list[float] = []
    for number, multiplier in enumerate(curve, 1):
        index = 0
        for mix in LAT_MIXES:
            for bs in LAT_BLOCK_SIZES:
                fields = _latency_point(run, number, index, mix, bs, multiplier, keep_raw)
                run.record("point", advance=1, test="latency", round=number, index=index,
                           rw_mix=mix, block_size=bs, **fields)
                if (mix, bs) == ("0/100", 4096):
                    history.append(fields["lat_mean_us"])
                index += 1
        evidence, steady = round_evidence({LAT_TRACKING["label"]: history}, number)
        run.record("round", test="latency", round=number,
                   tracking={LAT_TRACKING["label"]: history[-1]}, steady_state=evidence,
                   steady=steady)
    steady = steady_state.check(history).steady
    run.record("test_end", test="latency", status="steady" if steady else "not_steady",
               rounds=len(curve), steady_round=len(curve) if steady else None,
               window=[len(curve) - 4, len(curve)], message="")


def _latency_point(run: RunFolder, number: int, index: int, mix: str, bs: int,
                   multiplier: float, keep_raw: bool) -> dict:
    read_pct = int(mix.split("/")[0])
    if bs == 512:
        return {"read_pct": read_pct, "na": True, "reason": LAT_NA_REASON}
    doc = fio_document(mix, bs, multiplier)
    raw = f"raw/latency/round-{number:02d}/p{index:02d}.json"
    if keep_raw:
        path = run.path / raw
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc), encoding="utf-8")
    dirs = [doc["jobs"][0][d] for d in ("read", "write")]
    ios = sum(d["total_ios"] for d in dirs)
    mean_ns = sum(d["lat_ns"]["mean"] * d["total_ios"] for d in dirs) / ios
    max_ns = max(d["lat_ns"]["max"] for d in dirs)
    return {"read_pct": read_pct, "na": False, "iops": float(ios), "ios": ios,
            "mbps": ios * bs / 1e6, "lat_mean_us": mean_ns / 1e3, "lat_max_us": max_ns / 1e3,
            "lat_percentile_us": BASE_NS[(mix, bs)] * multiplier * 8 / 1e3, "raw": raw}


def write_throughput_test(run: RunFolder, block_size: int,
                          curve: Sequence[float] = STEADY_CURVE) -> None:
    """One Throughput test (SEQ 100/0 and 0/100 at `block_size`), tracking write MB/s."""
    name = f"throughput-{block_size // 1024}k"
    label = f"SEQ {block_size // 1024}KiB 0/100"
    params = {"thread_count": 1, "queue_depth": 32, "active_range_pct": 100,
              "active_range_bytes": 960197124096, "write_cache": "WCD",
              "data_pattern": "random", "point_seconds": 1, "max_rounds": len(curve),
              "window_rounds": 5, "max_data_excursion": 0.2, "max_slope_excursion": 0.1,
              "access": "SEQ", "rw_mixes": ["100/0", "0/100"], "block_sizes": [block_size],
              "tracking": [{"label": label, "rw_mix": "0/100", "block_size": block_size,
                            "metric": "write_mbps"}]}
    run.record("test_start", test=name, title=f"Throughput {block_size // 1024} KiB",
               clause="8", parameters=params)
    history: list[float] = []
    for number, multiplier in enumerate(curve, 1):
        for index, (mix, mbps) in enumerate((("100/0", 3200.0), ("0/100", 1800.0))):
            value = mbps * multiplier
            run.record("point", advance=1, test=name, round=number, index=index, rw_mix=mix,
                       block_size=block_size, read_pct=int(mix.split("/")[0]), na=False,
                       iops=value * 1e6 / block_size, mbps=value,
                       read_mbps=value if mix == "100/0" else 0.0,
                       write_mbps=value if mix == "0/100" else 0.0)
        history.append(1800.0 * multiplier)
        evidence, steady = round_evidence({label: history}, number)
        run.record("round", test=name, round=number, tracking={label: history[-1]},
                   steady_state=evidence, steady=steady)
    steady = steady_state.check(history).steady
    run.record("test_end", test=name, status="steady" if steady else "not_steady",
               rounds=len(curve), steady_round=len(curve) if steady else None,
               window=[len(curve) - 4, len(curve)], message="")
