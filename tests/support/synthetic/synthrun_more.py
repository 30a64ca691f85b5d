"""More SYNTHETIC tests for tests/support/synthetic/synthrun.py's run folder: DIRTH and CBW
(preconditioning,
demand variation, operating points, histograms), HIR and XSR, written the way their
pts.testdefs modules write them (their declarations, parameters, schedule, grid selection
and recovery rule), with made-up figures.

    build_reference(folder)   # the page snapshots' reference run: every page type
"""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

from pts.device.identity import active_range_bytes
from pts.procedure.rounds import TestPoint
from pts.results import records
from pts.testdefs import dirth_cbw_jobs, dirth_cbw_select, hir, qos_levels, xsr
from pts.testdefs.dirth_cbw import HISTOGRAM_SOURCE
from pts.testdefs.hir_schedule import schedule
from pts.tools import histogram
from tests.support.synthetic.synthrun import (
    CAPACITY,
    REFERENCE,
    Shape,
    Writer,
    build,
    round_test,
    synthetic_bins,
)


def build_reference(folder: Path) -> Path:
    return build(folder, REFERENCE, extra=(dirth, cbw, hir_test, xsr_test))


def _device(shape: Shape):
    return SimpleNamespace(capacity_bytes=CAPACITY, logical_sector=shape.logical_sector)


# --------------------------------------------------------------------------- DIRTH / CBW

def _dirth_cbw_fields(p: TestPoint, m: float, w: Writer, shape: Shape, r: int) -> dict:
    """Little's law on a drive that saturates near 400k IOPS: ART = TC x QD / IOPS."""
    toio = p.thread_count * p.queue_depth
    iops = 400_000 * toio / (toio + 24) * m
    art = toio / iops * 1e6
    out = {"iops": iops, "read_iops": iops * p.rw_mix.read_pct / 100,
           "write_iops": iops * (100 - p.rw_mix.read_pct) / 100,
           "mbps": iops * p.block_size / 1e6, "lat_mean_us": art, "lat_max_us": art * 60,
           "ios": round(iops * 60), "sys_cpu_pct": min(95.0, 2 + 0.08 * toio)}
    for k, pct in enumerate((99.9, 99.99, 99.999, 99.9999)):
        out[dirth_cbw_jobs.pct_key(pct)] = art * (4 + 4 * k)
    return out


def _dirth_cbw(kind: str, w: Writer, shape: Shape, settings) -> None:
    table = dirth_cbw_jobs.section(settings, kind)
    dev = _device(shape)
    pre = dirth_cbw_jobs.declare_precondition(settings, dev, kind)
    demand = dirth_cbw_jobs.declare_demand(settings, dev, kind)
    work = dirth_cbw_jobs.workload(table, shape.logical_sector)
    tc, qd = table.tracking_thread_count, table.tracking_queue_depth

    def prewrite(test: str, when: str, t: int, q: int, seconds: int) -> None:
        iops = _dirth_cbw_fields(TestPoint(0, dirth_cbw_jobs.WRITES, table.nominal_block_size,
                                           None, "RND", t, q), 1.0, w, shape, 0)["iops"]
        w.add(records.Prewrite(test=test, when=when, thread_count=t, queue_depth=q,
                               seconds=seconds, bytes_written=round(iops * seconds * 4096),
                               iops=iops, raw=f"raw/{test}/prewrite/{when.replace(' ', '-')}"
                                              ".json"), advance=seconds)

    rest = settings.scaled(table.precondition_round_seconds) - settings.point_seconds
    round_test(w, shape, pre.test, pre.title, pre.clause, pre.parameters, list(pre.points),
               _dirth_cbw_fields, prepare="purge", before_round=lambda r: prewrite(
                   pre.test, f"precondition round {r}", tc, qd, rest))

    def operating(window: list[int]) -> None:
        if work.deviation(kind):
            w.add(records.Deviation(test=kind, text=work.deviation(kind)))
        rounds = range(window[0], window[1] + 1)
        grid = []
        for p in demand.points:
            got = [w.measured[kind][(r, p.index)] for r in rounds]
            grid.append(dirth_cbw_select.GridPoint(p.thread_count, p.queue_depth,
                                             sum(g["iops"] for g in got) / len(got),
                                             sum(g["lat_mean_us"] for g in got) / len(got)))
        for c in dirth_cbw_select.select(grid, table.art_ceiling_us):
            p = c.point
            w.add(records.OperatingPoint(
                test=kind, name=c.name, selected=p is not None,
                thread_count=p and p.thread_count, queue_depth=p and p.queue_depth,
                iops=p and p.iops, lat_mean_us=p and p.lat_mean_us, rule=c.rule,
                rounds=list(rounds)))
            if p is None:
                continue
            prewrite(kind, c.name, p.thread_count, p.queue_depth,
                     settings.scaled(table.operating_prewrite_seconds))
            seconds = settings.scaled(table.capture_seconds)
            hist = synthetic_bins(p.lat_mean_us, round(p.iops * seconds))
            max_ns = max(hist)
            w.add(records.ResponseHistogram(
                test=kind, name=c.name, thread_count=p.thread_count,
                queue_depth=p.queue_depth, seconds=seconds, ios=sum(hist.values()),
                iops=p.iops, lat_mean_us=p.lat_mean_us, lat_max_us=max_ns / 1000,
                percentiles=qos_levels.percentile_rows(hist, table.percentiles, max_ns,
                                                       histogram.percentile),
                bins={str(k): v for k, v in sorted(hist.items())}, source=HISTOGRAM_SOURCE,
                raw=f"raw/{kind}/histogram/{c.name}.json"), advance=seconds)
        return None

    round_test(w, shape, demand.test, demand.title, demand.clause, demand.parameters,
               list(demand.points), _dirth_cbw_fields, prepare="none",
               before_round=lambda r: prewrite(kind, f"before round {r}", tc, qd,
                                               settings.scaled(table.prewrite_seconds)),
               after_rounds=operating)


