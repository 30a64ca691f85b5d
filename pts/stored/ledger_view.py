"""The report's view of the ledger: each typed record (pts.results.records, the one ledger
schema) checked and converted into the report model. A record the report cannot use raises
RunFolderError naming the file and line; fields a record lacks read as None / n/a.
"""

from __future__ import annotations

import dataclasses
import math
import re

from pts.procedure import steady_state
from pts.results import records
from pts.stored.model import (
    CountersView,
    DeviationView,
    PointView,
    PurgeProbeView,
    PurgeView,
    RoundModeView,
    RoundView,
    RunFolderError,
    SampleView,
    TestEndView,
    WipcView,
    WriteCacheView,
)
from pts.tools.nvme import SMART_FIELDS
from pts.tools.smartctl import FIELDS as SMARTCTL_FIELDS

EVIDENCE_FIELDS = tuple(f.name for f in dataclasses.fields(steady_state.SteadyStateResult))
COUNTER_FIELDS = tuple(f.name for f in dataclasses.fields(CountersView)
                       if f.name not in ("when", "round", "source", "health", "error"))
ROUND_WHEN = re.compile(r"after round (\d+)$")


def parse(rec: records.Record, where: str):
    """The report model of one record (`where`: "ledger.jsonl line N" for messages)."""
    try:
        return PARSERS[rec.TYPE](rec, where)
    except (TypeError, ValueError, KeyError, IndexError) as exc:
        raise RunFolderError(f"{where}: bad {rec.TYPE} record: {exc}") from None


def _req(rec: records.Record, key: str, where: str):
    value = getattr(rec, key, None)
    if value is None:
        raise RunFolderError(f"{where}: {rec.TYPE} record has no \"{key}\"")
    return value


def _test_start(rec: records.TestStart, where: str) -> dict:
    if rec.parameters is not None and not isinstance(rec.parameters, dict):
        raise RunFolderError(f"{where}: test_start \"parameters\" is not an object")
    if rec.parameters:          # its family's record: an unknown or missing option says so here
        _ = rec.typed
    return {"title": rec.title, "clause": rec.clause, "parameters": rec.parameters,
            "time": rec.time if is_number(rec.time) else None}


def _purge(rec: records.Purge, where: str) -> PurgeView:
    return PurgeView(method=str(_req(rec, "method", where)),
                 command=None if rec.command is None else tuple(str(a) for a in rec.command),
                 ok=bool(rec.ok), seconds=rec.seconds, deviation=bool(rec.deviation),
                 verification=str(rec.verification or ""),
                 steps=tuple(tuple(str(a) for a in s) for s in rec.steps or ()),
                 error=str(rec.error or ""))


def _write_cache(rec: records.WriteCache, where: str) -> WriteCacheView:
    return WriteCacheView(required=str(_req(rec, "required", where)), actual=str(rec.actual),
                      settable=bool(rec.settable), when=str(rec.when or ""))


def _wipc(rec: records.Wipc, where: str) -> WipcView:
    return WipcView(block_size=int_or_none(rec.block_size),
                bytes_expected=int_or_none(rec.bytes_expected),
                bytes_written=int_or_none(rec.bytes_written), seconds=rec.seconds,
                thread_count=int_or_none(rec.thread_count),
                queue_depth=int_or_none(rec.queue_depth), raw=rec.raw)


def _point(rec: records.Point, where: str) -> PointView:
    return PointView(
        round=int(_req(rec, "round", where)), index=int_or_none(rec.index),
        rw_mix=str(_req(rec, "rw_mix", where)), read_pct=float_or_none(rec.read_pct),
        block_size=int(_req(rec, "block_size", where)), na=bool(rec.na), reason=rec.reason,
        **{k: float_or_none(rec.get(k)) for k in ("iops", "read_iops", "write_iops", "mbps",
                                                    "lat_mean_us", "lat_max_us", "start",
                                                    "end")},
        values={k: float(v) for k, v in rec.to_json().items() if is_number(v)},
        streams=tuple(dict(s) for s in rec.get("streams") or () if isinstance(s, dict)),
        log_vs_fio=tuple(dict(s) for s in rec.get("log_vs_fio") or () if isinstance(s, dict)),
        host_bound=hb if isinstance(hb := rec.get("host_bound"), dict) else None,
    )


def _sample(rec: records.Sample, where: str) -> SampleView:
    return SampleView(
        number=int(_req(rec, "sample", where)), partial=bool(rec.partial),
        steady=rec.steady if isinstance(rec.steady, bool) else None,
        **{k: float_or_none(getattr(rec, k)) for k in (
            "start_s", "end_s", "iops", "lat_mean_us", "clat_max_us", "clat_percentile_us",
            "tgbw_gb", "drive_fills")})


