"""What the RWSW tests share (blktests' tests/nvme/rc: a group's helpers in one place; no
test imports another): the Applied Test Workload of --workload checked against the device,
the spec file's sections, the round length, the measured fields and test_start parameters of
an ATW point, its job at its own streams, OIO and length and its achieved-share fields, the
--dry-run plan, and the preconditioning phase rwsw-replay and rwsw-dirth run before their
measured pass: the ATW (all its streams) at one OIO, rounds of one point until its IOPS is
steady (the PTS 5-round rule), from the purged drive (no WIPC).

The preconditioning is its own ledger test ("<test>-preconditioning", as DIRTH's), so the
report shows its rounds and steady-state evidence, and --resume goes on after it.
"""

from __future__ import annotations

import dataclasses

from pts.config.settings import Settings
from pts.config.spec import RwMix
from pts.device.identity import BlockDevice, active_range_bytes
from pts.procedure.plan import round_test_plan
from pts.procedure.rounds import Outcome, TestPoint
from pts.procedure.runner import (
    RoundTest,
    TestDefinitionError,
    recorded_test,
    resumed_history,
    run_round_test,
)
from pts.results import records
from pts.run import Run
from pts.testdefs import fields
from pts.testdefs import parameters as run_parameters
from pts.testdefs.rwsw.sections import (
    AtwSection,
    DirthSection,
    FioSection,
    StreamsSection,
    WsatSection,
)
from pts.tools.fio import Summary
from pts.workload import applied
from pts.workload.atw import Stream, Workload

NO_WORKLOAD = "the RWSW tests apply an Applied Test Workload: give one with --workload FILE"


def workload(settings: Settings, device: BlockDevice | None = None) -> Workload:
    """The ATW of --workload; with `device`, checked to be one this device can apply:
    O_DIRECT I/O is whole logical sectors, so a captured 4.5 KiB read (RocksDB's) cannot
    run on a 4 KiB-sector drive. Refused before anything is written, naming the fix."""
    if settings.workload is None:
        raise TestDefinitionError(NO_WORKLOAD)
    w = settings.workload
    sector = device.logical_sector if device is not None else 1
    odd = [s.key for s in w.streams if s.key.size % sector]
    if odd:
        listed = ", ".join(f"{k.label} ({k.size} bytes)" for k in odd)
        raise TestDefinitionError(
            f"ATW {w.name}: {listed} not a whole number of this device's logical sectors "
            f"({sector} bytes): the device cannot do such I/O. Nothing was written. Use a "
            f"device formatted with smaller sectors, or edit the workload file: round these "
            f"sizes up to a multiple of {sector} bytes, or drop those streams and normalise "
            "the shares again (docs/workload.md)")
    return w


def round_seconds(settings: Settings, section: type[WsatSection | StreamsSection | DirthSection]
                  ) -> int:
    """The spec file's round length, unless --point-seconds was given (a deviation where it
    is not the PTS point's length; given as 60, it is 60 s too)."""
    if settings.explicit("point_seconds"):
        return settings.point_seconds
    return section.of(settings).round_seconds


def read_pct(streams) -> int:
    return round(sum(s.share_pct for s in streams if s.key.direction == "R"))


def measured(s: Summary) -> dict:
    """The IOPS fields plus the bytes each direction moved (the stop rule's drive fills)."""
    return fields.basic(s) | {"read_bytes": s.read.io_bytes, "write_bytes": s.write.io_bytes,
                              "ios": s.read.total_ios + s.write.total_ios}


def apply_job(settings: Settings, device: BlockDevice, w: Workload, seconds: int,
              streams=None):
    """point -> its job sections (pts.workload.applied), with the spec's [rwsw_fio]."""
    f = FioSection.of(settings)
    ar = active_range_bytes(device, settings.spec.common.active_range_pct)
    return lambda p: applied.sections(
        w, f"p{p.index:02d}", flow_id=p.index + 1, runtime=seconds, ar_bytes=ar,
        split=f.oio_split, flow_sleep_us=f.flow_sleep_us,
        streams=None if streams is None else (streams[p.index],))


def parameters(settings: Settings, device: BlockDevice, w: Workload, seconds: int,
               max_rounds: int, tracking: dict[str, TestPoint], job) -> dict:
    ar = active_range_bytes(device, settings.spec.common.active_range_pct)
    f = FioSection.of(settings)
    jobs = [s for p in tracking.values() for s in job(p).sections]
    return run_parameters.common(settings, w.thread_count, w.queue_depth, ar) | {
        "access": "ATW", "point_seconds": seconds, "max_rounds": max_rounds,
        "tracking": [{"label": label, "rw_mix": str(p.rw_mix), "block_size": p.block_size}
                     for label, p in tracking.items()],
        "atw": {"name": w.name, "sha256": w.sha256, "path": settings.workload_path,
                "thread_count": w.thread_count, "queue_depth": w.queue_depth, "oio": w.oio,
                "streams": [{"stream": s.key.label, "share_pct": s.share_pct}
                            for s in w.streams],
                "provenance": w.provenance},
        "sections": [{"section": j.name, "rw": j.rw, "block_size": j.block_size,
                      "numjobs": j.numjobs, "iodepth": j.iodepth, "flow": j.flow,
                      "offset": j.offset, "size": j.size} for j in jobs],
        "oio_split": f.oio_split, "flow_sleep_us": f.flow_sleep_us,
        "share_tolerance_pct": AtwSection.of(settings).share_tolerance_pct,
        "capacity_bytes": device.capacity_bytes, "rwsw_spec": settings.spec.rwsw.title}


