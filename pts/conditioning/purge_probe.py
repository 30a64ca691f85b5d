"""The purge probe (issue 16): right after the purge, before WIPC, a few seconds of RND
writes (spec file `[purge_probe]`: 4 KiB, `seconds`) at the test's TC/QD on the purged
drive, recorded as a `purge_probe` record. A purge that did not erase anything (a format
that does not reset the FTL, `--purge none` on a used drive) leaves the drive near steady
state, so the probe's IOPS come out close to the steady-state figure; the report compares
the two at the end (pts.stored.purge_check). An addition to the PTS flow, shown on the
report; WIPC overwrites the ActiveRange twice afterwards. --no-purge-probe removes it."""

from __future__ import annotations

from pts.config.settings import Settings
from pts.config.spec import format_size
from pts.results import records
from pts.run import Run
from pts.tools.fio import random_job


def probe_step(run: Run, test: str, ar_bytes: int, tc_qd: tuple[int, int]) -> None:
    spec = run.spec.purge_probe
    tc, qd = tc_qd
    bs = max(spec.block_size, run.device.logical_sector)
    where = "the drive as found (--purge none)" if run.settings.purge == "none" else \
        "the purged drive"
    run.write(f"[pts {test}] purge probe: {spec.seconds} s of RND {format_size(bs)} writes at "
              f"TC {tc} / QD {qd} on {where} (addition to the PTS flow; "
              "--no-purge-probe removes it)")
    job = random_job("probe", 0, bs, qd, tc, spec.seconds, ar_bytes)
    res = run.fio.run(run.device.path, [job], run.raw_dir(test), "purge-probe",
                      timeout=spec.seconds * 3 + 120)
    seconds = res.summary.write.runtime_ms / 1000
    record(run, test, bs, tc, qd, seconds, res.summary.write.iops,
           run.relative(res.json_path))
    run.write(f"[pts {test}] purge probe: {res.summary.write.iops:,.0f} write IOPS")


def record(run: Run, test: str, block_size: int, tc: int, qd: int, seconds: float,
           iops: float, raw: str) -> None:
    """The purge_probe record (also the WSAT's, whose first sample is its probe)."""
    run.ledger.append(records.PurgeProbe(
        test=test, block_size=block_size, rw_mix="0/100", thread_count=tc, queue_depth=qd,
        seconds=seconds, iops=iops, fob_ss_min_ratio=run.spec.purge_probe.fob_ss_min_ratio,
        raw=raw))


def plan_lines(settings: Settings, tc: int, qd: int, first_sample: bool = False,
               test: str = "iops") -> list[str]:
    """The probe in --dry-run's plan (IOPS, HIR; WSAT: its own first sample, no extra
    writes). For HIR the comparison is with its preconditioning baseline, which a FOB/SS
    below the threshold shows may still be the FOB plateau (issue 21 §3)."""
    spec = settings.spec.purge_probe
    if not settings.purge_probe:
        return ["purge probe: off (--no-purge-probe)"]
    if first_sample:
        return ["purge probe: the first WSAT sample (writes on the purged drive; no extra "
                f"writes) against the final window; FOB/SS below {spec.fob_ss_min_ratio:g} "
                "warns that the purge did not return the drive to FOB"]
    return [f"purge probe (an addition to the PTS flow; --no-purge-probe removes it): "
            f"{spec.seconds} s of RND {format_size(spec.block_size)} writes at TC {tc} / QD "
            f"{qd} right after the purge, before WIPC; at the end FOB/SS below "
            f"{spec.fob_ss_min_ratio:g} warns " + (
                "that the preconditioning baseline may be the FOB plateau" if test == "hir"
                else "that the purge did not return the drive to FOB")]
