"""The index's figures of the tests whose report tables are not one cell per block size and
R/W mix (pts.index.rows has those): each taken from what the report's page reads, never
computed here.

- DIRTH, CBW, rwsw-dirth: the Operating Points table (pts.report.pages.dirth_cbw): per point
  (cell "MaxIOPS", "MidIOPS", "MinIOPS": its operating_point record, the last one of its name)
  `iops` and `lat_mean_us` (means over the window rounds), `thread_count` and `queue_depth`
  (the TC/QD chosen), and its capture's `capture_iops`, `capture_lat_mean_us`,
  `capture_lat_max_us` (its response_histogram record; "no data" without one, the page's
  "n/a"). A point not selected: every metric "not selected", the record's rule the reason.
- HIR (pts.report.pages.recovery.hir): `baseline_iops` (cell "": the last hir_baseline's
  ss_iops), and per wait state (cell: its name as the run recorded it, else WS<k>; the last
  hir_state of the state) `wait_iops`, `return_iops` (return to baseline), `ss_iops` (the
  baseline it is compared with) and `wait_ratio` (wait / baseline).
- XSR (pts.report.pages.recovery.xsr's table): per access group (cell "1: SEQ 128 KiB W",
  the page's label; the last xsr_group of the group) `end_tp_mbps`, `final_level_mbps`,
  `peak_lat_mean_us`, `peak_clat_max_us` and, from group 2 on, `recovery_s` ("not
  recovered" when it never settled within the group).
- rwsw-wsat (the ATW Target vs Achieved table, pts.stored.rwsw.shares): per stream
  `share_target_pct`, `share_achieved_pct`, `share_max_miss_pts` and `share_within` (1 / 0:
  every round within the test's tolerance; "no data" when unknown).
- rwsw-replay (the Replay Steps table, pts.stored.rwsw_replay.steps): per step (cell
  "step N") `share_max_miss_pts` and `share_within`; a step that did not run: "not run".
- Latency (the Response Time QoS table, pts.stored.latency_qos): per cell the report's table
  has (no N/A cell), `qos_99.99_us`, `qos_99.999_us`, `qos_99.9999_us` from the json+ bins
  of the window points' fio JSON: "n/r" where a window point has too few I/Os for the level,
  "no data" without bins (the table's "n/a").
"""

from __future__ import annotations

from pts.export.json_doc import cell_label
from pts.results import records
from pts.results.ledger import read_records
from pts.stored import fmt, latency_qos, rwsw, rwsw_replay
from pts.stored.model import RunView, TestResult
from pts.testdefs.qos_levels import needed_ios

OK, NO_DATA, NOT_RESOLVABLE = "ok", "no data", "n/r"
NOT_SELECTED, NOT_RECOVERED, NOT_RUN = "not selected", "not recovered", "not run"
OPERATING_TESTS = ("dirth", "cbw", "rwsw-dirth")
UNITS = {"iops": "IOPS", "lat_mean_us": "us", "thread_count": "TC", "queue_depth": "QD",
         "capture_iops": "IOPS", "capture_lat_mean_us": "us", "capture_lat_max_us": "us",
         "baseline_iops": "IOPS", "wait_iops": "IOPS", "return_iops": "IOPS",
         "ss_iops": "IOPS", "wait_ratio": "ratio", "end_tp_mbps": "MB/s",
         "final_level_mbps": "MB/s", "peak_lat_mean_us": "us", "peak_clat_max_us": "us",
         "recovery_s": "s", "share_target_pct": "%", "share_achieved_pct": "%",
         "share_max_miss_pts": "pts", "share_within": "yes=1"}


def qos_metric(pct: float) -> str:
    return f"qos_{pct:g}_us"


def figures(run: RunView, test: TestResult, ledger: dict | None = None) -> list[dict]:
    """The test's figures of the kinds above (none for any other test). `ledger`: a dict
    shared by the tests of one run, where the run's ledger records are kept once read."""
    if test.name in OPERATING_TESTS:
        return operating_points(run, test, ledger)
    if test.name == "hir":
        return hir(test)
    if test.name == "xsr":
        return xsr(test)
    if test.name == "rwsw-wsat":
        return shares(test)
    if test.name == "rwsw-replay":
        return replay_shares(test)
    if test.name == "latency":
        return qos_levels(run, test)
    return []


def _row(metric: str, cell: str, value, *, shown: str = OK, reason: str | None = None,
         rounds: int | None = None, rw_mix: str | None = None,
         block_size: int | None = None) -> dict:
    if shown == OK and value is None:
        shown, reason = NO_DATA, reason or "not in the record"
    elif shown == OK:
        reason = None
    return {"metric": metric, "cell": cell, "rw_mix": rw_mix, "block_size": block_size,
            "unit": UNITS.get(metric, "us" if metric.startswith("qos_") else ""),
            "rounds": rounds, "host_bound": False,
            "value": float(value) if shown == OK else None, "shown": shown, "reason": reason}