def _wsat_result(rec: records.WsatResult, where: str) -> dict:
    return rec.to_json()


def _round(rec: records.Round, where: str) -> RoundView:
    tracking, evidence = rec.tracking or {}, rec.steady_state or {}
    if not isinstance(tracking, dict) or not isinstance(evidence, dict):
        raise RunFolderError(f"{where}: round \"tracking\"/\"steady_state\" must be objects")
    return RoundView(number=int(_req(rec, "round", where)),
                 tracking={str(k): float(v) for k, v in tracking.items() if is_number(v)},
                 evidence={str(k): _evidence(v, where) for k, v in evidence.items()},
                 steady=bool(rec.steady))


def _evidence(d, where: str) -> steady_state.SteadyStateResult | None:
    if d is None:
        return None
    missing = [f for f in EVIDENCE_FIELDS if f not in d]
    if missing:
        raise RunFolderError(f"{where}: steady-state evidence lacks {', '.join(missing)}")
    kwargs = {f: d[f] for f in EVIDENCE_FIELDS}
    kwargs["rounds"], kwargs["values"] = tuple(d["rounds"]), tuple(d["values"])
    return steady_state.SteadyStateResult(**kwargs)


def _device_counters(rec: records.DeviceCounters, where: str) -> CountersView:
    counters = rec.counters
    error = str(rec.error) if rec.error else None
    if counters is None and error:          # a read that failed: recorded, with why
        counters = {}
    if not isinstance(counters, dict):
        raise RunFolderError(f"{where}: device_counters record has no \"counters\" object")
    when = str(_req(rec, "when", where))
    # Writers other than ours may leave "round" out; "after round N" still says which.
    number = int_or_none(rec.round)
    if number is None and (m := ROUND_WHEN.match(when)):
        number = int(m.group(1))
    # Counters come and go with the source (emulator, smart-log): unknown keys are ignored,
    # missing ones stay None and show as n/a.
    health = {k: int_or_none(counters.get(k)) for k in SMART_FIELDS} \
        if rec.source == "smart-log" and not error else None
    if rec.source == "smartctl" and not error:
        health = {k: int_or_none(counters.get(k)) for k in SMARTCTL_FIELDS}
    return CountersView(when=when, round=number, source=str(rec.source or "unknown"),
                          health=health, error=error,
                          **{k: int_or_none(counters.get(k)) for k in COUNTER_FIELDS})


def _deviation(rec: records.Deviation, where: str) -> DeviationView:
    return DeviationView(str(_req(rec, "text", where)), "ledger", rec.test)


def _test_end(rec: records.TestEnd, where: str) -> TestEndView:
    window = rec.window
    return TestEndView(status=str(_req(rec, "status", where)), rounds=int_or_none(rec.rounds),
                   steady_round=int_or_none(rec.steady_round),
                   window=None if not window else (int(window[0]), int(window[1])),
                   message=str(rec.message or ""),
                   time=rec.time if is_number(rec.time) else None)


def _round_mode(rec: records.RoundMode, where: str) -> RoundModeView:
    return RoundModeView(round=int(_req(rec, "round", where)),
                         mode=str(_req(rec, "mode", where)), reason=str(rec.reason or ""))


def _purge_probe(rec: records.PurgeProbe, where: str) -> PurgeProbeView:
    return PurgeProbeView(block_size=int(_req(rec, "block_size", where)),
                          thread_count=int_or_none(rec.thread_count),
                          queue_depth=int_or_none(rec.queue_depth),
                          seconds=float_or_none(rec.seconds),
                          iops=float(_req(rec, "iops", where)),
                          fob_ss_min_ratio=float(_req(rec, "fob_ss_min_ratio", where)))


PARSERS = {
    "test_start": _test_start, "purge": _purge, "write_cache": _write_cache, "wipc": _wipc,
    "point": _point, "round": _round, "deviation": _deviation, "test_end": _test_end,
    "device_counters": _device_counters, "sample": _sample, "wsat_result": _wsat_result,
    "fob_point": _point, "round_mode": _round_mode,
    "purge_probe": _purge_probe,
}
# HIR / XSR records reach their pages as the typed records (read by
# pts.report.pages.recovery), and so do the response-time histograms (DIRTH/CBW operating
# points, WSAT; TestResult.histograms).
RECOVERY_TYPES = ("hir_baseline", "hir_write", "hir_state", "xsr_interval", "xsr_group")
PARSERS.update({t: (lambda rec, where: rec) for t in (*RECOVERY_TYPES, "response_histogram",
                                                      "host_ceiling")})


def is_number(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def int_or_none(v) -> int | None:
    return int(v) if is_number(v) else None


def float_or_none(v) -> float | None:
    return float(v) if is_number(v) else None
