"""A stored run (pts.stored's RunView) as the index's rows: one run row, one row per test, and
the headline figures per test and cell exactly as the report shows them.

Every figure is taken from pts.stored, the read model the report's pages use, never computed
here: a cell's window mean from pts.stored.cells (the IOPS, Throughput and Latency tables),
the Latency test's "n/r" cells from pts.stored.latency_qos.short_cells, WSAT's levels from its
wsat_result record, the WAF from pts.stored.waf, the host-bound marks from
pts.stored.host_ceiling. A figure's `shown` says what the report's cell shows: "ok" (value),
"N/A" (the cell was not measured, with the reason), "n/r" (not resolvable from the I/Os
measured), "no data" (no measurement-window value), "not given" (WAF: with the reason).

Indexed (docs/index.md): IOPS per block size and R/W mix; Throughput MB/s per block size and
direction; Latency ART, 5 9s, MRT and IOPS per cell; WSAT steady-state IOPS, FOB IOPS and their
ratio; WAF per test with device counters; and, from pts.index.headline: DIRTH/CBW (and
rwsw-dirth) operating points, HIR's baseline and wait-state table, XSR's access-group table,
the RWSW tests' shares achieved (rwsw-wsat per stream, rwsw-replay per step), the Latency
test's QoS levels (99.99 / 99.999 / 99.9999 %).
"""

from __future__ import annotations

import json
import time
from datetime import datetime

from pts.index import headline
from pts.results import records
from pts.stored import figures, host_ceiling, latency_qos, ocp_every_id, waf
from pts.stored.cells import cell_label, window_cells
from pts.stored.model import STEADY, Cell, Device, RunView, TestResult
from pts.testdefs.qos_levels import needed_ios

# Bump when what the rows of a run hold changes: every folder is then read again by the next
# `pts index`, whatever its files' stats (build.py).
READER = 3            # 2: operating points, HIR, XSR, RWSW shares, QoS levels; 3: OCP counts

FINISHED, UNFINISHED, UNREADABLE = "finished", "unfinished", "unreadable"
OK, NA, NOT_RESOLVABLE, NO_DATA, NOT_GIVEN = "ok", "N/A", "n/r", "no data", "not given"
# The level of the Latency test's "5 9s" table when its test_start gives no percentile: the
# report's rule (pts.report.pages.latency: `test.typed.percentile or 99.999`).
FIVE_NINES = 99.999

RUN_COLUMNS = (
    "folder", "root", "run_id", "model", "serial", "firmware", "capacity_bytes", "transport",
    "emulated", "host", "spec_name", "spec_title", "options_json", "deviations_json",
    "deviation_count", "compliant", "verdict", "state", "started", "started_at",
    "last_record_at", "ended_at", "test_count", "error", "notes_json", "run_json_size",
    "run_json_mtime_ns", "ledger_size", "ledger_mtime_ns", "reader", "indexed_at",
    "ocp_version", "ocp_pass", "ocp_fail", "ocp_not_applicable", "ocp_not_checked")
TEST_COLUMNS = (
    "folder", "name", "position", "title", "clause", "state", "status", "steady", "rounds",
    "steady_round", "window_first", "window_last", "started_at", "ended_at")
OCP_COLUMNS = RUN_COLUMNS[-5:]     # ocp_version, then the counts in ocp_every_id.WORDS' order
FIGURE_COLUMNS = (
    "folder", "test", "metric", "cell", "position", "rw_mix", "block_size", "value", "shown",
    "unit", "rounds", "host_bound", "reason")


def run_row(run: RunView, root: str, stats: dict) -> dict:
    """The run's row. `stats`: the file stats the folder was read at (build.file_stats)."""
    done = all_finished(run)
    return _identity(str(run.folder), root, run.run_id, run.device, run.platform, run.spec,
                     run.options, run.started, stats) | {
        "deviations_json": _json([d.text for d in run.deviations]),
        "deviation_count": len(run.deviations),
        "compliant": run.verdict.compliant, "verdict": run.verdict.text,
        "state": FINISHED if done else UNFINISHED,
        "last_record_at": run.finished, "ended_at": run.finished if done else None,
        "test_count": len(run.tests), "error": None, "notes_json": _json(list(run.notes)),
    } | ocp_counts(run)


