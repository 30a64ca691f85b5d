"""Purge effectiveness (issue 16): the purge probe's FOB write IOPS (a `purge_probe` record)
against the test's steady-state RND 4 KiB write IOPS — the IOPS test's window mean of the
0/100 4 KiB cell, the WSAT's final window, HIR's preconditioning baseline. A drive the purge
returned to FOB writes faster right after it than in steady state; FOB/SS below the spec
file's threshold (recorded with the probe) means the purge left the drive about where it
was — or, for HIR, that its baseline is still the fresh-out-of-box plateau (a
preconditioning judged steady before the drive left FOB), against which every wait-state
ratio would be taken.

With `--purge none` no purge ran: the probe then measures the drive as the test found it.
Near its steady state means it was not at FOB. Well above it does NOT show FOB: a drive used
with another workload (large or sequential writes) can write 4 KiB faster than its 4 KiB
steady state without being fresh; the report says so rather than "purge effective"."""

from __future__ import annotations

from dataclasses import dataclass

from pts.results import records
from pts.stored.model import PurgeProbeView, TestResult

WARNING = "the purge appears not to have returned the drive to FOB"
HIR_WARNING = ("the steady-state baseline is within the FOB band: it may be the drive's "
               "fresh-out-of-box plateau rather than its steady state (or the purge did not "
               "return the drive to FOB), and the wait-state ratios are taken against it")
WARNING_NO_PURGE = "no purge ran and the drive started near its steady state (not at FOB)"
LIMITS_NO_PURGE = ("A probe well above steady state does not show FOB: a drive used with "
                   "another workload can write faster than its 4 KiB steady state without "
                   "being fresh; only a purge returns it to FOB")


@dataclass(frozen=True)
class ProbeCheck:
    test: str
    probe: PurgeProbeView
    ss_iops: float | None        # None: nothing to compare with
    ss_source: str               # where the steady-state figure comes from, or why none
    purged: bool = True          # False: --purge none, the probe saw the drive as found

    @property
    def ratio(self) -> float | None:
        return self.probe.iops / self.ss_iops if self.ss_iops else None

    @property
    def warning(self) -> str | None:
        if self.ratio is None or self.ratio >= self.probe.fob_ss_min_ratio:
            return None
        what = (HIR_WARNING if self.test == "hir" else
                WARNING if self.purged else WARNING_NO_PURGE)
        return (f"{self.test}: {what}: purge probe {self.probe.iops:,.0f} write IOPS vs "
                f"steady state {self.ss_iops:,.0f} ({self.ss_source}), "
                f"{'FOB' if self.purged else 'start'}/SS "
                f"{self.ratio:.2f} < {self.probe.fob_ss_min_ratio:g}")

    def text(self) -> str:
        """The test setup row."""
        p = self.probe
        when = "right after the purge" if self.purged else \
            "at the start of the test (NO purge ran: --purge none)"
        head = (f"{p.iops:,.0f} write IOPS, RND {p.block_size // 1024} KiB at TC "
                f"{p.thread_count} / QD {p.queue_depth} for {p.seconds or 0:.1f} s {when} "
                + ("(the first WSAT sample: no extra writes)" if self.test == "wsat" else
                   "(an addition to the PTS flow; --no-purge-probe removes it)"))
        if self.ratio is None:
            return f"{head}; not compared: {self.ss_source}"
        if not self.purged:
            verdict = ("near steady state: NOT at FOB" if self.warning else
                       f"faster than steady state. {LIMITS_NO_PURGE}")
            return (f"{head}; steady state {self.ss_iops:,.0f} ({self.ss_source}); start/SS "
                    f"{self.ratio:.2f}, threshold {p.fob_ss_min_ratio:g}: {verdict}")
        verdict = "PURGE NOT EFFECTIVE?" if self.warning else "purge effective"
        return (f"{head}; steady state {self.ss_iops:,.0f} ({self.ss_source}); FOB/SS "
                f"{self.ratio:.2f}, threshold {p.fob_ss_min_ratio:g}: {verdict}")


def steady_write_iops(test: TestResult, block_size: int) -> tuple[float | None, str]:
    if test.name == "iops":
        for cell in test.cells:
            if cell.rw_mix == "0/100" and cell.block_size == block_size:
                if cell.mean is None:
                    break
                return cell.mean, (f"IOPS window mean of RND {block_size // 1024} KiB 0/100 "
                                   f"over {cell.rounds} rounds")
        return None, f"no RND {block_size // 1024} KiB 0/100 value in the measurement window"
    ss = test.result.get("ss_average")
    if test.name == "wsat" and isinstance(ss, int | float) and ss > 0:
        window = test.result.get("ss_window") or []
        return float(ss), "WSAT final window" + (
            f" (samples {window[0]}..{window[1]})" if len(window) == 2 else "")
    base = [r for r in test.recovery if isinstance(r, records.HirBaseline)]
    if test.name == "hir" and base and base[-1].ss_iops > 0:
        b = base[-1]
        span = f"rounds {b.window[0]}-{b.window[1]}" if len(b.window) == 2 else "no window"
        return b.ss_iops, (f"HIR preconditioning baseline, {span}, "
                           + ("steady" if b.steady else "NOT steady"))
    return None, "no steady-state RND write IOPS recorded"


def check(test: TestResult) -> ProbeCheck | None:
    probe = test.purge_probe
    if not isinstance(probe, PurgeProbeView):
        return None
    ss, source = steady_write_iops(test, probe.block_size)
    purged = test.purge is None or test.purge.method != "none"
    return ProbeCheck(test.name, probe, ss, source, purged)


def warnings(tests) -> list[str]:
    return [w for c in (check(t) for t in tests) if c and (w := c.warning)]
