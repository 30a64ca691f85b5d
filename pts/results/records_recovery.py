"""The ledger records of the recovery tests: HIR's baseline, write intervals and wait states
(pts.testdefs.hir) and XSR's intervals and access groups (pts.testdefs.xsr). Part of the
ledger schema: pts.results.records lists them in its TYPES and its callers import them
there; docs/results-format.md documents their fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pts.results.record import Record


@dataclass(frozen=True, kw_only=True)
class HirBaseline(Record):
    """HIR: the steady-state baseline its preconditioning reached (pts.testdefs.hir)."""
    TYPE: ClassVar[str] = "hir_baseline"
    ss_iops: float                  # mean tracking IOPS of the final window
    window: list[int]
    steady: bool
    rounds: int


@dataclass(frozen=True, kw_only=True)
class HirWrite(Record):
    """HIR: one write interval (Access A of a wait state, or C: return to baseline)."""
    TYPE: ClassVar[str] = "hir_write"
    state: int                      # 1-based wait state
    idle_s: int                     # the state's planned idle (Access B)
    segment: str                    # "wait", "lead_in" (fio's first interval) or "baseline"
    interval: int                   # 1-based within the segment
    start: float                    # Unix s: first I/O
    end: float                      # Unix s: last completion
    idle_before_s: float | None     # measured device idle before it (None: first)
    ios: float
    iops: float


@dataclass(frozen=True, kw_only=True)
class HirState(Record):
    """HIR: a completed wait state and its return-to-baseline segment."""
    TYPE: ClassVar[str] = "hir_state"
    state: int
    idle_s: int
    write_s: int
    repetitions: int
    wait_iops: float                # mean IOPS of its write intervals (lead-in excluded)
    baseline_iops: float            # mean IOPS of its return-to-baseline segment
    ss_iops: float                  # the preconditioning baseline
    ratio: float                    # wait_iops / ss_iops
    idle_measured_s: list[float]    # min, mean, max of the measured idle gaps
    raw: str


@dataclass(frozen=True, kw_only=True)
class XsrInterval(Record):
    """XSR: one measurement interval of an access group."""
    TYPE: ClassVar[str] = "xsr_interval"
    group: int                      # 1..3
    interval: int                   # 1-based within the group
    start_s: float                  # since the test's first group started (group offsets)
    end_s: float
    tp_mbps: float
    iops: float
    lat_mean_us: float | None       # ART: mean total latency
    clat_max_us: float | None       # MRT: max completion latency (histogram resolution)


@dataclass(frozen=True, kw_only=True)
class XsrGroup(Record):
    """XSR: a completed access group."""
    TYPE: ClassVar[str] = "xsr_group"
    group: int
    pattern: str                    # "seq" / "rnd"
    block_size: int
    seconds: int
    intervals: int
    end_tp_mbps: float              # mean TP of the last interval
    final_level_mbps: float         # the recovery rule's final level
    peak_lat_mean_us: float | None
    peak_clat_max_us: float | None
    recovery_s: float | None        # after the switch into this group (None: group 1 or never)
    recovered: bool | None          # None for group 1
    raw: str
    host_bound: dict | None = None  # the group's whole-run figure, as a point's (ceiling)
