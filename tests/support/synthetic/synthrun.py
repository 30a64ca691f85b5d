"""A SYNTHETIC run folder holding the main PTS tests (IOPS, both Throughput sizes, Latency,
WSAT), written with the project's own pieces: the test parameters of pts.testdefs, the points
of pts.procedure.rounds, the record types of pts.results.records and the steady-state maths
of pts.procedure.steady_state. The figures are made up (smooth curves, not a measurement):
they exercise the report, they say nothing about a drive.

    build(folder, FULL)        # the full PTS-E 2.0.2 size (benchmarks/report_render.py)
    build(folder, REFERENCE)   # small: the page snapshots' reference run (tests/data/), with
                               # DIRTH, CBW, HIR, XSR: synthrun_more.build_reference

Times start at runfactory.T0 and advance by fixed steps, so the same shape always gives the
same bytes (and the same PDF).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from pts.config.settings import make_settings
from pts.config.spec import load_spec
from pts.procedure.fob import FOB_ROUND
from pts.procedure.rounds import TestPoint, matrix_points, point_record
from pts.results import records
from pts.testdefs import iops, latency, qos_levels, throughput, wsat, wsat_qos
from pts.tools import histogram
from tests.support.synthetic.runfactory import STEADY_CURVE, RunFolder, round_evidence, run_json

SPEC = "pts-2.0.2-enterprise"
CAPACITY = 7_681_501_126_656           # a 7.68 TB drive: 24 h of WSAT stay under 4 fills


def late_steady_curve(rounds: int) -> tuple[float, ...]:
    """Falls 4 % a round (the slope is never within 10 %), then drops by a quarter to a flat
    last five rounds: steady state is first met in the final round."""
    flat = rounds - 4
    return tuple(1.3 * 1.04 ** (flat - 1 - r) if r < flat else 1.0 + 0.004 * math.sin(r)
                 for r in range(1, rounds + 1))


@dataclass(frozen=True)
class Shape:
    curve: tuple[float, ...]            # per round: IOPS and MB/s x it, response times / it
    logical_sector: int = 512
    iops_block_sizes: str | None = None   # --iops-block-sizes (None: the spec's 8)
    iops_rw_mixes: str | None = None      # --iops-rw-mixes (None: the spec's 7)
    wsat_samples: int = 1440
    bins: int = 400                     # json+ latency bins per direction of a latency point
    requirements: bool = False          # two requirement records (met, not met)
    counters: bool = False              # emulated-SSD FTL counters after each IOPS step
    fob: bool = False                   # --fob-sweep: IOPS fob_point records before WIPC
    time_scale: float = 1.0             # --time-scale (XSR groups, DIRTH/CBW pre-writes)
    hir_repetitions: int | None = None  # --hir-repetitions
    dirth_grid: tuple[str, str] | None = None   # --dirth-thread-counts, --dirth-queue-depths

    @property
    def rounds(self) -> int:
        return len(self.curve)


FULL = Shape(curve=late_steady_curve(25))
REFERENCE = Shape(curve=STEADY_CURVE, logical_sector=4096,
                  iops_block_sizes="1024KiB,64KiB,4KiB,0.5KiB", iops_rw_mixes="100/0,65/35,0/100",
                  wsat_samples=40, bins=40, requirements=True, counters=True, fob=True,
                  time_scale=0.05, hir_repetitions=3, dirth_grid=("32,8,1", "32,8,1"))


class Writer(RunFolder):
    """runfactory's run folder, keeping what each point measured for the tests that select
    from it (DIRTH/CBW's operating points, HIR), and giving each test_start its readings."""

    def __init__(self, folder: Path, info: dict):
        super().__init__(folder, info)
        self.measured: dict[str, dict[tuple[int, int], dict]] = {}   # test -> (round, index)

    def add(self, rec: records.Record, advance: float = 1.0) -> None:
        if isinstance(rec, records.TestStart):
            # As pts.procedure.runner.recorded_test: the readings the test runs with.
            rec = dataclasses.replace(rec, parameters=rec.parameters | {
                "readings": load_spec(SPEC).readings_for(rec.test)})
        super().add(rec, advance)


# run.json's PTS-E 1.0 §5 blocks as a run with --operator/--report-info on a server writes them
REPORT_INFO = {"operator": "A. Tester", "auditor": None, "sponsor": "Example Labs",
               "system_make": None, "system_model": None, "motherboard": None,
               "host_adapter": None, "interface": None, "form_factor": "U.2 2.5 inch 15 mm",
               "media_type": "3D TLC NAND", "notable_features": None,
               "file": "/srv/pts/report-info.toml"}
SYSTEM = {"read_on": "this host",
          "dmi": {"sys_vendor": "Example Systems", "product_name": "XS-2400",
                  "board_vendor": "Example Systems", "board_name": "XB-24 rev 2"},
          "host_adapter": {"pci_function": "0000:00:01.1", "vendor": "Example Semiconductor",
                           "device": "PCIe root port 1", "names_from": "lspci -mm"},
          "interface": {"kind": "NVMe over PCIe", "speed": "16.0 GT/s PCIe x4",
                        "source": "sysfs current_link_speed/current_link_width of "
                                  "0000:01:00.0"},
          "drive_reports": "the NVMe Identify Controller data has no form-factor or "
                           "media-type field"}


Extra = Callable[["Writer", Shape, object], None]


def build(folder: Path, shape: Shape, extra: tuple[Extra, ...] = ()) -> Path:
    """Write the run folder `folder` (run.json, ledger.jsonl, raw/latency json+ files);
    extra(writer, shape, settings): more tests after WSAT
    (tests/support/synthetic/synthrun_more.py)."""
    spec = load_spec(SPEC)
    settings = make_settings(spec, device="/dev/nvme9n1", destructive=True, point_seconds=None,
                             max_rounds=shape.rounds, purge="auto", reports_dir=folder.parent,
                             iops_block_sizes=shape.iops_block_sizes,
                             iops_rw_mixes=shape.iops_rw_mixes, fob_sweep=shape.fob,
                             time_scale=shape.time_scale, hir_repetitions=shape.hir_repetitions,
                             dirth_thread_counts=(shape.dirth_grid or (None, None))[0],
                             dirth_queue_depths=(shape.dirth_grid or (None, None))[1])
    # The old path stays in the text: the reference run and the page baselines hold it.
    info = run_json(deviations=["SYNTHETIC run folder (tests/synthrun.py): made-up figures "
                                "for rendering, not a measurement.", *settings.deviations()])
    info["device"] |= {"capacity_bytes": CAPACITY, "logical_sector": shape.logical_sector,
                       "physical_sector": max(4096, shape.logical_sector)}
    info["options"] |= {"max_rounds": shape.rounds}
    info |= {"report_info": REPORT_INFO, "system": SYSTEM}
    w = Writer(folder, info)
    ar = CAPACITY // shape.logical_sector * shape.logical_sector
    points = matrix_points(settings.iops_rw_mixes, settings.iops_block_sizes,
                           shape.logical_sector)
    round_test(w, shape, "iops", "IOPS", spec.iops.clause, iops.parameters(settings, ar),
               points, _iops_fields, fob=shape.fob)
    for bs in spec.throughput.block_sizes:
        name = f"throughput-{bs // 1024}k"
        label = TestPoint(0, spec.throughput.tracking_rw_mix, bs, access="SEQ").label
        tp_points = [TestPoint(i, m, bs, access="SEQ")
                     for i, m in enumerate(spec.throughput.rw_mixes)]
        round_test(w, shape, name, f"Throughput {bs // 1024} KiB", spec.throughput.clause,
                   throughput.parameters(settings, bs, ar, label), tp_points, _tp_fields)
    lat_points = matrix_points(spec.latency.rw_mixes, spec.latency.block_sizes,
                               shape.logical_sector)
    round_test(w, shape, "latency", "Latency", spec.latency.clause,
               latency.parameters(settings, ar), lat_points, _latency_fields)
    _wsat(w, shape, settings)
    for more in extra:
        more(w, shape, settings)
    if shape.requirements:
        _requirements(w)
    return folder


# --------------------------------------------------------------------------- the figures

def _base_iops(read_pct: int, bs: int) -> float:
    """A drive limited by 150k..750k IOPS and 1.5..3 GB/s, better at reading."""
    return min(150_000 + 600_000 * read_pct / 100, (1.5e9 + 1.5e9 * read_pct / 100) / bs)


def _iops_fields(p: TestPoint, m: float, w: Writer, shape: Shape, r: int) -> dict:
    rp = p.rw_mix.read_pct
    n = _base_iops(rp, p.block_size) * m
    return {"iops": n, "read_iops": n * rp / 100, "write_iops": n * (100 - rp) / 100,
            "mbps": n * p.block_size / 1e6, "lat_mean_us": 128e6 / n, "lat_max_us": 1.28e9 / n}


def _tp_fields(p: TestPoint, m: float, w: Writer, shape: Shape, r: int) -> dict:
    rp = p.rw_mix.read_pct
    mbps = (1500 + 1500 * rp / 100) * m
    n = mbps * 1e6 / p.block_size
    return {"iops": n, "read_iops": n * rp / 100, "write_iops": n * (100 - rp) / 100,
            "mbps": mbps, "lat_mean_us": 32e6 / n, "lat_max_us": 3.2e8 / n,
            "read_mbps": mbps * rp / 100, "write_mbps": mbps * (100 - rp) / 100}


def _latency_fields(p: TestPoint, m: float, w: Writer, shape: Shape, r: int) -> dict:
    rp = p.rw_mix.read_pct
    mean = (20 + 0.004 * p.block_size + 30 * (100 - rp) / 100) / m
    n = 1e6 / mean
    out = {"iops": n, "read_iops": n * rp / 100, "write_iops": n * (100 - rp) / 100,
           "mbps": n * p.block_size / 1e6, "lat_mean_us": mean, "lat_max_us": mean * 40,
           "lat_percentile_us": mean * 12, "ios": round(n * 60)}
    for name, share, scale in (("read", rp / 100, 0.8), ("write", 1 - rp / 100, 1.3)):
        busy = share > 0
        out |= {f"{name}_ios": round(n * 60 * share),
                f"{name}_lat_mean_us": mean * scale if busy else None,
                f"{name}_lat_max_us": mean * scale * 40 if busy else None,
                f"{name}_lat_percentile_us": mean * scale * 12 if busy else None}
    return out


def _jsonplus_job(p: TestPoint, fields: dict, bins: int) -> dict:
    """One fio json+ job: lat_ns bins (ns -> I/O count) per direction, log-spaced."""
    job: dict = {"jobname": f"p{p.index:02d}"}
    for name in ("read", "write"):
        ios, mean = fields[f"{name}_ios"], fields[f"{name}_lat_mean_us"]
        hist: dict[str, int] = {}
        if ios and mean:
            weights = [math.exp(-((k - bins / 4) / (bins / 8)) ** 2) for k in range(bins)]
            total = sum(weights)
            for k, wt in enumerate(weights):
                ns = round(mean * 1000 * 0.5 * 1.02 ** k)
                hist[str(ns)] = hist.get(str(ns), 0) + max(1, round(ios * wt / total))
        job[name] = {"total_ios": ios, "lat_ns": {"mean": (mean or 0) * 1000, "bins": hist}}
    return job


# --------------------------------------------------------------------------- the records

FieldsFn = Callable[[TestPoint, float, Writer, Shape, int], dict]


def round_test(w: Writer, shape: Shape, name: str, title: str, clause: str, params: dict,
               points: list[TestPoint], fields: FieldsFn, *, prepare: str = "wipc",
               before_round: Callable[[int], None] | None = None, fob: bool = False,
               after_rounds: Callable[[list[int]], tuple[str, str] | None] | None = None,
               after_purge: Callable[[], None] | None = None) -> None:
    """The records of one round-based test, as pts.procedure.runner writes them. prepare:
    "wipc" (purge, write cache, WIPC), "purge" (no WIPC) or "none" (continues a test).
    after_rounds(window) writes what comes before test_end and may return its (status,
    message). after_purge: records right after the purge and write cache (the purge
    probe)."""
    w.add(records.TestStart(test=name, title=title, clause=clause, parameters=params))
    def fob_sweep() -> None:     # --fob-sweep: one informative round before WIPC
        for p in points:
            measured = None if p.na_reason else fields(p, 3.0, w, shape, FOB_ROUND)
            w.add(point_record(records.FobPoint, name, FOB_ROUND, p, measured), advance=60)

    if prepare != "none":
        _prepare(w, shape, name, params, wipc=prepare == "wipc",
                 fob=fob_sweep if fob else after_purge)
    tracking = {t["label"]: (t["rw_mix"], t["block_size"]) for t in params["tracking"]}
    metric = params["tracking"][0].get("metric", "iops")
    history: dict[str, list[float]] = {label: [] for label in tracking}
    steady_round = None
    for r, m in enumerate(shape.curve, 1):
        if before_round is not None:
            before_round(r)
        raw = f"raw/{name}/round-{r:02d}.json"
        jobs, current = [], {}
        for p in points:
            measured = None if p.na_reason else fields(p, m, w, shape, r)
            if measured is not None:
                key = (str(p.rw_mix), p.block_size)
                if p.thread_count is not None:
                    measured |= {"thread_count": p.thread_count, "queue_depth": p.queue_depth}
                    key = p.label
                current[key] = measured[metric]
                if name == "latency":
                    jobs.append(_jsonplus_job(p, measured, shape.bins))
                start = w.clock
                measured |= {"start": start, "end": start + 60, "raw": raw}
                w.measured.setdefault(name, {})[(r, p.index)] = measured
            w.add(point_record(records.Point, name, r, p, measured), advance=60)
        if jobs:
            w.raw(raw, {"fio version": "fio-3.33 (synthetic)", "jobs": jobs})
        for label, cell in tracking.items():
            history[label].append(current[label if label in current else cell])
        evidence, steady = round_evidence(history, r)
        w.add(records.Round(test=name, round=r, tracking={k: v[-1] for k, v in history.items()},
                            steady_state=evidence, steady=steady))
        _counters(w, shape, name, f"after round {r}", r)
        if steady and steady_round is None:
            steady_round = r
    n = shape.rounds
    window = [(steady_round or n) - 4, steady_round or n]
    status, message = (records.STEADY, "steady state reached") if steady_round else \
        (records.NOT_STEADY, f"steady state not reached in {n} rounds")
    if after_rounds is not None:
        status, message = after_rounds(window) or (status, message)
    w.add(records.TestEnd(test=name, status=status, rounds=n, steady_round=steady_round,
                          window=window, message=message))


def _prepare(w: Writer, shape: Shape, name: str, params: dict, wipc: bool,
             fob: Callable[[], None] | None) -> None:
    w.add(records.Purge(test=name, method="nvme-format", command=["nvme", "format",
                        "/dev/nvme9n1", "--ses=1"], ok=True, seconds=12.5, deviation=False,
                        steps=[["nvme", "format", "/dev/nvme9n1", "--ses=1"]],
                        verification="format completed"), advance=12.5)
    w.add(records.WriteCache(test=name, required="WCD", actual="write through", settable=True,
                             when="before WIPC", how="nvme set-feature 6"))
    if fob is not None:
        fob()
    if not wipc:
        return
    ar = params["active_range_bytes"]
    w.add(records.Wipc(test=name, block_size=params["wipc_block_size"], bytes_expected=2 * ar,
                       bytes_written=2 * ar, seconds=3600.0, thread_count=params["thread_count"],
                       queue_depth=params["queue_depth"], raw=f"raw/{name}/wipc.json"),
          advance=3600)
    _counters(w, shape, name, "after WIPC", None)


def _counters(w: Writer, shape: Shape, name: str, when: str, r: int | None) -> None:
    """FTL counters as the emulated SSD keeps them (cumulative pages): per round the host
    writes 100,000 pages and the NAND 1.5x .. 3.2x that (write amplification settling)."""
    if not shape.counters or name != "iops":
        return
    k = r or 0
    host = 500_000 + 100_000 * k
    nand = 510_000 + sum(100_000 * min(3.2, 1.5 + 0.6 * j) for j in range(k))
    w.add(records.DeviceCounters(test=name, when=when, round=r, source="emulator", counters={
        "host_writes": host, "nand_writes": round(nand), "relocations": round(nand) - host,
        "gc_runs": 3 + 22 * k, "erases": 5 + 21 * k, "trims": 262_144,
        "valid_pages": 240_000, "free_blocks": 40 if k == 0 else 12, "page_size": 4096}))


def _wsat(w: Writer, shape: Shape, settings) -> None:
    spec = settings.spec
    device = SimpleNamespace(capacity_bytes=CAPACITY, logical_sector=shape.logical_sector)
    plan = wsat.wsat_plan(settings, device)
    params = wsat.parameters(SimpleNamespace(spec=spec), plan)
    w.add(records.TestStart(test="wsat", title="Write Saturation", clause=spec.wsat.clause,
                            parameters=params))
    w.add(records.Purge(test="wsat", method="nvme-format", command=None, ok=True, seconds=12.5,
                        deviation=False, steps=[], verification="format completed"))
    w.add(records.WriteCache(test="wsat", required="WCD", actual="write through",
                             settable=True, when="before test", how="nvme set-feature 6"))
    n, bs = shape.wsat_samples, spec.wsat.block_size
    fob, ss = 420_000.0, 60_000.0
    values = [ss + (fob - ss) * math.exp(-k / (n / 12)) * (1 + 0.05 * math.sin(k / 7))
              + 600 * math.sin(k * 1.7) for k in range(n)]
    evidence = wsat.steady_windows(values, spec.steady_state)
    done = 0.0
    for k, iops_k in enumerate(values):
        done += iops_k * plan.interval_s * bs
        ev = evidence[k]
        w.add(records.Sample(
            test="wsat", sample=k + 1, start_s=k * plan.interval_s,
            end_s=(k + 1) * plan.interval_s, ios=iops_k * plan.interval_s, iops=iops_k,
            lat_mean_us=32 * 4 * 1e6 / iops_k, clat_max_us=4e7 / iops_k,
            clat_percentile_us=1.5e7 / iops_k, bytes_written=done, tgbw_gb=done / 1e9,
            drive_fills=done / CAPACITY, partial=False, steady=None if ev is None else ev.steady),
              advance=plan.interval_s)
    final = evidence[-1]
    first = next((k for k, ev in enumerate(evidence, 1) if ev is not None and ev.steady), None)
    w.add(records.WsatResult(
        test="wsat", stop="time", bytes_written=int(done), bytes_planned=plan.bytes_planned,
        seconds=float(n * plan.interval_s), tgbw_gb=done / 1e9, drive_fills=done / CAPACITY,
        samples=n, fob_iops=values[0], ss_window=[final.window_first, final.window_last],
        ss_average=final.average, fob_ss_ratio=values[0] / final.average,
        final_window_steady=final.steady, first_steady_sample=first,
        steady_from_sample=first, ss_evidence=final.as_dict(),
        iops=sum(values) / n, lat_mean_us=2000.0, lat_max_us=90_000.0,
        lat_percentile_us=40_000.0, raw="raw/wsat/wsat.json"))
    for name, ios, mean_us, source in (
            ("Whole run", sum(values) * plan.interval_s, 2000.0, wsat_qos.WHOLE_RUN_SOURCE),
            (f"Final window (samples {final.window_first}-{final.window_last})",
             final.average * 5 * plan.interval_s, 1800.0, wsat_qos.WINDOW_SOURCE)):
        hist = synthetic_bins(mean_us, round(ios))
        w.add(records.ResponseHistogram(
            test="wsat", name=name, thread_count=spec.wsat.thread_count,
            queue_depth=spec.wsat.queue_depth, seconds=round(ios / final.average),
            ios=histogram.total(hist), iops=final.average, lat_mean_us=mean_us,
            lat_max_us=max(hist) / 1000,
            percentiles=qos_levels.percentile_rows(hist, qos_levels.QOS_LEVELS, max(hist),
                                                   histogram.percentile),
            bins={str(k): v for k, v in sorted(hist.items())}, source=source,
            raw="raw/wsat/wsat.json"))
    w.add(records.TestEnd(test="wsat", status=records.COMPLETE, rounds=None, steady_round=None,
                          window=None, message=f"time limit reached; {n} samples"))


def synthetic_bins(mean_us: float, ios: int) -> dict[int, int]:
    """A log-normal-ish total-latency histogram (bin ns -> I/O count) around the mean."""
    weights = [math.exp(-((k - 20) / 7) ** 2) + 1e-4 * math.exp(-k / 12) for k in range(60)]
    total = sum(weights)
    return {round(mean_us * 1000 * 0.3 * 1.08 ** k): max(1, round(ios * wt / total))
            for k, wt in enumerate(weights)}


def _requirements(w: Writer) -> None:
    for verdict, required, bound in (("met", 1000.0, "at_least"),
                                     ("not met", 10.0, "at_most")):
        w.add(records.Requirement(
            test="iops", cell="RND 4KiB 0/100", metric="iops", bound=bound, required=required,
            value=150_000.0, verdict=verdict, text=f"measured 150,000, required "
            f"{'>=' if bound == 'at_least' else '<='} {required:,.0f}",
            source="datasheet.toml line 3"))