def dirth(w: Writer, shape: Shape, settings) -> None:
    _dirth_cbw("dirth", w, shape, settings)


def cbw(w: Writer, shape: Shape, settings) -> None:
    _dirth_cbw("cbw", w, shape, settings)


# --------------------------------------------------------------------------- HIR / XSR

def hir_test(w: Writer, shape: Shape, settings) -> None:
    decl = hir.precondition(settings, _device(shape))
    label = next(iter(decl.tracking))

    def wait_states(window: list[int]) -> tuple[str, str]:
        rounds = range(window[0], window[1] + 1)
        got = [w.measured[decl.test][(r, decl.tracking[label].index)]["iops"] for r in rounds]
        ss = sum(got) / len(got)
        w.add(records.HirBaseline(test=decl.test, ss_iops=ss, window=window, steady=True,
                                  rounds=shape.rounds))
        t = w.clock
        for ws in schedule(settings):
            boost = 1 + 1.2 * (1 - math.exp(-ws.idle_s / 15))     # more idle, more recovery
            waits = []
            for k in range(ws.repetitions + 1):                   # the lead-in, then waits
                iops = ss * (0.8 if k == 0 else boost * (1 - 0.02 * k))
                start = t + (0 if k == 0 else ws.idle_s)
                w.add(records.HirWrite(
                    test=decl.test, state=ws.state, idle_s=ws.idle_s,
                    segment="lead_in" if k == 0 else "wait", interval=max(1, k), start=start,
                    end=start + ws.write_s, idle_before_s=None if k == 0 else ws.idle_s + 0.003,
                    ios=iops * ws.write_s, iops=iops))
                t = start + ws.write_s
                waits.append(iops)
            for k in range(1, ws.baseline_repetitions + 1):
                w.add(records.HirWrite(
                    test=decl.test, state=ws.state, idle_s=ws.idle_s, segment="baseline",
                    interval=k, start=t, end=t + ws.write_s, idle_before_s=None,
                    ios=ss * ws.write_s, iops=ss * (1 + 0.01 * math.sin(k))))
                t += ws.write_s
            mean = sum(waits[1:]) / ws.repetitions
            w.add(records.HirState(
                test=decl.test, state=ws.state, idle_s=ws.idle_s, write_s=ws.write_s,
                repetitions=ws.repetitions, wait_iops=mean, baseline_iops=ss, ss_iops=ss,
                ratio=mean / ss, idle_measured_s=[ws.idle_s + 0.001, ws.idle_s + 0.003,
                                                  ws.idle_s + 0.006],
                raw=f"raw/hir/ws{ws.state}"), advance=t - w.clock)
        return records.COMPLETE, f"{len(schedule(settings))} wait states done"

    h, rest = settings.spec.hir, hir.rest_seconds(settings)

    def probe() -> None:          # the purge probe on the purged (FOB) drive
        w.add(records.PurgeProbe(
            test=decl.test, block_size=h.block_size, rw_mix="0/100",
            thread_count=h.thread_count, queue_depth=h.queue_depth, seconds=3.0,
            iops=3.1 * _hir_fields(decl.points[0], 1.0, w, shape, 0)["iops"],
            fob_ss_min_ratio=settings.spec.purge_probe.fob_ss_min_ratio,
            raw="raw/hir/purge-probe.json"), advance=3)

    def rest_of_round(r: int) -> None:   # the intervals before the measured one
        iops = _hir_fields(decl.points[0], shape.curve[r - 1], w, shape, r)["iops"]
        w.add(records.Prewrite(test=decl.test, when=f"precondition round {r}",
                               thread_count=h.thread_count, queue_depth=h.queue_depth,
                               seconds=rest, bytes_written=round(iops * rest * h.block_size),
                               iops=iops, raw=f"raw/hir/prewrite/precondition-round-{r}.json"),
              advance=rest)

    prepare = "wipc" if decl.parameters.get("wipc_block_size") else "purge"
    round_test(w, shape, decl.test, decl.title, decl.clause, decl.parameters,
               list(decl.points), _hir_fields, prepare=prepare, after_rounds=wait_states,
               before_round=rest_of_round if rest else None, after_purge=probe)