def operating_points(run: RunView, test: TestResult, ledger: dict | None = None) -> list[dict]:
    ledger = {} if ledger is None else ledger
    if "records" not in ledger:          # the page reads them from the ledger (dirth_cbw)
        ledger["records"] = read_records(run.folder / "ledger.jsonl")[0]
    found = [r for r in ledger["records"] if r.test == test.name]
    ops = {r.name: r for r in found if isinstance(r, records.OperatingPoint)}
    hists = {r.name: r for r in test.histograms}
    out = []
    for name, o in ops.items():
        rounds = len(o.rounds or ())
        if not o.selected:
            out += [_row(m, name, None, shown=NOT_SELECTED, reason=o.rule)
                    for m in ("iops", "lat_mean_us", "thread_count", "queue_depth")]
            continue
        out += [_row("iops", name, o.iops, rounds=rounds),
                _row("lat_mean_us", name, o.lat_mean_us, rounds=rounds),
                _row("thread_count", name, o.thread_count),
                _row("queue_depth", name, o.queue_depth)]
        h = hists.get(name)
        for metric, key in (("capture_iops", "iops"), ("capture_lat_mean_us", "lat_mean_us"),
                            ("capture_lat_max_us", "lat_max_us")):
            if h is None:
                out.append(_row(metric, name, None, shown=NO_DATA,
                                reason="no response_histogram record for the point"))
            else:
                out.append(_row(metric, name, getattr(h, key)))
    return out


def _last(test: TestResult, kind: type, key: str) -> dict:
    found = {}
    for r in test.recovery:
        if isinstance(r, kind):
            found[getattr(r, key)] = r
    return found


def state_name(test: TestResult, k: int) -> str:
    """A wait state's name as the run recorded it (test_start wait_state_names), else WS<k>:
    the report's rule (pts.report.pages.recovery.state_names)."""
    names = test.typed.wait_state_names or []
    return names[k - 1] if 0 < k <= len(names) else f"WS{k}"


def hir(test: TestResult) -> list[dict]:
    base = [r for r in test.recovery if isinstance(r, records.HirBaseline)]
    window = base[-1].window if base else None
    out = [_row("baseline_iops", "", base[-1].ss_iops,
                rounds=window[1] - window[0] + 1 if window else None)
           if base else _row("baseline_iops", "", None, shown=NO_DATA,
                             reason="no hir_baseline record: no preconditioning baseline")]
    for k, s in sorted(_last(test, records.HirState, "state").items()):
        name = state_name(test, k)
        out += [_row("wait_iops", name, s.wait_iops), _row("return_iops", name, s.baseline_iops),
                _row("ss_iops", name, s.ss_iops), _row("wait_ratio", name, s.ratio)]
    return out


def xsr_label(g: records.XsrGroup) -> str:
    """The XSR table's access-group label (pts.report.pages.recovery.xsr)."""
    return f"{g.group}: {g.pattern.upper()} {fmt.block_size(g.block_size)} W"


def xsr(test: TestResult) -> list[dict]:
    out = []
    for _, r in sorted(_last(test, records.XsrGroup, "group").items()):
        cell = xsr_label(r)
        out += [_row("end_tp_mbps", cell, r.end_tp_mbps),
                _row("final_level_mbps", cell, r.final_level_mbps),
                _row("peak_lat_mean_us", cell, r.peak_lat_mean_us),
                _row("peak_clat_max_us", cell, r.peak_clat_max_us)]
        if r.recovered is not None:
            out.append(_row("recovery_s", cell, r.recovery_s) if r.recovered else
                       _row("recovery_s", cell, None, shown=NOT_RECOVERED,
                            reason="never (not settled within the group)"))
    return out


def shares(test: TestResult) -> list[dict]:
    out = []
    for r in rwsw.shares(test):
        unknown = "no round recorded the stream's share"
        out += [_row("share_target_pct", r.stream, r.target_pct),
                _row("share_achieved_pct", r.stream, r.achieved_pct, rounds=r.rounds,
                     reason=unknown),
                _row("share_max_miss_pts", r.stream, r.max_miss_pts, rounds=r.rounds,
                     reason=unknown),
                _within(r.stream, r.within, r.rounds)]
    return out


def _within(cell: str, within: bool | None, rounds: int | None) -> dict:
    if within is None:
        return _row("share_within", cell, None, shown=NO_DATA, rounds=rounds,
                    reason="no round recorded, or the test gives no share tolerance")
    return _row("share_within", cell, 1.0 if within else 0.0, rounds=rounds)


def replay_shares(test: TestResult) -> list[dict]:
    out = []
    for r in rwsw_replay.steps(test):
        cell = f"step {r.step}"
        if not r.ran:
            out += [_row(m, cell, None, shown=NOT_RUN, reason="no point was recorded for "
                         "the step") for m in ("share_max_miss_pts", "share_within")]
            continue
        out += [_row("share_max_miss_pts", cell, r.miss_pts, rounds=1),
                _within(cell, r.within, 1)]
    return out


def qos_levels(run: RunView, test: TestResult) -> list[dict]:
    out = []
    for c in latency_qos.cells(test, latency_qos.load_bins(run, test)):
        cell = cell_label(test, c.rw_mix, c.block_size)
        for lv in c.levels:
            where = {"rw_mix": c.rw_mix, "block_size": c.block_size, "rounds": c.points}
            if lv.state == latency_qos.OK:
                out.append(_row(qos_metric(lv.pct), cell, lv.us, **where))
            elif lv.state == latency_qos.NOT_RESOLVABLE:
                out.append(_row(qos_metric(lv.pct), cell, None, shown=NOT_RESOLVABLE, **where,
                                reason=f"a measurement-window point has fewer than "
                                       f"{needed_ios(lv.pct):,} I/Os: the {lv.pct:g} % level "
                                       "is not resolvable"))
            else:
                out.append(_row(qos_metric(lv.pct), cell, None, shown=NO_DATA, **where,
                                reason="no latency bins: the fio JSON of the cell's window "
                                       "points is not in the run folder (raw/) or has no "
                                       "json+ latency histogram"))
    return out
