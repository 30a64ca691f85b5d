"""The steps every PTS test shares, each recorded in the ledger before the next one runs:
safety gate, purge (§3.2), write cache (set/record before WIPC and before the test loop),
WIPC (§3.3), device counters, and the test_start/test_end bracket."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from pts import emulated, health, preconditioning, write_cache
from pts.device import active_range_bytes as device_active_range
from pts.device import check_writable
from pts.purge import PurgeError, purge
from pts.rounds import Outcome
from pts.run import Run
from pts.spec import format_size
from pts.write_cache import CacheState


def active_range_bytes(run: Run) -> int:
    return device_active_range(run.device, run.spec.common.active_range_pct)


def record_counters(run: Run, test: str, when: str, round_no: int | None = None) -> None:
    """Device counters at each step: the emulator's FTL counters, or the NVMe smart-log."""
    found = emulated.counters(run.device)
    if found is not None:
        run.ledger.append("device_counters", test=test, when=when, round=round_no,
                          source="emulator", counters=found)
    smart = health.snapshot(run.device, run.commands_log)
    if smart is not None:
        run.ledger.append("device_counters", test=test, when=when, round=round_no,
                          source=health.SOURCE, counters=smart)


def health_verdict(run: Run, test: str, outcome: Outcome) -> Outcome:
    """The outcome, or a device-health failure when the smart-log shows one (the spec
    outcome is kept in the message)."""
    found = health.problems(health.test_records(run.ledger.path, test))
    if not found:
        return outcome
    run.write(f"[pts {test}] DEVICE HEALTH FAILURE: " + "; ".join(found))
    return dataclasses.replace(
        outcome, status=health.HEALTH_FAILURE,
        message="DEVICE HEALTH FAILURE (not a spec result): " + "; ".join(found)
        + f". Spec outcome: {outcome.message}")


def purge_step(run: Run, test: str) -> None:
    check_writable(run.device, run.settings.destructive)
    run.write(f"[pts {test}] purge: {run.settings.purge}")
    try:
        p = purge(run.settings.purge, run.device, run.commands_log,
                  say=lambda text: run.write(f"[pts {test}] purge: {text}"))
    except PurgeError as exc:
        # What ran before the failure (incl. clean-up, e.g. an ATA password cleared) is kept.
        run.ledger.append("purge", test=test, method=run.settings.purge, command=None,
                          ok=False, seconds=None, deviation=False,
                          steps=[list(s) for s in exc.steps],
                          verification="", error=str(exc))
        raise
    run.write(f"[pts {test}] purge: {p.method} done in {p.seconds:.1f} s"
              + (f"; verified: {p.verification}" if p.verification else ""))
    run.ledger.append("purge", test=test, method=p.method, command=p.command, ok=True,
                      seconds=p.seconds, deviation=p.deviation,
                      steps=[list(s) for s in p.steps], verification=p.verification)
    record_counters(run, test, "after purge")


def write_cache_step(run: Run, test: str, when: str) -> CacheState:
    cache = write_cache.apply(run.device, run.spec.common.write_cache, run.commands_log)
    run.ledger.append("write_cache", test=test, required=cache.required, actual=cache.actual,
                      settable=cache.settable, when=when, how=cache.how)
    return cache


def wipc_step(run: Run, test: str, ar_bytes: int, block_size: int,
              tc_qd: tuple[int, int] | None = None) -> None:
    """2x ActiveRange of SEQ writes of `block_size` at the test's TC/QD (`tc_qd`; default
    the spec's common TC/QD), checked by bytes."""
    multiple = run.spec.wipc.capacity_multiple
    tc, qd = tc_qd or (run.spec.common.thread_count, run.spec.common.queue_depth)
    plan = preconditioning.plan_wipc(ar_bytes, block_size, multiple, tc, qd)
    if plan.tail_bytes:
        run.deviation(test, f"WIPC: the last {plan.tail_bytes} bytes of the ActiveRange "
                            f"(less than one {format_size(block_size)} block) were not "
                            "preconditioned.")
    run.write(f"[pts {test}] WIPC: {plan.bytes_expected:,} bytes of SEQ "
              f"{format_size(block_size)} writes")
    start = time.monotonic()
    res = preconditioning.run_wipc(run.fio, run.device.path, plan, run.raw_dir(test))
    run.ledger.append("wipc", test=test, block_size=block_size,
                      bytes_expected=plan.bytes_expected,
                      bytes_written=res.summary.write.io_bytes,
                      seconds=time.monotonic() - start, thread_count=tc,
                      queue_depth=qd, raw=run.relative(res.json_path))
    record_counters(run, test, "after WIPC")