def precondition_test(test: str) -> str:
    return f"{test}-preconditioning"


def run_preconditioned(run: Run, title: str, phase: str, declare_precondition, declare,
                       measured) -> Outcome:
    """Both ledger tests: the preconditioning (`declare_precondition(settings, device)`),
    then the measured test (`declare(...)`, its body `measured(run, decl)`); the pytest item
    passes only if the preconditioning was steady and the measured test passed, the message
    naming both ("<title> preconditioning: ...; <phase>: ...")."""
    settings, dev = run.settings, run.device
    pre = run_round_test(run, declare_precondition(settings, dev))
    decl = declare(settings, dev)
    outcome = recorded_test(run, decl.test, decl.title, decl.clause, decl.parameters,
                            lambda: measured(run, decl), gate=None)
    if pre.steady:
        return outcome
    return dataclasses.replace(outcome, status=records.NOT_STEADY, message=(
        f"{title} preconditioning: {pre.message}; {phase}: {outcome.message}"))


def resumed_or_declared(run: Run, test: str, deviations: list[str]) -> dict:
    """The rounds of `test` a resumed run had recorded; none: a fresh test, whose
    `deviations` are recorded now (once, not again on resume)."""
    history = resumed_history(run, test, gate=None)
    if not history:
        for text in deviations:
            run.deviation(test, text)
    return history


def point_job(settings: Settings, device: BlockDevice, w: Workload, runtime, streams, oio,
              percentiles: tuple[float, ...] = (), split: str | None = None,
              flow: bool = True):
    """point -> its job sections (pts.workload.applied) with the spec's [rwsw_fio]:
    `runtime(p)` seconds, `streams(p)` at `oio(p)` = (TC, QD), spread by `split` (default
    [rwsw_fio] oio_split), with fio `flow` or not (pts.workload.applied.sections);
    `percentiles`: fio's total-latency percentiles and json+ bins on every section (DIRTH's
    histograms)."""
    f = FioSection.of(settings)
    ar = active_range_bytes(device, settings.spec.common.active_range_pct)

    def job(p: TestPoint):
        js = applied.sections(w, f"p{p.index:02d}", flow_id=p.index + 1, runtime=runtime(p),
                              ar_bytes=ar, split=split or f.oio_split,
                              flow_sleep_us=f.flow_sleep_us, streams=streams(p),
                              oio=oio(p), flow=flow)
        if not percentiles:
            return js
        return dataclasses.replace(js, sections=tuple(
            dataclasses.replace(j, lat_percentiles=percentiles) for j in js.sections))
    return job


def share_fields(settings: Settings, streams, oio, job):
    """point_fields of a RoundTest: each stream's achieved share against its target
    (`streams(p)`), the OIO target `oio(p)`, the nominal OIO of the point's sections
    (`job(p)`) and the OIO achieved (pts.workload.applied)."""
    tolerance = AtwSection.of(settings).share_tolerance_pct
    return lambda p, r: applied.achieved(streams(p), r, tolerance, oio(p),
                                         applied.nominal_oio(job(p)))


def atw_point(index: int, streams: tuple[Stream, ...], tc: int, qd: int,
              name: str) -> TestPoint:
    return TestPoint(index, RwMix(read_pct(streams)), 0, access="ATW",
                     workload=name, thread_count=tc, queue_depth=qd)


def declare_precondition(settings: Settings, device: BlockDevice, test: str, title: str,
                         clause: str, seconds: int, tc: int, qd: int,
                         extra: dict | None = None) -> RoundTest:
    """The ATW at TC x QD, rounds of one `seconds` point until its IOPS is steady."""
    w = workload(settings, device)
    point = atw_point(0, w.streams, tc, qd, f"{len(w.streams)} streams")
    tracking = {"ATW IOPS": point}
    job = point_job(settings, device, w, lambda p: seconds, lambda p: w.streams,
                    lambda p: (tc, qd))
    return RoundTest(
        test=precondition_test(test), title=f"{title} Preconditioning", clause=clause,
        parameters=parameters(settings, device, w, seconds, settings.max_rounds,
                                        tracking, job) | {
            "precondition_oio": [tc, qd], "continued_by": test} | (extra or {}),
        points=(point,), tracking=tracking, value_key="iops", job=job,
        fields=measured, thread_count=tc, queue_depth=qd, wipc_block_size=None,
        point_fields=share_fields(settings, lambda p: w.streams, lambda p: tc * qd, job),
        point_seconds=seconds, wipc_note="",
        measures=f"preconditioning: the ATW at TC{tc}/QD{qd}, IOPS and each stream's "
                 "achieved share; ")


def plan_lines(settings: Settings, device: BlockDevice, declare_test) -> list[str]:
    """--dry-run: the round test's plan (its generated fio sections), the ATW and, for
    rwsw-wsat, the stop rule; without --workload, why the test would be skipped."""
    if settings.workload is None:
        return [f"skipped: {NO_WORKLOAD}"]
    decl = declare_test(settings, device)
    w = settings.workload
    lines = round_test_plan(settings, device, decl)
    lines.insert(1, f"ATW {w.name!r} ({settings.workload_path}, sha256 {w.sha256[:12]}): "
                    f"OIO {w.oio} (TC {w.thread_count} x QD {w.queue_depth}); streams "
                    + ", ".join(f"{s.key.label} {s.share_pct:g} %" for s in w.streams))
    if decl.stop is not None:
        lines.insert(2, f"stop rule: {decl.stop.fills:g} drive fills "
                        f"({decl.stop.fills * device.capacity_bytes:,.0f} bytes) or "
                        f"{decl.stop.hours:g} h, whichever first")
    return lines
