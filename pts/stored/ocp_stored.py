"""What a stored run holds that the OCP requirement verdicts (pts.stored.ocp_verdicts) read:
its NVMe SMART / Health readings (device_counters records of source "smart-log", the C0h page
beside them) and its completed purges, in ledger order, taken from the read model's records
(RunView.records); the verdict words and how a reading's step is named. Stored data only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pts.device import health, media_writes
from pts.results import records
from pts.stored.model import RunView

PASS, FAIL, NOT_CHECKED = "PASS", "FAIL", "NOT CHECKED"
Result = tuple[str, str, list]        # a check's verdict, reason and evidence


@dataclass
class Stored:
    """What the run recorded that the verdicts read, in ledger order."""
    run: RunView
    smart: list = field(default_factory=list)       # DeviceCounters, source smart-log
    purges: list = field(default_factory=list)      # Purge records that completed
    ordered: list = field(default_factory=list)     # both kinds, ledger order

    @classmethod
    def of(cls, run: RunView) -> Stored:
        found = cls(run)
        for r in run.records:
            if isinstance(r, records.DeviceCounters) and r.source == health.SOURCE:
                found.smart.append(r)
                found.ordered.append(r)
            elif isinstance(r, records.Purge) and r.ok:
                found.purges.append(r)
                found.ordered.append(r)
        return found

    @property
    def read(self) -> list:
        """The smart-log records whose counters were read."""
        return [r for r in self.smart if isinstance(r.counters, dict)]

    @property
    def pages(self) -> list:
        """(record, C0h summary) where the C0h page was read."""
        return [(r, r.counters[media_writes.OCP_C0]) for r in self.read
                if isinstance(r.counters.get(media_writes.OCP_C0), dict)]

    def no_counters(self) -> str:
        d = self.run.device
        kind = "the emulated SSD" if d.emulated else f"transport {d.transport}"
        return (f"the run recorded no NVMe SMART / Health counters ({d.path}: {kind}); "
                "nothing to judge it from")

    def no_c0(self) -> str:
        if not self.read:
            return self.no_counters()
        first = self.read[0].counters
        if first.get("media_source") == media_writes.OCP and media_writes.OCP_C0 not in first:
            return ("the run read C0h for its media writes but kept only them (recorded "
                    "before the C0h page was kept whole)")
        how = first.get("media_source") or first.get("media_note") or "no media counter"
        return f"the run recorded no C0h page (media writes: {how})"


def step(rec) -> str:
    return f"{rec.test} {rec.when}"


def decrease(pairs: list, value: Callable) -> str:
    """'A at step -> B at step' where a counter fell between two readings, else ''."""
    last = None
    for rec, item in pairs:
        v = value(item)
        if v is None:
            continue
        if last is not None and v < last[1]:
            return f"{last[1]:,} at {step(last[0])} -> {v:,} at {step(rec)}"
        last = (rec, v)
    return ""
