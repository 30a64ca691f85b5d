"""The index's figures of the tests whose report tables are not one cell per block size and
R/W mix (pts.index.rows has those and calls these readers, one per kind of read of the figure
catalogue, pts.stored.figures, with the catalogue's figures of that kind): each taken from
what the report's page reads, never computed here. Which figures, their metric names and
units are the catalogue's; the list below says how each kind reads them.

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

from pts.results import records
from pts.stored import fmt, latency_qos, rwsw, rwsw_replay
from pts.stored.cells import cell_label
from pts.stored.figures import Figure, catalogue, last_each
from pts.stored.model import RunView, TestResult
from pts.testdefs.qos_levels import needed_ios

OK, NO_DATA, NOT_RESOLVABLE = "ok", "no data", "n/r"
NOT_SELECTED, NOT_RECOVERED, NOT_RUN = "not selected", "not recovered", "not run"
# The TC / QD an operating point chose: a setting, not a mean over its rounds (no rounds).
CHOSEN = ("thread_count", "queue_depth")


def qos_metric(pct: float) -> str:
    """The index's metric of the QoS level `pct` (the figure catalogue's row)."""
    return next(f.metric for f in catalogue() if f.level == pct)


def _row(f: Figure, cell: str, value, *, shown: str = OK, reason: str | None = None,
         rounds: int | None = None, rw_mix: str | None = None,
         block_size: int | None = None) -> dict:
    if shown == OK and value is None:
        shown, reason = NO_DATA, reason or "not in the record"
    elif shown == OK:
        reason = None
    return {"metric": f.metric, "cell": cell, "rw_mix": rw_mix, "block_size": block_size,
            "unit": f.unit, "rounds": rounds, "host_bound": False,
            "value": float(value) if shown == OK else None, "shown": shown, "reason": reason}


def operating_points(test: TestResult, rows: list[Figure], captures: list[Figure]) -> list[dict]:
    """Per operating point (the last record of its name): `rows` from the record, `captures`
    from its capture's response_histogram record."""
    ops = last_each(test.records_of(records.OperatingPoint), lambda r: r.name)
    hists = {r.name: r for r in test.histograms}
    out = []
    for name, o in ops.items():
        rounds = len(o.rounds or ())
        if not o.selected:
            out += [_row(f, name, None, shown=NOT_SELECTED, reason=o.rule) for f in rows]
            continue
        out += [_row(f, name, getattr(o, f.field),
                     rounds=None if f.field in CHOSEN else rounds) for f in rows]
        h = hists.get(name)
        for f in captures:
            if h is None:
                out.append(_row(f, name, None, shown=NO_DATA,
                                reason="no response_histogram record for the point"))
            else:
                out.append(_row(f, name, getattr(h, f.field)))
    return out


def _last(test: TestResult, kind: type, key: str) -> list:
    """The last record of each `key` (the catalogue's rule), in the order of the key."""
    found = last_each((r for r in test.recovery if isinstance(r, kind)),
                      lambda r: getattr(r, key))
    return [r for _, r in sorted(found.items())]


def state_name(test: TestResult, k: int) -> str:
    """A wait state's name as the run recorded it (test_start wait_state_names), else WS<k>:
    the report's rule (pts.report.pages.recovery.state_names)."""
    names = test.typed.wait_state_names or []
    return names[k - 1] if 0 < k <= len(names) else f"WS{k}"


def hir_baseline(test: TestResult, rows: list[Figure]) -> list[dict]:
    base = [r for r in test.recovery if isinstance(r, records.HirBaseline)]
    if not base:
        return [_row(f, "", None, shown=NO_DATA,
                     reason="no hir_baseline record: no preconditioning baseline")
                for f in rows]
    window = base[-1].window
    return [_row(f, "", getattr(base[-1], f.field),
                 rounds=window[1] - window[0] + 1 if window else None) for f in rows]


def hir_states(test: TestResult, rows: list[Figure]) -> list[dict]:
    return [_row(f, state_name(test, s.state), getattr(s, f.field))
            for s in _last(test, records.HirState, "state") for f in rows]


def xsr_label(g: records.XsrGroup) -> str:
    """The XSR table's access-group label (pts.report.pages.recovery.xsr)."""
    return f"{g.group}: {g.pattern.upper()} {fmt.block_size(g.block_size)} W"


def xsr(test: TestResult, rows: list[Figure]) -> list[dict]:
    out = []
    for r in _last(test, records.XsrGroup, "group"):
        cell = xsr_label(r)
        for f in rows:
            if f.field != "recovery_s":
                out.append(_row(f, cell, getattr(r, f.field)))
            elif r.recovered is not None:         # the first group recovers from nothing
                out.append(_row(f, cell, r.recovery_s) if r.recovered else
                           _row(f, cell, None, shown=NOT_RECOVERED,
                                reason="never (not settled within the group)"))
    return out


def shares(test: TestResult, rows: list[Figure]) -> list[dict]:
    out = []
    for r in rwsw.shares(test):
        unknown = "no round recorded the stream's share"
        for f in rows:
            if f.field == "within":
                out.append(_within(f, r.stream, r.within, r.rounds))
            elif f.field == "target_pct":          # the ATW's, not measured over rounds
                out.append(_row(f, r.stream, r.target_pct))
            else:
                out.append(_row(f, r.stream, getattr(r, f.field), rounds=r.rounds,
                                reason=unknown))
    return out


def _within(f: Figure, cell: str, within: bool | None, rounds: int | None) -> dict:
    if within is None:
        return _row(f, cell, None, shown=NO_DATA, rounds=rounds,
                    reason="no round recorded, or the test gives no share tolerance")
    return _row(f, cell, 1.0 if within else 0.0, rounds=rounds)


def replay_shares(test: TestResult, rows: list[Figure]) -> list[dict]:
    out = []
    for r in rwsw_replay.steps(test):
        cell = f"step {r.step}"
        if not r.ran:
            out += [_row(f, cell, None, shown=NOT_RUN, reason="no point was recorded for "
                         "the step") for f in rows]
            continue
        out += [_within(f, cell, r.within, 1) if f.field == "within"
                else _row(f, cell, getattr(r, f.field), rounds=1) for f in rows]
    return out


def qos_levels(run: RunView, test: TestResult, rows: list[Figure]) -> list[dict]:
    out = []
    for c in latency_qos.cells(test, latency_qos.load_bins(run, test)):
        cell = cell_label(test, c.rw_mix, c.block_size)
        levels = {lv.pct: lv for lv in c.levels}
        for f in rows:
            lv = levels[f.level]
            where = {"rw_mix": c.rw_mix, "block_size": c.block_size, "rounds": c.points}
            if lv.state == latency_qos.OK:
                out.append(_row(f, cell, lv.us, **where))
            elif lv.state == latency_qos.NOT_RESOLVABLE:
                out.append(_row(f, cell, None, shown=NOT_RESOLVABLE, **where,
                                reason=f"a measurement-window point has fewer than "
                                       f"{needed_ios(lv.pct):,} I/Os: the {lv.pct:g} % level "
                                       "is not resolvable"))
            else:
                out.append(_row(f, cell, None, shown=NO_DATA, **where,
                                reason="no latency bins: the fio JSON of the cell's window "
                                       "points is not in the run folder (raw/) or has no "
                                       "json+ latency histogram"))
    return out
