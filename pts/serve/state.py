"""Where a run stands, from the stored run (pts.stored) and its files' times only.

- finished: every test it started ended with a status --resume treats as finished
  (pts.results.records.FINISHED) (between two tests of a session, for a moment, too);
- running: not finished, its session not over (no report.pdf written after the last ledger
  record: the plugin renders the report when a session ends, interrupted or not; the last
  record is not a test_end saying interrupted or error), and
  ledger.jsonl or commands.log written within `stale_after` seconds;
- resumable: stopped before finishing, on a drive `--resume` accepts (a real drive, here or
  ssh://: pts.results.resume refuses an emulated SSD);
- interrupted: stopped before finishing, and not resumable.

`live(...)` is the small state the live page and /metrics show for a run in flight.
"""

from __future__ import annotations

import time

from pts.procedure import plan
from pts.results import records
from pts.serve.index import COMMANDS_LOG, REPORT_PDF, Entry
from pts.stored.data import LEDGER
from pts.stored.model import CountersView, RunView, TestResult

RUNNING, FINISHED, INTERRUPTED, RESUMABLE = "running", "finished", "interrupted", "resumable"
STATES = (RUNNING, FINISHED, INTERRUPTED, RESUMABLE)
ERROR = "error"                  # the folder could not be read
STALE_AFTER = 3600.0             # a pipelined IOPS round at spec settings writes ~1 h apart


def all_finished(run: RunView) -> bool:
    return bool(run.tests) and all(t.end is not None and t.end.status in records.FINISHED
                                   for t in run.tests)


def run_state(entry: Entry, stale_after: float = STALE_AFTER, now: float | None = None) -> str:
    if entry.kind != "run" or entry.view is None:
        return ERROR if entry.error else FINISHED
    run = entry.view
    return state_of(all_finished(run), _stopping(run), resumable(run), entry.mtime(LEDGER),
                    entry.mtime(REPORT_PDF), entry.mtime(COMMANDS_LOG), stale_after, now)


def state_of(finished: bool, stopping: bool, can_resume: bool, ledger: float | None,
             report: float | None, commands: float | None,
             stale_after: float = STALE_AFTER, now: float | None = None) -> str:
    """The rule, from its ingredients (a run view's, or an index row's: pts.serve.indexed):
    the run's tests all finished; its last record an unfinished test_end; a drive --resume
    takes; the mtimes of ledger.jsonl, report.pdf and commands.log (None: absent)."""
    if finished:
        return FINISHED
    ledger = ledger or 0.0
    over = report is not None and report >= ledger
    alive = max(ledger, commands or 0.0)
    if not over and not stopping and _fresh(alive, stale_after, now):
        return RUNNING
    return RESUMABLE if can_resume else INTERRUPTED


def _stopping(run: RunView) -> bool:
    """The last record is a test_end saying interrupted or error: the session is ending
    (a resumed run writes on after it)."""
    return any(t.end is not None and t.end.status not in records.FINISHED
               and t.end.time is not None and t.end.time >= (run.finished or 0)
               for t in run.tests)


def _fresh(mtime: float, stale_after: float, now: float | None) -> bool:
    return (time.time() if now is None else now) - mtime < stale_after


def resumable(run: RunView) -> bool:
    """--resume would take it: a drive that outlives the session (not emulated), here or on
    another host; the device check itself needs the drive and is --resume's."""
    return run.device.emulated is False


def current_test(run: RunView) -> TestResult | None:
    """The test in flight (no test_end yet), else the last one."""
    open_ = [t for t in run.tests if t.end is None]
    return open_[-1] if open_ else (run.tests[-1] if run.tests else None)


def phase(test: TestResult) -> tuple[str, int | None]:
    """What the test is doing, and the round in flight (None: not in its rounds)."""
    if test.end is not None:
        return f"ended: {test.end.status}", None
    done = test.rounds[-1].number if test.rounds else 0
    flying = max([done + 1] + [p.round for p in test.points if p.round > done])
    if test.samples:
        return f"sample {test.samples[-1].number + 1}", None
    if test.recovery:
        return f"{type(test.recovery[-1]).TYPE} records: {len(test.recovery)}", None
    if test.rounds or test.points or (test.wipc and "max_rounds" in test.parameters):
        return f"round {flying}", flying
    if test.wipc is not None:
        return "after WIPC", None
    if test.purge is not None:
        return "workload independent preconditioning (WIPC)", None
    return "purge", None


def eta(test: TestResult, now: float | None = None) -> tuple[float, float] | None:
    """Seconds left (best, worst) of a round-based test in flight, as the console's ETA
    (pts.procedure.progress): best = steady at the earliest round its window allows, worst =
    at max_rounds. A round lasts the mean of its completed rounds (first point's start to
    last point's end, fio's times). None before a round completed, or without rounds."""
    window = test.steady_parameters and test.steady_parameters.window_rounds
    most = test.max_rounds
    if test.end is not None or not test.rounds or not (isinstance(window, int)
                                                       and isinstance(most, int)):
        return None
    spans: dict[int, tuple[float, float]] = {}
    for p in test.points:
        if p.start is not None and p.end is not None:
            lo, hi = spans.get(p.round, (p.start, p.end))
            spans[p.round] = (min(lo, p.start), max(hi, p.end))
    done = test.rounds[-1].number
    lengths = [hi - lo for number, (lo, hi) in spans.items() if number <= done]
    if not lengths:
        return None
    per_round = sum(lengths) / len(lengths)
    # the round in flight started at its first point, else when the last round ended
    since = spans[done + 1][0] if done + 1 in spans else spans.get(done, (None, None))[1]
    gone = max(0.0, (time.time() if now is None else now) - since) if since else 0.0
    best = max(window - done, 1) * per_round - gone
    worst = (most - done) * per_round - gone
    return max(best, 0.0), max(worst, 0.0)


def latest_health(test: TestResult | None) -> CountersView | None:
    """The latest device_counters record with health fields (smart-log, smartctl)."""
    if test is None:
        return None
    return next((c for c in reversed(test.counters) if c.health), None)


def live(entry: Entry, stale_after: float = STALE_AFTER, now: float | None = None) -> dict:
    """The state the live page shows (JSON-safe, small)."""
    state = run_state(entry, stale_after, now)
    out: dict = {"id": entry.id, "state": state, "error": entry.error}
    run = entry.view
    test = current_test(run) if run is not None else None
    if run is None or test is None:
        return out
    what, flying = phase(test)
    last = test.rounds[-1] if test.rounds else None
    health = latest_health(test)
    left = eta(test, now) if state == RUNNING else None
    out.update({
        "verdict": run.verdict.text if state == FINISHED else None,
        "test": test.name, "title": test.title, "phase": what, "round": flying,
        "rounds_done": last.number if last else 0,
        "max_rounds": test.max_rounds,
        "tracking": dict(last.tracking) if last else {},
        "steady": last.steady if last else None, "status": test.status,
        "eta": f"{plan.hms(left[0])}..{plan.hms(left[1])}" if left else None,
        "eta_best_s": round(left[0]) if left else None,
        "eta_worst_s": round(left[1]) if left else None,
        "temperature_c": (health.health or {}).get("temperature_c") if health else None,
        "critical_warning": (health.health or {}).get("critical_warning") if health else None,
        "health_when": health.when if health else None,
        "records_time": run.finished,
    })
    return out
