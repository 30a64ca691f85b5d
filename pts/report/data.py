"""Load a run folder (run.json + ledger.jsonl, docs/results-format.md) into `model.Run`.

Only stored data is read: no device, no fio. Unknown record types are skipped (newer writers
may add some); records are grouped per test in order of first appearance.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Iterable
from pathlib import Path

from pts.procedure import steady_state
from pts.report import verdict
from pts.report.model import (
    COMPLETE,
    ERROR,
    HEALTH_FAILURE,
    INCOMPLETE,
    NOT_STEADY,
    STEADY,
    Cell,
    Deviation,
    Device,
    DeviceCounters,
    Point,
    Purge,
    Round,
    Run,
    RunFolderError,
    Sample,
    TestEnd,
    TestResult,
    Tracking,
    Wipc,
    WriteCache,
)
from pts.results.ledger import LedgerError, Record, read_ledger
from pts.tools.nvme import SMART_FIELDS

RUN_JSON, LEDGER = "run.json", "ledger.jsonl"
DEVICE_FIELDS = frozenset(f.name for f in dataclasses.fields(Device))
EVIDENCE_FIELDS = tuple(f.name for f in dataclasses.fields(steady_state.SteadyStateResult))
COUNTER_FIELDS = tuple(f.name for f in dataclasses.fields(DeviceCounters)
                       if f.name not in ("when", "round", "source", "health", "error"))
ROUND_WHEN = re.compile(r"after round (\d+)$")


def load_run(folder: str | Path) -> Run:
    """Read `folder`; raise RunFolderError naming the file (and line) if it cannot be used."""
    folder = Path(folder)
    if not folder.is_dir():
        raise RunFolderError(f"run folder {folder} does not exist or is not a directory")
    info = _read_run_json(folder / RUN_JSON)
    try:
        records, notes = read_ledger(folder / LEDGER)
    except LedgerError as exc:
        raise RunFolderError(str(exc)) from None
    tests = []
    for name, recs in _group_by_test(records).items():
        test, test_notes = _build_test(name, recs, folder / LEDGER)
        tests.append(test)
        notes.extend(test_notes)
    device = _device(info.get("device") or {})
    deviations = _all_deviations(info, records, tests)
    return Run(
        folder=folder.resolve(),
        run_id=str(info.get("run_id") or folder.name),
        started=info.get("started"),
        finished=max((r.data["time"] for r in records if _is_number(r.data.get("time"))),
                     default=None),
        device=device,
        platform=dict(info.get("platform") or {}),
        tools=dict(info.get("tools") or {}),
        spec=dict(info.get("spec") or {}),
        options=dict(info.get("options") or {}),
        tests=tuple(tests),
        deviations=deviations,
        verdict=verdict.judge(device, tests, deviations),
        notes=tuple(notes),
        device_extra={k: v for k, v in (info.get("device") or {}).items()
                      if k not in DEVICE_FIELDS},
    )


def _read_run_json(path: Path) -> dict:
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunFolderError(f"no {path.name} in {path.parent}: not a run folder") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunFolderError(f"cannot read {path}: {exc}") from None
    if not isinstance(info, dict):
        raise RunFolderError(f"{path} does not hold a JSON object")
    return info


def _device(d: dict) -> Device:
    return Device(
        path=str(d.get("path", "unknown")),
        kname=str(d.get("kname", "unknown")),
        model=str(d.get("model") or "unknown model"),
        serial=str(d.get("serial") or "unknown serial"),
        firmware=str(d.get("firmware") or "unknown"),
        capacity_bytes=_int_or_none(d.get("capacity_bytes")),
        logical_sector=_int_or_none(d.get("logical_sector")),
        physical_sector=_int_or_none(d.get("physical_sector")),
        transport=str(d.get("transport") or "unknown"),
        identity_source=str(d.get("identity_source") or "unknown"),
        # Not recorded stays None (and the verdict treats it as not compliant).
        emulated=d["emulated"] if isinstance(d.get("emulated"), bool) else None,
    )


def _group_by_test(records: list[Record]) -> dict[str, list[Record]]:
    groups: dict[str, list[Record]] = {}
    for rec in records:
        test = rec.data.get("test")
        if rec.type in _PARSERS and isinstance(test, str):
            groups.setdefault(test, []).append(rec)
    return groups


def _all_deviations(info: dict, records: list[Record], tests: list[TestResult]):
    """run.json deviations, then ledger deviation records."""
    found = [Deviation(str(text), "run.json") for text in info.get("deviations") or ()]
    found += [Deviation(str(r.data.get("text") or "(deviation record without text)"), "ledger",
                        r.data.get("test"))
              for r in records if r.type == "deviation"]
    return tuple(found)


# ----------------------------------------------------------------------------- one test

def _build_test(name: str, recs: list[Record], path: Path) -> tuple[TestResult, list[str]]:
    by_type: dict[str, list] = {}
    for rec in recs:
        try:
            parsed = _PARSERS[rec.type](rec, path)
        except (TypeError, ValueError, KeyError, IndexError) as exc:
            raise RunFolderError(f"{path} line {rec.line}: bad {rec.type} record: {exc}") from None
        by_type.setdefault(rec.type, []).append(parsed)
    start = _last(by_type.get("test_start")) or {}
    params = dict(start.get("parameters") or {})
    points = _latest(by_type.get("point", []), key=lambda p: (p.round, p.index or 0, p.rw_mix,
                                                               p.block_size))
    rounds = _latest(by_type.get("round", []), key=lambda r: r.number)
    end = _last(by_type.get("test_end"))
    tracking = _tracking(params, rounds)
    window = _window(end, rounds, int(params.get("window_rounds") or steady_state.WINDOW_ROUNDS))
    evidence, notes = _window_evidence(name, tracking, rounds, window, params)
    state = _state(end)
    partial = TestResult(
        name=name, title=str(start.get("title") or name.upper()), clause=start.get("clause"),
        parameters=params, tracking=tracking, purge=_last(by_type.get("purge")),
        write_caches=tuple(by_type.get("write_cache", ())), wipc=_last(by_type.get("wipc")),
        points=points, rounds=rounds, deviations=tuple(by_type.get("deviation", ())),
        end=end, window=window, cells=(), window_evidence=evidence, state=state,
        status=_status(state, end, rounds, window),
        counters=_one_per_when(by_type.get("device_counters", [])),
        samples=_latest(by_type.get("sample", []), key=lambda x: x.number),
        fob_points=_latest(by_type.get("fob_point", []), key=lambda p: (p.index or 0,)),
        result=_last(by_type.get("wsat_result")) or {},
    )
    cells = window_cells(partial, "iops")
    return dataclasses.replace(partial, cells=cells), notes


def window_cells(test: TestResult, metric: str) -> tuple[Cell, ...]:
    """Per (R/W mix, block size), in loop order, the mean of `metric` (a Point field such as
    "iops", "mbps", "lat_mean_us") over the measurement-window rounds. A cell recorded as
    N/A stays N/A; a cell with no value in the window has mean None, never 0."""
    window = set(test.window_rounds)
    cells = []
    for mix in test.rw_mixes:
        for bs in test.block_sizes:
            mine = [p for p in test.points if p.rw_mix == mix and p.block_size == bs]
            na = [p for p in mine if p.na]
            if na:
                cells.append(Cell(mix, bs, None, True, na[-1].reason, 0))
                continue
            values = [p.get(metric) for p in mine
                      if p.round in window and p.get(metric) is not None]
            mean = math.fsum(values) / len(values) if values else None
            cells.append(Cell(mix, bs, mean, False, None, len(values)))
    return tuple(cells)


def fob_vs_window(test: TestResult, metric: str = "iops"):
    """Per cell with a --fob-sweep value: (R/W mix, block size, FOB value, window mean,
    FOB / window mean or None), in loop order."""
    fob = {(p.rw_mix, p.block_size): p.get(metric) for p in test.fob_points}
    out = []
    for cell in window_cells(test, metric):
        first = fob.get((cell.rw_mix, cell.block_size))
        if first is None:
            continue
        ratio = first / cell.mean if cell.mean else None
        out.append((cell.rw_mix, cell.block_size, first, cell.mean, ratio))
    return out


def _tracking(params: dict, rounds: tuple[Round, ...]) -> tuple[Tracking, ...]:
    declared = [t for t in params.get("tracking") or () if isinstance(t, dict) and "label" in t]
    if declared:
        return tuple(Tracking(str(t["label"]), t.get("rw_mix"), _int_or_none(t.get("block_size")))
                     for t in declared)
    labels = dict.fromkeys(label for r in rounds for label in r.tracking)
    return tuple(Tracking(label, None, None) for label in labels)


def _window(end: TestEnd | None, rounds: tuple[Round, ...], size: int):
    """test_end.window; for a run cut short, the last `size` completed rounds."""
    if end is not None and end.window is not None:
        return end.window
    if not rounds:
        return None
    tail = [r.number for r in rounds][-size:]
    return (tail[0], tail[-1])


def _window_evidence(name, tracking, rounds, window, params) -> tuple[dict, list[str]]:
    """Evidence stored in the round record that closes the window; if that record has none
    (a window shorter than window_rounds), it is recomputed with steady_state.check."""
    if window is None:
        return {t.label: None for t in tracking}, []
    closing = next((r for r in rounds if r.number == window[1]), None)
    evidence, notes = {}, []
    for t in tracking:
        ev = closing.evidence.get(t.label) if closing else None
        if ev is None:
            ev = _recompute(t.label, rounds, window, params)
            if ev is not None:
                notes.append(f"{name}: steady-state evidence of {t.label} for rounds "
                             f"{window[0]}..{window[1]} recomputed by the report (not in ledger)")
        evidence[t.label] = ev
    return evidence, notes


def _recompute(label, rounds, window, params):
    pairs = [(r.number, r.tracking[label]) for r in rounds
             if window[0] <= r.number <= window[1] and _is_number(r.tracking.get(label))]
    if len(pairs) < 2:
        return None
    limits = {k: float(params[k]) for k in ("max_data_excursion", "max_slope_excursion")
              if _is_number(params.get(k))}
    return steady_state.check([v for _, v in pairs], [n for n, _ in pairs],
                              window=len(pairs), **limits)


def _state(end: TestEnd | None) -> str:
    if end is None or end.status == "interrupted":
        return INCOMPLETE
    return end.status if end.status in (STEADY, NOT_STEADY, COMPLETE, HEALTH_FAILURE) \
        else ERROR


def _status(state: str, end: TestEnd | None, rounds: tuple[Round, ...], window) -> str:
    done = end.rounds if end is not None and end.rounds is not None else len(rounds)
    span = f"window {window[0]}..{window[1]}" if window else "no measurement window"
    if state == STEADY:
        x = end.steady_round if end.steady_round is not None else (window or (0, done))[1]
        return f"Steady state reached at round {x} ({span})"
    if state == NOT_STEADY:
        return f"STEADY STATE NOT ACHIEVED after {done} rounds ({span})"
    if state == COMPLETE:
        # The stop condition only: the test's summary page gives the rest of the message.
        return f"Completed (no steady state required): {end.message.split(';')[0]}"
    if state == HEALTH_FAILURE:
        return end.message
    if state == ERROR:
        return f"ERROR after {done} rounds ({end.status}): {end.message}"
    why = end.message if end is not None else "no test_end record"
    return f"INCOMPLETE: {why}; {done} rounds completed ({span})"


# ----------------------------------------------------------------------------- records

def _req(rec: Record, key: str, path: Path):
    if rec.data.get(key) is None:
        raise RunFolderError(f"{path} line {rec.line}: {rec.type} record has no \"{key}\"")
    return rec.data[key]


def _test_start(rec: Record, path: Path) -> dict:
    params = rec.data.get("parameters")
    if params is not None and not isinstance(params, dict):
        raise RunFolderError(f"{path} line {rec.line}: test_start \"parameters\" is not an object")
    return rec.data


def _purge(rec: Record, path: Path) -> Purge:
    d = rec.data
    command = d.get("command")
    return Purge(method=str(_req(rec, "method", path)),
                 command=None if command is None else tuple(str(a) for a in command),
                 ok=bool(d.get("ok")), seconds=d.get("seconds"),
                 deviation=bool(d.get("deviation")),
                 verification=str(d.get("verification") or ""),
                 steps=tuple(tuple(str(a) for a in s) for s in d.get("steps") or ()),
                 error=str(d.get("error") or ""))


def _write_cache(rec: Record, path: Path) -> WriteCache:
    d = rec.data
    return WriteCache(required=str(_req(rec, "required", path)), actual=str(d.get("actual")),
                      settable=bool(d.get("settable")), when=str(d.get("when") or ""))


def _wipc(rec: Record, path: Path) -> Wipc:
    d = rec.data
    return Wipc(block_size=_int_or_none(d.get("block_size")),
                bytes_expected=_int_or_none(d.get("bytes_expected")),
                bytes_written=_int_or_none(d.get("bytes_written")),
                seconds=d.get("seconds"), thread_count=_int_or_none(d.get("thread_count")),
                queue_depth=_int_or_none(d.get("queue_depth")), raw=d.get("raw"))


def _point(rec: Record, path: Path) -> Point:
    d = rec.data
    return Point(
        round=int(_req(rec, "round", path)), index=_int_or_none(d.get("index")),
        rw_mix=str(_req(rec, "rw_mix", path)), read_pct=_float_or_none(d.get("read_pct")),
        block_size=int(_req(rec, "block_size", path)), na=bool(d.get("na")),
        reason=d.get("reason"),
        **{k: _float_or_none(d.get(k)) for k in ("iops", "read_iops", "write_iops", "mbps",
                                                  "lat_mean_us", "lat_max_us", "start", "end")},
        values={k: float(v) for k, v in d.items() if _is_number(v)},
    )


def _sample(rec: Record, path: Path) -> Sample:
    d = rec.data
    steady = d.get("steady")
    return Sample(
        number=int(_req(rec, "sample", path)), partial=bool(d.get("partial")),
        steady=steady if isinstance(steady, bool) else None,
        **{k: _float_or_none(d.get(k)) for k in (
            "start_s", "end_s", "iops", "lat_mean_us", "clat_max_us", "clat_percentile_us",
            "tgbw_gb", "drive_fills")})


def _wsat_result(rec: Record, path: Path) -> dict:
    return dict(rec.data)


def _round(rec: Record, path: Path) -> Round:
    tracking = rec.data.get("tracking") or {}
    evidence = rec.data.get("steady_state") or {}
    if not isinstance(tracking, dict) or not isinstance(evidence, dict):
        raise RunFolderError(f"{path} line {rec.line}: round \"tracking\"/\"steady_state\" "
                             "must be objects")
    return Round(number=int(_req(rec, "round", path)),
                 tracking={str(k): float(v) for k, v in tracking.items() if _is_number(v)},
                 evidence={str(k): _evidence(v, rec, path) for k, v in evidence.items()},
                 steady=bool(rec.data.get("steady")))


def _evidence(d, rec: Record, path: Path) -> steady_state.SteadyStateResult | None:
    if d is None:
        return None
    missing = [f for f in EVIDENCE_FIELDS if f not in d]
    if missing:
        raise RunFolderError(f"{path} line {rec.line}: steady-state evidence lacks "
                             f"{', '.join(missing)}")
    kwargs = {f: d[f] for f in EVIDENCE_FIELDS}
    kwargs["rounds"], kwargs["values"] = tuple(d["rounds"]), tuple(d["values"])
    return steady_state.SteadyStateResult(**kwargs)


def _device_counters(rec: Record, path: Path) -> DeviceCounters:
    d = rec.data
    counters = d.get("counters")
    error = str(d["error"]) if d.get("error") else None
    if counters is None and error:          # a read that failed: recorded, with why
        counters = {}
    if not isinstance(counters, dict):
        raise RunFolderError(f"{path} line {rec.line}: device_counters record has no "
                             "\"counters\" object")
    when = str(_req(rec, "when", path))
    # Writers other than ours may leave "round" out; "after round N" still says which.
    number = _int_or_none(d.get("round"))
    if number is None and (m := ROUND_WHEN.match(when)):
        number = int(m.group(1))
    # Counters come and go with the source (emulator, smart-log): unknown keys are ignored,
    # missing ones stay None and show as n/a.
    health = {k: _int_or_none(counters.get(k)) for k in SMART_FIELDS} \
        if d.get("source") == "smart-log" and not error else None
    return DeviceCounters(when=when, round=number, source=str(d.get("source") or "unknown"),
                          health=health, error=error,
                          **{k: _int_or_none(counters.get(k)) for k in COUNTER_FIELDS})


def _deviation(rec: Record, path: Path) -> Deviation:
    return Deviation(str(_req(rec, "text", path)), "ledger", rec.data.get("test"))


def _test_end(rec: Record, path: Path) -> TestEnd:
    d = rec.data
    window = d.get("window")
    return TestEnd(status=str(_req(rec, "status", path)), rounds=_int_or_none(d.get("rounds")),
                   steady_round=_int_or_none(d.get("steady_round")),
                   window=None if not window else (int(window[0]), int(window[1])),
                   message=str(d.get("message") or ""))


_PARSERS = {
    "test_start": _test_start, "purge": _purge, "write_cache": _write_cache, "wipc": _wipc,
    "point": _point, "round": _round, "deviation": _deviation, "test_end": _test_end,
    "device_counters": _device_counters, "sample": _sample, "wsat_result": _wsat_result,
    "fob_point": _point,
}


# ----------------------------------------------------------------------------- helpers

def _latest(items: Iterable, key) -> tuple:
    """One item per key, the last one written (a resumed run may redo the round in flight),
    in key order (round number first, so loop order is kept)."""
    chosen = {}
    for item in items:
        chosen[key(item)] = item
    return tuple(chosen[k] for k in sorted(chosen))


def _one_per_when(items: Iterable[DeviceCounters]) -> tuple[DeviceCounters, ...]:
    """Ledger order, one record per `when`: a step recorded again (a resumed run redoing it)
    replaces the earlier record and takes its own, later, place."""
    chosen: dict[str, DeviceCounters] = {}
    for item in items:
        chosen.pop(item.when, None)
        chosen[item.when] = item
    return tuple(chosen.values())


def _last(items):
    return items[-1] if items else None


def _is_number(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _int_or_none(v) -> int | None:
    return int(v) if _is_number(v) else None


def _float_or_none(v) -> float | None:
    return float(v) if _is_number(v) else None