def prepare(run: Run, test: str, ar_bytes: int, wipc_block_size: int | None,
            tc_qd: tuple[int, int] | None = None,
            before_wipc: Callable[[], None] | None = None) -> None:
    """Purge, write cache, WIPC (skipped with None: WSAT-like tests start from FOB) at the
    test's TC/QD (`tc_qd`; default the spec's common TC/QD: §4, TC/QD stay the same).
    `before_wipc` runs on the purged device right before WIPC (--fob-sweep)."""
    purge_step(run, test)
    cache = write_cache_step(run, test, "before WIPC" if wipc_block_size else "before test")
    if cache.deviation():
        run.deviation(test, cache.deviation())
    if before_wipc:
        before_wipc()
    if wipc_block_size:
        wipc_step(run, test, ar_bytes, wipc_block_size, tc_qd)
        write_cache_step(run, test, "before test loop")


def declare_na(run: Run, test: str, prefix: str, points) -> None:
    """One deviation per block size that cannot be measured on this device."""
    for bs in sorted({p.block_size for p in points if p.na_reason}):
        run.deviation(test, f"{prefix}{format_size(bs)} cells not measured (N/A): smaller "
                            f"than the logical sector size ({run.device.logical_sector} "
                            "bytes).")


def resumed_history(run: Run, test: str) -> dict[str, list[float]] | None:
    """On --resume, the tracking values of the rounds already done, if the test got past
    WIPC (it then goes on with the next round); None: run the test from purge."""
    if run.resume is None:
        return None
    progress = run.resume.progress(test)
    if not progress.wipc_done:
        run.write(f"[pts {test}] resume: stopped before WIPC completed; starting from purge")
        run.deviation(test, "Resumed run: the test was restarted from purge (it had stopped "
                            "before WIPC completed).")
        return None
    idle = (time.time() - progress.last_time) / 60 if progress.last_time else 0.0
    x = progress.last_round
    run.ledger.append("resume", test=test, after_round=x, idle_minutes=idle)
    run.deviation(test, f"Resumed run: device idle {idle:.1f} minutes between round {x} and "
                        f"round {x + 1} (the round in flight was redone).")
    run.write(f"[pts {test}] resume after round {x} (idle {idle:.1f} min)")
    return progress.history


def bracket(run: Run, test: str, title: str, clause: str, parameters: dict,
            body: Callable[[], Outcome]) -> Outcome:
    """test_start, the test's body, test_end (status "error" if the body raised).
    A test a resumed run had already finished is not run again: its recorded end stands."""
    finished = run.resume.progress(test).finished if run.resume else None
    if finished is not None:
        run.write(f"[pts {test}] already finished in this run: {finished['message']}")
        return Outcome(finished["status"], finished["rounds"], finished["steady_round"],
                       tuple(finished["window"]), {}, finished["message"])
    if run.resume is None or not run.resume.progress(test).wipc_done:
        run.ledger.append("test_start", test=test, title=title, clause=clause,
                          parameters=parameters)
    record_counters(run, test, "test start")
    try:
        outcome = body()
        record_counters(run, test, "test end")
        outcome = health_verdict(run, test, outcome)
    except KeyboardInterrupt:
        run.ledger.append("test_end", test=test, status="interrupted", rounds=None,
                          steady_round=None, window=None,
                          message="interrupted (Ctrl-C or SIGTERM); the point in flight was "
                                  "stopped and not recorded")
        raise
    except BaseException as exc:
        run.ledger.append("test_end", test=test, status="error", rounds=None,
                          steady_round=None, window=None,
                          message=f"{type(exc).__name__}: {exc}")
        raise
    run.ledger.append("test_end", test=test, status=outcome.status, rounds=outcome.rounds,
                      steady_round=outcome.steady_round, window=list(outcome.window),
                      message=outcome.message)
    return outcome
