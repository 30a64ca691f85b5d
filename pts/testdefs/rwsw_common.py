"""What rwsw-replay and rwsw-dirth share beyond rwsw_wsat's helpers: the job of an ATW point
at its own streams, OIO and length, its achieved-share fields, and the preconditioning phase
both run before their measured pass: the ATW (all its streams) at one OIO, rounds of one
point until its IOPS is steady (the PTS 5-round rule), from the purged drive (no WIPC).

The preconditioning is its own ledger test ("<test>-preconditioning", as DIRTH's), so the
report shows its rounds and steady-state evidence, and --resume goes on after it.
"""

from __future__ import annotations

import dataclasses

from pts.config.settings import Settings
from pts.config.spec import RwMix
from pts.device.identity import BlockDevice, active_range_bytes
from pts.procedure.rounds import Outcome, TestPoint
from pts.procedure.runner import RoundTest, recorded_test, resumed_history, run_round_test
from pts.results import records
from pts.run import Run
from pts.testdefs import rwsw_wsat
from pts.workload import applied
from pts.workload.atw import Stream, Workload


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
    f = rwsw_wsat.section(settings, "rwsw_fio")
    ar = active_range_bytes(device, settings.spec.common.active_range_pct)

    def job(p: TestPoint):
        js = applied.sections(w, f"p{p.index:02d}", flow_id=p.index + 1, runtime=runtime(p),
                              ar_bytes=ar, split=split or f["oio_split"],
                              flow_sleep_us=f["flow_sleep_us"], streams=streams(p),
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
    tolerance = rwsw_wsat.section(settings, "rwsw_atw")["share_tolerance_pct"]
    return lambda p, r: applied.achieved(streams(p), r, tolerance, oio(p),
                                         applied.nominal_oio(job(p)))


def atw_point(index: int, streams: tuple[Stream, ...], tc: int, qd: int,
              name: str) -> TestPoint:
    return TestPoint(index, RwMix(rwsw_wsat.read_pct(streams)), 0, access="ATW",
                     workload=name, thread_count=tc, queue_depth=qd)


def declare_precondition(settings: Settings, device: BlockDevice, test: str, title: str,
                         clause: str, seconds: int, tc: int, qd: int,
                         extra: dict | None = None) -> RoundTest:
    """The ATW at TC x QD, rounds of one `seconds` point until its IOPS is steady."""
    w = rwsw_wsat.workload(settings, device)
    point = atw_point(0, w.streams, tc, qd, f"{len(w.streams)} streams")
    tracking = {"ATW IOPS": point}
    job = point_job(settings, device, w, lambda p: seconds, lambda p: w.streams,
                    lambda p: (tc, qd))
    return RoundTest(
        test=precondition_test(test), title=f"{title} Preconditioning", clause=clause,
        parameters=rwsw_wsat.parameters(settings, device, w, seconds, settings.max_rounds,
                                        tracking, job) | {
            "precondition_oio": [tc, qd], "continued_by": test} | (extra or {}),
        points=(point,), tracking=tracking, value_key="iops", job=job,
        fields=rwsw_wsat.measured, thread_count=tc, queue_depth=qd, wipc_block_size=None,
        point_fields=share_fields(settings, lambda p: w.streams, lambda p: tc * qd, job),
        point_seconds=seconds, wipc_note="",
        measures=f"preconditioning: the ATW at TC{tc}/QD{qd}, IOPS and each stream's "
                 "achieved share; ")