def _hir_fields(p: TestPoint, m: float, w: Writer, shape: Shape, r: int) -> dict:
    iops = 90_000 * m
    return {"iops": iops, "read_iops": 0.0, "write_iops": iops, "mbps": iops * 4096 / 1e6,
            "lat_mean_us": 128e6 / iops, "lat_max_us": 1.28e9 / iops}


def xsr_test(w: Writer, shape: Shape, settings) -> None:
    spec, x = settings.spec, settings.spec.xsr
    ar = active_range_bytes(_device(shape), spec.common.active_range_pct)
    w.add(records.TestStart(test="xsr", title="Cross Stimulus Recovery", clause=x.clause,
                            parameters=xsr.parameters(settings, ar)))
    w.add(records.Purge(test="xsr", method="nvme-format", command=None, ok=True, seconds=12.5,
                        deviation=False, steps=[], verification="format completed"))
    w.add(records.WriteCache(test="xsr", required="WCD", actual="write through",
                             settable=True, when="before test", how="nvme set-feature 6"))
    secs, offset = settings.point_seconds, 0.0
    for gp in xsr.groups(settings):
        n = gp.seconds // secs
        level = 2400.0 if gp.group.pattern == "seq" else 180.0
        dip = 0.35 if gp.number == 3 else 1.6 if gp.number == 2 else 1.0
        tps = [level * (1 + (dip - 1) * math.exp(-k / 3)) for k in range(n)]
        for k, tp in enumerate(tps):
            iops = tp * 1e6 / gp.group.block_size
            w.add(records.XsrInterval(
                test="xsr", group=gp.number, interval=k + 1, start_s=offset + k * secs,
                end_s=offset + (k + 1) * secs, tp_mbps=tp, iops=iops,
                lat_mean_us=32e6 / iops, clat_max_us=3.2e8 / iops), advance=secs)
        rec = xsr.recovery_time(tps, secs, x.recovery_band_pct, x.recovery_sustain,
                                x.final_level_fraction)
        first = gp.number == 1
        w.add(records.XsrGroup(
            test="xsr", group=gp.number, pattern=gp.group.pattern,
            block_size=gp.group.block_size, seconds=gp.seconds, intervals=n,
            end_tp_mbps=tps[-1], final_level_mbps=rec.final_level,
            peak_lat_mean_us=max(32e6 * gp.group.block_size / (t * 1e6) for t in tps),
            peak_clat_max_us=max(3.2e8 * gp.group.block_size / (t * 1e6) for t in tps),
            recovery_s=None if first else rec.seconds, recovered=None if first else rec.recovered,
            raw=f"raw/xsr/group-{gp.number}.json"))
        offset += gp.seconds
    w.add(records.TestEnd(test="xsr", status=records.COMPLETE, rounds=3, steady_round=None,
                          window=[1, 3], message="3 access groups done"))