def ocp_counts(run: RunView | None) -> dict:
    """The newest OCP text's verdict counts on the run (pts.stored.ocp_every_id, as `qualify
    --ocp`); all None for a run not on an NVMe drive (or unreadable: run None)."""
    found = ocp_every_id.summary(run) if run is not None else None
    if found is None:
        return dict.fromkeys(OCP_COLUMNS)
    return {"ocp_version": found.version} | {
        column: found.counts[word] for column, word in zip(
            OCP_COLUMNS[1:], ocp_every_id.WORDS, strict=True)}


def unreadable_row(folder: str, root: str, info: dict, device: Device, error: str,
                   stats: dict) -> dict:
    """A run folder whose run.json reads and whose ledger does not: what run.json says, and
    why the rest is not indexed (no tests, no figures, no verdict)."""
    deviations = [str(d) for d in info.get("deviations") or ()]
    return _identity(folder, root, str(info.get("run_id") or folder.rsplit("/", 1)[-1]),
                     device, _dict(info.get("platform")), _dict(info.get("spec")),
                     _dict(info.get("options")), info.get("started"), stats) | {
        "deviations_json": _json(deviations), "deviation_count": len(deviations),
        "compliant": None, "verdict": None, "state": UNREADABLE, "last_record_at": None,
        "ended_at": None, "test_count": 0, "error": error, "notes_json": _json([]),
    } | ocp_counts(None)


def _identity(folder, root, run_id, device: Device, platform, spec, options, started,
              stats) -> dict:
    return {
        "folder": folder, "root": root, "run_id": run_id, "model": device.model,
        "serial": device.serial, "firmware": device.firmware,
        "capacity_bytes": device.capacity_bytes, "transport": device.transport,
        "emulated": device.emulated, "host": _text(platform.get("hostname")),
        "spec_name": _text(spec.get("name")), "spec_title": _text(spec.get("title")),
        "options_json": _json(options), "started": _text(started),
        "started_at": epoch(started), **stats, "reader": READER, "indexed_at": time.time(),
    }


def all_finished(run: RunView) -> bool:
    """Every test it started ended with a status a resumed run treats as finished (the
    dashboard's rule, pts.serve.state.all_finished, from pts.results.records.FINISHED)."""
    return bool(run.tests) and all(t.end is not None and t.end.status in records.FINISHED
                                   for t in run.tests)


def test_rows(run: RunView) -> list[dict]:
    return [{
        "folder": str(run.folder), "name": t.name, "position": n, "title": t.title,
        "clause": _text(t.clause), "state": t.state, "status": t.status, "steady": steady(t),
        "rounds": t.end.rounds if t.end is not None and t.end.rounds is not None
        else len(t.rounds),
        "steady_round": t.end.steady_round if t.end is not None else None,
        "window_first": t.window[0] if t.window else None,
        "window_last": t.window[1] if t.window else None,
        "started_at": t.started, "ended_at": t.end.time if t.end is not None else None,
    } for n, t in enumerate(run.tests)]


def steady(test: TestResult) -> bool | None:
    """Steady state reached: the test's state says so; WSAT: its final window (wsat_result);
    a round-based test: the round that closes its window (HIR's, DIRTH's preconditioning);
    None for a test without a steady-state check (XSR's access groups)."""
    if test.state == STEADY:
        return True
    if "final_window_steady" in test.result:
        return bool(test.result["final_window_steady"])
    closing = [r for r in test.rounds if test.window and r.number == test.window[1]]
    if closing:
        return closing[-1].steady
    return False if test.rounds else None


def figure_rows(run: RunView) -> list[dict]:
    out = []
    for test in run.tests:
        found = _figures(run, test)
        out += [f | {"folder": str(run.folder), "test": test.name, "position": n}
                for n, f in enumerate(found)]
    return out


