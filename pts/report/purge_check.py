"""Purge effectiveness (issue 16): the purge probe's FOB write IOPS (a `purge_probe` record)
against the test's steady-state RND 4 KiB write IOPS — the IOPS test's window mean of the
0/100 4 KiB cell, the WSAT's final window, HIR's preconditioning baseline. A drive the purge
returned to FOB writes faster right after it than in steady state; FOB/SS below the spec
file's threshold (recorded with the probe) means the purge left the drive about where it
was — or, for HIR, that its baseline is still the fresh-out-of-box plateau (a
preconditioning judged steady before the drive left FOB), against which every wait-state
ratio would be taken."""

from __future__ import annotations

from dataclasses import dataclass

from pts.report.model import PurgeProbeView, TestResult
from pts.results import records

WARNING = "the purge appears not to have returned the drive to FOB"
HIR_WARNING = ("the steady-state baseline is within the FOB band: it may be the drive's "
               "fresh-out-of-box plateau rather than its steady state (or the purge did not "
               "return the drive to FOB), and the wait-state ratios are taken against it")


@dataclass(frozen=True)
class ProbeCheck:
    test: str
    probe: PurgeProbeView
    ss_iops: float | None        # None: nothing to compare with
    ss_source: str               # where the steady-state figure comes from, or why none

    @property
    def ratio(self) -> float | None:
        return self.probe.iops / self.ss_iops if self.ss_iops else None

    @property
    def warning(self) -> str | None:
        if self.ratio is None or self.ratio >= self.probe.fob_ss_min_ratio:
            return None
        what = HIR_WARNING if self.test == "hir" else WARNING
        return (f"{self.test}: {what}: purge probe {self.probe.iops:,.0f} write IOPS vs "
                f"steady state {self.ss_iops:,.0f} ({self.ss_source}), FOB/SS "
                f"{self.ratio:.2f} < {self.probe.fob_ss_min_ratio:g}")

    def text(self) -> str:
        """The test setup row."""
        p = self.probe
        head = (f"{p.iops:,.0f} write IOPS, RND {p.block_size // 1024} KiB at TC "
                f"{p.thread_count} / QD {p.queue_depth} for {p.seconds or 0:.1f} s right "
                "after the purge " + ("(the first WSAT sample: no extra writes)"
                                      if self.test == "wsat" else
                                      "(an addition to the PTS flow; --no-purge-probe "
                                      "removes it)"))
        if self.ratio is None:
            return f"{head}; not compared: {self.ss_source}"
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
    return ProbeCheck(test.name, probe, ss, source)


def warnings(tests) -> list[str]:
    return [w for c in (check(t) for t in tests) if c and (w := c.warning)]
