"""Load a run folder (run.json + ledger.jsonl, docs/results-format.md) into `model.RunView`.

Only stored data is read: no device, no fio. Unknown record types are skipped (newer writers
may add some); records are grouped per test in order of first appearance.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable
from pathlib import Path

from pts.procedure import steady_state
from pts.results import records
from pts.results.ledger import LedgerError, LedgerLine, read_ledger
from pts.results.parameters import SteadyParameters, typed
from pts.stored import (
    host_ceiling,
    ledger_view,
    power,
    power_phases,
    purge_check,
    readings,
    unwritten,
    verdict,
)
from pts.stored.cells import window_cells
from pts.stored.ledger_view import int_or_none, is_number
from pts.stored.model import (
    COMPLETE,
    ERROR,
    HEALTH_FAILURE,
    INCOMPLETE,
    NOT_STEADY,
    STEADY,
    CountersView,
    DeviationView,
    Device,
    RoundView,
    RunFolderError,
    RunView,
    TestEndView,
    TestResult,
    TrackingView,
)

RUN_JSON, LEDGER = "run.json", "ledger.jsonl"
DEVICE_FIELDS = frozenset(f.name for f in dataclasses.fields(Device))
EVIDENCE_FIELDS = tuple(f.name for f in dataclasses.fields(steady_state.SteadyStateResult))
COUNTER_FIELDS = tuple(f.name for f in dataclasses.fields(CountersView)
                       if f.name not in ("when", "round", "source", "health"))
ROUND_WHEN = re.compile(r"after round (\d+)$")


def load_run(folder: str | Path) -> RunView:
    """Read `folder`; raise RunFolderError naming the file (and line) if it cannot be used."""
    folder = Path(folder)
    if not folder.is_dir():
        raise RunFolderError(f"run folder {folder} does not exist or is not a directory")
    info = _read_run_json(folder / RUN_JSON)
    try:
        found, notes = read_ledger(folder / LEDGER)
    except LedgerError as exc:
        raise RunFolderError(str(exc)) from None
    kept = tuple(line.record for line in found)
    tests = []
    for name, recs in _group_by_test(found).items():
        test, test_notes = _build_test(name, recs, folder / LEDGER,
                                       tuple(r for r in kept if r.test == name))
        tests.append(test)
        notes.extend(test_notes)
    device = _device(info.get("device") or {})
    deviations = _all_deviations(info, found, tests)
    used = readings.collect(tests)
    return RunView(
        folder=folder.resolve(),
        run_id=str(info.get("run_id") or folder.name),
        started=info.get("started"),
        finished=max((t for t in (r.record.time for r in found) if is_number(t)),
                     default=None),
        device=device,
        platform=dict(info.get("platform") or {}),
        tools=dict(info.get("tools") or {}),
        spec=dict(info.get("spec") or {}),
        options=dict(info.get("options") or {}),
        tests=tuple(tests),
        deviations=deviations,
        verdict=verdict.judge(device, tests, deviations, readings.count(used)),
        readings=used,
        notes=tuple(notes),
        warnings=tuple(purge_check.warnings(tests) + unwritten.warnings(tests)
                       + host_ceiling.warnings(tests)),
        device_extra={k: v for k, v in (info.get("device") or {}).items()
                      if k not in DEVICE_FIELDS},
        report_info=_dict(info.get("report_info")),
        system=_dict(info.get("system")),
        records=kept,
    )


def run_json(folder: str | Path) -> tuple[dict, Device]:
    """run.json alone (no ledger): its object and the device it names, as load_run reads
    them; RunFolderError when it cannot be read. For a reader that must say what a folder
    is when its ledger cannot be read (pts.index)."""
    info = _read_run_json(Path(folder) / RUN_JSON)
    return info, _device(info.get("device") or {})


def _dict(value) -> dict:
    """A run.json block as a dict ({} when absent or not an object)."""
    return dict(value) if isinstance(value, dict) else {}


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
        capacity_bytes=int_or_none(d.get("capacity_bytes")),
        logical_sector=int_or_none(d.get("logical_sector")),
        physical_sector=int_or_none(d.get("physical_sector")),
        transport=str(d.get("transport") or "unknown"),
        identity_source=str(d.get("identity_source") or "unknown"),
        # Not recorded stays None (and the verdict treats it as not compliant).
        emulated=d["emulated"] if isinstance(d.get("emulated"), bool) else None,
    )


def _group_by_test(found: list[LedgerLine]) -> dict[str, list[LedgerLine]]:
    groups: dict[str, list[LedgerLine]] = {}
    for rec in found:
        test = rec.record.test
        if rec.type in ledger_view.PARSERS and isinstance(test, str):
            groups.setdefault(test, []).append(rec)
    return groups


def _all_deviations(info: dict, found: list[LedgerLine], tests: list[TestResult]):
    """run.json deviations, then ledger deviation records."""
    out = [DeviationView(str(text), "run.json") for text in info.get("deviations") or ()]
    out += [DeviationView(str(r.text or "(deviation record without text)"), "ledger", r.test)
            for r in (rec.record for rec in found) if isinstance(r, records.Deviation)]
    return tuple(out)


# ----------------------------------------------------------------------------- one test

def _build_test(name: str, recs: list[LedgerLine], path: Path,
                mine: tuple[records.Record, ...]) -> tuple[TestResult, list[str]]:
    by_type: dict[str, list] = {}
    for rec in recs:
        parsed = ledger_view.parse(rec.record, f"{path} line {rec.line}")
        by_type.setdefault(rec.type, []).append(parsed)
    start = _last(by_type.get("test_start")) or {}
    params = dict(start.get("parameters") or {})
    steady = _steady(name, params)
    points = _latest(by_type.get("point", []), key=lambda p: (p.round, p.index or 0, p.rw_mix,
                                                               p.block_size))
    rounds = _latest(by_type.get("round", []), key=lambda r: r.number)
    end = _last(by_type.get("test_end"))
    tracking = _tracking(steady, rounds)
    # A test without rounds (XSR's access groups, WSAT's samples) has no measurement window,
    # whatever its test_end says (XSR writes its groups 1..3 there).
    window = _window(end, rounds, int(steady and steady.window_rounds or
                                      steady_state.WINDOW_ROUNDS)) if rounds else None
    evidence, notes = _window_evidence(name, tracking, rounds, window, steady)
    state = _state(end)
    partial = TestResult(
        name=name, title=str(start.get("title") or name.upper()), clause=start.get("clause"),
        parameters=params, tracking=tracking, purge=_last(by_type.get("purge")),
        write_caches=tuple(by_type.get("write_cache", ())), wipc=_last(by_type.get("wipc")),
        points=power.merged(points, mine), rounds=rounds,
        deviations=tuple(by_type.get("deviation", ())),
        end=end, window=window, cells=(), window_evidence=evidence, state=state,
        status=_status(state, end, rounds, window, name),
        counters=_one_per_when(by_type.get("device_counters", [])),
        samples=_latest(by_type.get("sample", []), key=lambda x: x.number),
        fob_points=power.merged(_latest(by_type.get("fob_point", []),
                                        key=lambda p: (p.index or 0,)), mine),
        result=power_phases.result_figures(_last(by_type.get("wsat_result")) or {},
                                           _latest(by_type.get("sample", []),
                                                   key=lambda x: x.number), mine),
        round_modes=tuple(by_type.get("round_mode", ())),
        recovery=power_phases.with_figures(tuple(
            r for rec, r in zip(recs, _parsed_in_order(by_type, recs), strict=True)
            if rec.type in ledger_view.RECOVERY_TYPES), mine),
        purge_probe=_last(by_type.get("purge_probe")),
        histograms=tuple(by_type.get("response_histogram", ())),
        host_ceiling=_last(by_type.get("host_ceiling")),
        started=start.get("time"), records=power_phases.with_figures(mine, mine),
    )
    cells = window_cells(partial, "iops")
    return dataclasses.replace(partial, cells=cells), notes


def _parsed_in_order(by_type: dict[str, list], recs: list) -> list:
    """The parsed records in ledger order (by_type keeps each type's own order)."""
    seen: dict[str, int] = {}
    out = []
    for rec in recs:
        k = seen.get(rec.type, 0)
        out.append(by_type[rec.type][k])
        seen[rec.type] = k + 1
    return out


def _steady(name: str, params: dict) -> SteadyParameters | None:
    """The test's steady-state options (None: XSR, or no test_start; the test_start's were
    checked against the family's record where the ledger was read, ledger_view)."""
    found = typed(name, params, required=False) if params else None
    return found if isinstance(found, SteadyParameters) else None


def _tracking(steady: SteadyParameters | None,
              rounds: tuple[RoundView, ...]) -> tuple[TrackingView, ...]:
    declared = [t for t in (steady and steady.tracking) or () if t.label is not None]
    if declared:
        return tuple(TrackingView(t.label, t.rw_mix, t.block_size) for t in declared)
    labels = dict.fromkeys(label for r in rounds for label in r.tracking)
    return tuple(TrackingView(label, None, None) for label in labels)


def _window(end: TestEndView | None, rounds: tuple[RoundView, ...], size: int):
    """test_end.window; for a run cut short, the last `size` completed rounds."""
    if end is not None and end.window is not None:
        return end.window
    if not rounds:
        return None
    tail = [r.number for r in rounds][-size:]
    return (tail[0], tail[-1])


def _window_evidence(name, tracking, rounds, window, steady) -> tuple[dict, list[str]]:
    """Evidence stored in the round record that closes the window; if that record has none
    (a window shorter than window_rounds), it is recomputed with steady_state.check."""
    if window is None:
        return {t.label: None for t in tracking}, []
    closing = next((r for r in rounds if r.number == window[1]), None)
    evidence, notes = {}, []
    for t in tracking:
        ev = closing.evidence.get(t.label) if closing else None
        if ev is None:
            ev = _recompute(t.label, rounds, window, steady)
            if ev is not None:
                notes.append(f"{name}: steady-state evidence of {t.label} for rounds "
                             f"{window[0]}..{window[1]} recomputed by the report (not in ledger)")
        evidence[t.label] = ev
    return evidence, notes


def _recompute(label, rounds, window, steady: SteadyParameters | None):
    pairs = [(r.number, r.tracking[label]) for r in rounds
             if window[0] <= r.number <= window[1] and is_number(r.tracking.get(label))]
    if len(pairs) < 2:
        return None
    given = {} if steady is None else {"max_data_excursion": steady.max_data_excursion,
                                       "max_slope_excursion": steady.max_slope_excursion}
    limits = {k: float(v) for k, v in given.items() if is_number(v)}
    return steady_state.check([v for _, v in pairs], [n for n, _ in pairs],
                              window=len(pairs), **limits)


def _state(end: TestEndView | None) -> str:
    if end is None or end.status == "interrupted":
        return INCOMPLETE
    return end.status if end.status in (STEADY, NOT_STEADY, COMPLETE, HEALTH_FAILURE) \
        else ERROR


def _status(state: str, end: TestEndView | None, rounds: tuple[RoundView, ...], window,
            name: str = "") -> str:
    done = end.rounds if end is not None and end.rounds is not None else len(rounds)
    span = f"window {window[0]}..{window[1]}" if window else "no measurement window"
    if state == STEADY:
        x = end.steady_round if end.steady_round is not None else (window or (0, done))[1]
        return f"Steady state reached at round {x} ({span})"
    if state == NOT_STEADY:
        return f"STEADY STATE NOT ACHIEVED after {done} rounds ({span})"
    if state == COMPLETE and rounds and name.startswith("rwsw-"):
        # RWSW Multi-WSAT: rounds to its WSAT stop rule; steady state shown, not required.
        return f"Completed (no steady state required): {end.message}"
    if state == COMPLETE and rounds:
        # HIR: complete only because its preconditioning rounds reached steady state.
        x = end.steady_round if end.steady_round is not None else (window or (0, done))[1]
        return f"Complete: preconditioning SS at round {x}; {end.message.split(';')[0]}"
    if state == COMPLETE:
        # The stop condition only: the test's summary page gives the rest of the message.
        return f"Completed (no steady state required): {end.message.split(';')[0]}"
    if state == HEALTH_FAILURE:
        return end.message
    if state == ERROR:
        return f"ERROR after {done} rounds ({end.status}): {end.message}"
    why = end.message if end is not None else "no test_end record"
    return f"INCOMPLETE: {why}; {done} rounds completed ({span})"


# ----------------------------------------------------------------------------- helpers

def _latest(items: Iterable, key) -> tuple:
    """One item per key, the last one written (a resumed run may redo the round in flight),
    in key order (round number first, so loop order is kept)."""
    chosen = {}
    for item in items:
        chosen[key(item)] = item
    return tuple(chosen[k] for k in sorted(chosen))


def _one_per_when(items: Iterable[CountersView]) -> tuple[CountersView, ...]:
    """Ledger order, one record per `when`: a step recorded again (a resumed run redoing it)
    replaces the earlier record and takes its own, later, place."""
    chosen: dict[str, CountersView] = {}
    for item in items:
        chosen.pop(item.when, None)
        chosen[item.when] = item
    return tuple(chosen.values())


def _last(items):
    return items[-1] if items else None