def _figures(run: RunView, test: TestResult) -> list[dict]:
    """The test's figures the catalogue (pts.stored.figures) shows in the index, kind of read
    by kind of read in catalogue order (UnknownFamily for a test it has no family for: the
    folder is then indexed as unreadable, naming it)."""
    shown = figures.of(test, figures.INDEX)

    def rows(*reads: str) -> list[figures.Figure]:
        return [f for f in shown if f.read in reads]

    readers = {
        figures.CELL: lambda: _cells(test, rows(figures.CELL)),
        figures.WSAT_RESULT: lambda: _wsat(test, rows(figures.WSAT_RESULT)),
        figures.OPERATING_POINT: lambda: headline.operating_points(
            test, rows(figures.OPERATING_POINT), rows(figures.CAPTURE)),
        figures.CAPTURE: list,              # with its operating point
        figures.HIR_BASELINE: lambda: headline.hir_baseline(test, rows(figures.HIR_BASELINE)),
        figures.HIR_STATE: lambda: headline.hir_states(test, rows(figures.HIR_STATE)),
        figures.XSR_GROUP: lambda: headline.xsr(test, rows(figures.XSR_GROUP)),
        figures.ATW_SHARE: lambda: headline.shares(test, rows(figures.ATW_SHARE)),
        figures.REPLAY_STEP: lambda: headline.replay_shares(test, rows(figures.REPLAY_STEP)),
        figures.QOS_LEVEL: lambda: headline.qos_levels(run, test, rows(figures.QOS_LEVEL)),
        # the report's device-counters page: its WAF line, for a test with counters
        figures.WAF: lambda: [_waf(f, waf.of_test(run, test)) for f in rows(figures.WAF)]
        if test.counters else [],
    }
    reads = figures.reads_of(test, figures.INDEX)
    figures.check_readers(reads, readers, "pts/index/rows.py _figures")
    return [row for read in reads for row in readers[read]()]


def _cells(test: TestResult, rows: list[figures.Figure]) -> list[dict]:
    """Per figure, per cell in loop order: its window mean, as the report's tables."""
    marks = host_ceiling.cell_marks(test)
    out = []
    for f in rows:
        short: set = set()
        pct = None
        if f.field == "lat_percentile_us":       # "n/r" where a point is too short
            pct = test.typed.percentile or FIVE_NINES
            short = latency_qos.short_cells(test, float(pct))
        out += [_cell(test, f, c, marks, short, pct) for c in window_cells(test, f.field)]
    return out


def _cell(test: TestResult, f: figures.Figure, c: Cell, marks: dict, short=frozenset(),
          pct: float | None = None) -> dict:
    row = {"metric": f.metric, "cell": cell_label(test, c.rw_mix, c.block_size),
           "rw_mix": c.rw_mix, "block_size": c.block_size, "unit": f.unit,
           "rounds": c.rounds, "host_bound": (c.rw_mix, c.block_size) in marks and not c.na}
    if c.na:
        return row | {"value": None, "shown": NA, "reason": c.reason}
    if (c.rw_mix, c.block_size) in short:
        return row | {"value": None, "shown": NOT_RESOLVABLE,
                      "reason": f"a measurement-window point has fewer than "
                                f"{needed_ios(pct):,} I/Os: the {pct:g} % level is not "
                                "resolvable"}
    if c.mean is None:
        return row | {"value": None, "shown": NO_DATA, "reason": "no measurement-window value"}
    return row | {"value": c.mean, "shown": OK, "reason": None}


def _wsat(test: TestResult, rows: list[figures.Figure]) -> list[dict]:
    r = test.result
    sizes = test.typed.block_sizes or (None,)
    bs = sizes[0]
    base = {"cell": cell_label(test, "0/100", bs) if bs else "0/100", "rw_mix": "0/100",
            "block_size": bs, "rounds": None,
            "host_bound": ("0/100", None) in host_ceiling.cell_marks(test)}
    out = []
    for f in rows:
        value = r.get(f.field)
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        why = "no wsat_result record: the test did not finish" if not r \
            else f"the wsat_result record has no {f.field}"
        out.append(base | {"metric": f.metric, "unit": f.unit,
                           "value": float(value) if ok else None,
                           "shown": OK if ok else NO_DATA, "reason": None if ok else why})
    return out


def _waf(f: figures.Figure, found: waf.TestWaf) -> dict:
    base = {"metric": f.metric, "cell": "", "rw_mix": None, "block_size": None,
            "unit": f.unit, "rounds": None, "host_bound": False}
    if found.source is None or found.test is None or found.value is None:
        why = found.note if found.source is None else f"{found.note} ({found.source})"
        return base | {"value": None, "shown": NOT_GIVEN, "reason": why}
    return base | {"value": found.value, "shown": OK, "reason": None}


def epoch(text) -> float | None:
    """run.json's ISO 8601 `started` as Unix seconds (None: absent or not ISO 8601)."""
    try:
        return datetime.fromisoformat(str(text)).timestamp() if text else None
    except ValueError:
        return None


def _json(value) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _text(value) -> str | None:
    return None if value is None else str(value)


def _dict(value) -> dict:
    return dict(value) if isinstance(value, dict) else {}
