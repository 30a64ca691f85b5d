"""The conditioning steps every PTS test shares, each recorded in the ledger before the next
one runs: safety gate, purge (§3.2), write cache (set and read back before WIPC and before
the test loop), WIPC (§3.3) and device counters."""

from __future__ import annotations

import time
from collections.abc import Callable

from pts.conditioning import host_facts_step, purge_probe, wipc, write_cache
from pts.conditioning.purge import PurgeError, purge
from pts.conditioning.write_cache import CacheState
from pts.config.spec import format_size
from pts.device import health, media_writes
from pts.device.identity import active_range_bytes as device_active_range
from pts.device.safety import check_writable
from pts.emulate import session as emulated
from pts.results import health_records, records
from pts.run import Run


def active_range_bytes(run: Run) -> int:
    return device_active_range(run.device, run.spec.common.active_range_pct)


def record_counters(run: Run, test: str, when: str, round_no: int | None = None) -> None:
    """Device counters at each step: the emulator's FTL counters, or the NVMe smart-log
    (smartctl for ATA/SCSI), each with the media writes of pts.device.media_writes.
    A smart-log read that fails is recorded (counters null, the error) and declared: once
    per distinct error in a test, naming the first step it happened at. An NVMe drive's
    host facts beside them (pts.conditioning.host_facts_step: all at test start, the FDP
    statistics at every step)."""
    host_facts_step.record(run, test, when, round_no)
    found = emulated.counters(run.device)
    if found is not None:       # its media writes through the keys every source uses
        found = found | media_writes.emulator(found)
        run.ledger.append(records.DeviceCounters(test=test, when=when, round=round_no,
                                                 source="emulator", counters=found))
    smart = health.snapshot(run.device, run.commands_log)
    if smart is None:
        return
    declared = health_records.errors_recorded(run.ledger.path, test) if smart.error else set()
    run.ledger.append(records.DeviceCounters(test=test, when=when, round=round_no,
                                             source=smart.source, counters=smart.counters,
                                             error=smart.error))
    if smart.error:
        run.write(f"[pts {test}] SMART log not read {when}: {smart.error}")
        if smart.error not in declared:
            run.deviation(test, health.unread_deviation(when, smart.error, smart.source))


def purge_step(run: Run, test: str) -> None:
    check_writable(run.device, run.settings.destructive)
    run.write(f"[pts {test}] purge: {run.settings.purge}")
    try:
        p = purge(run.settings.purge, run.device, run.commands_log,
                  say=lambda text: run.write(f"[pts {test}] purge: {text}"))
    except PurgeError as exc:
        # What ran before the failure (incl. clean-up, e.g. an ATA password cleared) is kept.
        run.ledger.append(records.Purge(
            test=test, method=run.settings.purge, command=None, ok=False, seconds=None,
            deviation=False, steps=[list(s) for s in exc.steps], verification="",
            error=str(exc)))
        raise
    run.write(f"[pts {test}] purge: {p.method} done in {p.seconds:.1f} s"
              + (f"; verified: {p.verification}" if p.verification else ""))
    run.ledger.append(records.Purge(
        test=test, method=p.method, command=p.command, ok=True, seconds=p.seconds,
        deviation=p.deviation, steps=[list(s) for s in p.steps], verification=p.verification))
    record_counters(run, test, "after purge")


def write_cache_step(run: Run, test: str, when: str) -> CacheState:
    cache = write_cache.apply(run.device, run.spec.common.write_cache, run.commands_log)
    run.ledger.append(records.WriteCache(test=test, required=cache.required,
                                         actual=cache.actual, settable=cache.settable,
                                         when=when, how=cache.how))
    return cache


def wipc_step(run: Run, test: str, ar_bytes: int, block_size: int,
              tc_qd: tuple[int, int] | None = None) -> None:
    """2x user capacity (pts.conditioning.wipc: the reading) of SEQ writes of `block_size`
    over the ActiveRange at the test's TC/QD (`tc_qd`; default the spec's common TC/QD),
    checked by bytes."""
    multiple = run.spec.wipc.capacity_multiple
    tc, qd = tc_qd or (run.spec.common.thread_count, run.spec.common.queue_depth)
    plan = wipc.plan_wipc(ar_bytes, block_size, multiple, tc, qd, run.device.capacity_bytes)
    if plan.tail_bytes:
        run.deviation(test, f"WIPC: the last {plan.tail_bytes} bytes of the ActiveRange "
                            f"(less than one {format_size(block_size)} block) were not "
                            "preconditioned.")
    run.write(f"[pts {test}] WIPC: {plan.bytes_expected:,} bytes = "
              f"{plan.amount_text(run.spec.common.active_range_pct)} of SEQ "
              f"{format_size(block_size)} writes")
    start = time.monotonic()
    res = wipc.run_wipc(run.fio, run.device.path, plan, run.raw_dir(test))
    run.ledger.append(records.Wipc(
        test=test, block_size=block_size, bytes_expected=plan.bytes_expected,
        bytes_written=res.summary.write.io_bytes, seconds=time.monotonic() - start,
        thread_count=tc, queue_depth=qd, raw=run.relative(res.json_path)))
    record_counters(run, test, "after WIPC")


def prepare(run: Run, test: str, ar_bytes: int, wipc_block_size: int | None,
            tc_qd: tuple[int, int] | None = None,
            before_wipc: Callable[[], None] | None = None, probe: bool = False) -> None:
    """Purge, write cache, WIPC (skipped with None: WSAT-like tests start from FOB) at the
    test's TC/QD (`tc_qd`; default the spec's common TC/QD: §4, TC/QD stay the same).
    `before_wipc` runs on the purged device right before WIPC (--fob-sweep). `probe`: the
    purge probe (pts.conditioning.purge_probe) runs after the write cache is set, before
    `before_wipc`, unless --no-purge-probe."""
    purge_step(run, test)
    cache = write_cache_step(run, test, "before WIPC" if wipc_block_size else "before test")
    if cache.deviation():
        run.deviation(test, cache.deviation())
    if probe and run.settings.purge_probe:
        purge_probe.probe_step(run, test, ar_bytes, tc_qd or (run.spec.common.thread_count,
                                                               run.spec.common.queue_depth))
    if before_wipc:
        before_wipc()
    if wipc_block_size:
        wipc_step(run, test, ar_bytes, wipc_block_size, tc_qd)
        write_cache_step(run, test, "before test loop")


