"""`--dry-run`: print each selected PTS test's plan — purge method and command, WIPC bytes
and job file, rounds x points, every fio job, write cache, estimated duration — and touch
nothing (the device is only resolved, read-only).

Each PTS test of the registry (pts.testdefs.registry) has a plan function; a round-based
test's plan is `round_test_plan` of its declaration.
"""

from __future__ import annotations

import shlex

from pts.conditioning import purge, purge_probe
from pts.conditioning.wipc import READING as WIPC_READING
from pts.conditioning.wipc import WipcPlan, plan_wipc
from pts.conditioning.write_cache import VWC_FEATURE, read_state
from pts.config.settings import Settings
from pts.config.spec import format_size
from pts.device.identity import BlockDevice, active_range_bytes, is_ata
from pts.procedure import ceiling
from pts.procedure.declaration import RoundTest
from pts.procedure.round_measure import FALLBACK_ROUNDS, MAX_OVERLAP, PIPELINE_GAP_MS
from pts.tools import hdparm, nvme, sg3
from pts.tools.fio import Job, JobSet, engine_options, job_file
from pts.tools.fio_round import sections_of

FIO_OVERHEAD_S = 0.3   # measured per fio job on our machines (design.md, Speed)


def hms(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class Estimate(str):
    """A plan line that estimates a duration: its text, plus the best and worst case in
    seconds, which --dry-run adds up into the whole run's (and a session's) estimate."""

    best_s: float
    worst_s: float

    def __new__(cls, text: str, best_s: float, worst_s: float) -> Estimate:
        line = super().__new__(cls, text)
        line.best_s, line.worst_s = best_s, worst_s
        return line


def total_lines(lines) -> list[str]:
    """The whole run's estimate from the Estimate lines of its tests' plans."""
    found = [line for line in lines if isinstance(line, Estimate)]
    if not found:
        return []
    best, worst = sum(e.best_s for e in found), sum(e.worst_s for e in found)
    return [f"estimated duration of this run: best {hms(best)}, worst {hms(worst)} "
            f"({len(found)} estimates of the plans above added; purges not included)"]


def purge_plan(settings: Settings, dev: BlockDevice) -> str:
    """The method and command the run would use (identify data is read; nothing written)."""
    try:
        chosen = purge.plan(settings.purge, dev)
    except purge.PurgeError as exc:
        return f"{settings.purge}: REFUSED at run time — {exc}"
    command = shlex.join(chosen.command) if chosen.command else "no command"
    note = " (declared deviation)" if chosen.deviation else ""
    return f"{chosen.method}{note} [{chosen.reason}]: {command}"


def indent(text: str) -> list[str]:
    return ["    " + line for line in text.rstrip().splitlines()]


def job_lines(dev: BlockDevice, jobs: list[Job], settings: Settings | None = None) -> list[str]:
    """A whole fio job file ([global] with the run's engine, and sections), indented."""
    engine = engine_options(settings.ioengine, settings.io_poll) if settings else None
    return indent(job_file(dev.path, jobs, engine))


def section_lines(dev: BlockDevice, job: Job | JobSet) -> list[str]:
    """One point's job section(s) only (the [global] part is printed once, with the WIPC
    job): an ATW point's sections, one per stream, run together."""
    return indent(job_file(dev.path, list(sections_of(job))).split("\n\n", 1)[1])


def wipc_tail_lines(wipc: WipcPlan, block_size: int) -> list[str]:
    """The end of the ActiveRange shorter than one WIPC block (declared at run time)."""
    if not wipc.tail_bytes:
        return []
    return [f"WIPC: the last {wipc.tail_bytes} bytes of the ActiveRange (less than one "
            f"{format_size(block_size)} block) are not preconditioned: a declared deviation"]


def setup_lines(settings: Settings, dev: BlockDevice, tc: int, qd: int) -> list[str]:
    """Purge, write cache, ActiveRange and TC/QD: the same for every test."""
    common = settings.spec.common
    ar = active_range_bytes(dev, common.active_range_pct)
    cache = read_state(dev, common.write_cache)
    return [f"purge: {purge_plan(settings, dev)}", cache_line(dev, cache),
            f"ActiveRange: {common.active_range_pct} % = {ar:,} bytes; TC {tc} / QD {qd}"]


def cache_line(dev: BlockDevice, cache) -> str:
    if dev.transport == "nvme":
        argv = nvme.set_feature_argv(dev.path, VWC_FEATURE, int(cache.required == "WCE"))
        argv = argv if dev.remote is None else dev.remote.ssh_argv(argv)   # ssh://: there
        return (f"write cache: required {cache.required}; set before WIPC and before the test "
                f"loop with `{shlex.join(argv)}` (when the drive has one), read back with "
                "get-feature")
    if dev.transport == "scsi":          # SATA behind libata: hdparm; SAS/SCSI: sdparm
        enabled = cache.required == "WCE"
        argv, back = ((hdparm.write_cache_argv(dev.path, enabled), "hdparm -W") if is_ata(dev)
                      else (sg3.write_cache_argv(dev.path, enabled), "sdparm --get=WCE=1"))
        argv = argv if dev.remote is None else dev.remote.ssh_argv(argv)
        return (f"write cache: required {cache.required}; set before WIPC and before the test "
                f"loop with `{shlex.join(argv)}`, read back with {back} (the kernel reports "
                f"'{cache.actual}' now)")
    return (f"write cache: required {cache.required}; device reports '{cache.actual}' "
            "(not settable on this transport: deviation)")


def duration_lines(points: int, point_seconds: int, window: int, max_rounds: int,
                   wipc_bytes: int, mode: str = "per-point",
                   extra_round_s: float = 0) -> list[str]:
    if mode == "pipelined":      # one fio start per round, points PIPELINE_GAP_MS apart at least
        per_round = points * (point_seconds + PIPELINE_GAP_MS / 1000) + FIO_OVERHEAD_S
    else:
        per_round = points * (point_seconds + FIO_OVERHEAD_S)
    if extra_round_s:            # one more fio run per round
        per_round += extra_round_s + FIO_OVERHEAD_S
    wipc = ", ".join(f"{hms(wipc_bytes / rate)} at {rate / 1e9:g} GB/s" for rate in (0.5e9, 3e9))
    # pipelined: a point waits for the one before to complete its I/O: a drive that drains
    # after a point's runtime adds its drains, not known before the drive is measured
    more = " (more where a point's I/O drains after its runtime: the next point waits for " \
        "it)" if mode == "pipelined" else ""
    return [Estimate(f"estimated duration: WIPC {wipc} (depends on the drive's SEQ write "
                     f"speed); rounds {hms(per_round)} each{more}: best case "
                     f"{hms(window * per_round)} (steady by round {window}), worst case "
                     f"{hms(max_rounds * per_round)} ({max_rounds} rounds)",
                     wipc_bytes / 3e9 + window * per_round,
                     wipc_bytes / 0.5e9 + max_rounds * per_round)]


def fills_duration_lines(bytes_planned: int, limit_s: int) -> list[str]:
    """A run that stops at `bytes_planned` written or after `limit_s`, whichever first."""
    fast, slow = bytes_planned / 3e9, bytes_planned / 0.5e9

    def case(seconds: float, rate: str) -> str:
        if seconds < limit_s:
            return f"{hms(seconds + FIO_OVERHEAD_S)} (the fills, written at {rate})"
        return f"{hms(limit_s + FIO_OVERHEAD_S)} (the time limit: at {rate} the fills " \
               f"would take {hms(seconds)})"
    return [Estimate(f"estimated duration: writing {bytes_planned:,} bytes takes {hms(slow)} "
                     f"at 0.5 GB/s, {hms(fast)} at 3 GB/s; time limit {hms(limit_s)}; "
                     f"whichever first: best case {case(fast, '3 GB/s')}, worst case "
                     f"{case(slow, '0.5 GB/s')} (depends on the drive's RND write speed)",
                     min(fast, limit_s) + FIO_OVERHEAD_S, min(slow, limit_s) + FIO_OVERHEAD_S)]


def round_test_plan(settings: Settings, device: BlockDevice, decl: RoundTest,
                    extra_round_s: float = 0) -> list[str]:
    """The plan of a round-based test: setup, WIPC and its job file, the rounds, every
    point's job section (or N/A reason), the duration estimate. `extra_round_s`: writes of
    a round besides its points (HIR: the intervals before the measured one)."""
    spec = settings.spec
    ledger_name = "" if decl.test == decl.title.lower() else f"; ledger test {decl.test}"
    lines = [f"{decl.title} test ({decl.clause}{ledger_name})",
             *setup_lines(settings, device, decl.thread_count, decl.queue_depth)]
    if decl.purge_probe:
        lines += purge_probe.plan_lines(settings, decl.thread_count, decl.queue_depth,
                                         test=decl.test)
    wipc_bytes = 0
    if decl.wipc_block_size:
        ar = active_range_bytes(device, spec.common.active_range_pct)
        wipc = plan_wipc(ar, decl.wipc_block_size, spec.wipc.capacity_multiple,
                         decl.thread_count, decl.queue_depth, device.capacity_bytes)
        wipc_bytes = wipc.bytes_expected
        lines += [f"WIPC: {wipc.bytes_expected:,} bytes of SEQ "
                  f"{format_size(decl.wipc_block_size)} writes{decl.wipc_note}; fio job file:",
                  *job_lines(device, list(wipc.jobs), settings),
                  f"WIPC amount: {wipc.amount_text(spec.common.active_range_pct)}; reading: "
                  f"{WIPC_READING}",
                  *wipc_tail_lines(wipc, decl.wipc_block_size)]
    else:
        lines.append("WIPC: none: the test starts from the purged drive")
    lines += ceiling.plan_lines(settings, decl)
    measured = [p for p in decl.points if not p.na_reason]
    seconds = decl.point_seconds or settings.point_seconds
    max_rounds = decl.max_rounds or settings.max_rounds
    until = f"until steady ({decl.until}) or" if decl.until_steady else \
        f"steady state ({decl.until}) judged every round, until the stop rule or"
    lines.append(
        f"rounds: {len(decl.points)} points per round ({len(measured)} measured, "
        f"{len(decl.points) - len(measured)} N/A) x {seconds} s, {until} "
        f"{max_rounds} rounds; {decl.measures}"
        f"{mode_text(settings)}; each point's fio job section:")
    lines += point_lines(device, decl.points, decl.job)
    return lines + duration_lines(len(measured), seconds,
                                  spec.steady_state.window_rounds, max_rounds,
                                  wipc_bytes, settings.round_mode, extra_round_s)


def mode_text(settings: Settings) -> str:
    return {
        "pipelined": f"the points of a round run as ONE fio process, the first point "
                     f"starting when all its fio threads are set up (a barrier in exec_prerun: "
                     f"an ATW point's IO streams start together), each later point when "
                     f"every fio thread of the one before has completed its I/O (exec_postrun "
                     f"of point k-1 releases exec_prerun of point k; point k is set up while "
                     f"k-1 runs: wait_for point k-2; each point also gets new_group and a "
                     f"timing log); a point overlapping the one before by more than "
                     f"{MAX_OVERLAP:.0%} of a point is measured again stonewalled after the "
                     f"round ({FALLBACK_ROUNDS} such rounds in a row: the test's later rounds "
                     f"run stonewalled)",
        "stonewalled": "the points of a round run as ONE fio process, each starting when the "
                       "one before has finished (stonewall, new_group, timing log)",
        "per-point": "one fio process per point",
    }[settings.round_mode]


def point_lines(device, points, job_for) -> list[str]:
    """Each point's fio job section, or its N/A reason, in loop order."""
    lines = []
    for p in points:
        if p.na_reason:
            lines.append(f"    [{p.label}] N/A: {p.na_reason}")
        else:
            lines += section_lines(device, job_for(p))
    return lines
