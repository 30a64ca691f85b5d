"""The [hir] and [xsr] tables of a spec file (pts-digest §7.5 Host Idle Recovery, §7.6 Cross
Stimulus Recovery): dataclasses and their reader. pts.config.spec calls `read_hir` and
`read_xsr` with its reader (which names file and key in every error)."""

from __future__ import annotations

from dataclasses import dataclass

IDLE_OVER_WRITE, ORDINAL = "idle_over_write", "ordinal"
NAMINGS = (IDLE_OVER_WRITE, ORDINAL)
READING_ROUND_INTERVALS = 30     # HIR round = 30 x 1-min intervals (S4/S5; digest §7.5, §13)


@dataclass(frozen=True)
class HirTest:
    clause: str
    block_size: int                  # RND writes (0/100), preconditioning and wait states
    thread_count: int
    queue_depth: int
    write_seconds: int               # Access A: the write of one repetition
    idle_seconds: tuple[int, ...]    # Access B: host idle of each wait state, in order
    repetitions: int                 # A+B repetitions per wait state
    baseline_repetitions: int        # Access C: return-to-baseline writes after each state
    wait_state_naming: str = IDLE_OVER_WRITE   # how wait states are named (state_names)
    # Preconditioning round: this many intervals of point_seconds, the last one tracked
    # (reading S4/S5: 30; pts.testdefs.hir)
    precondition_round_intervals: int = READING_ROUND_INTERVALS

    def state_names(self) -> tuple[str, ...]:
        """The wait states' names, in order. "idle_over_write": WS + idle / write time of the
        spec's values (5/10/15/25/50 s over 5 s -> WS1, WS2, WS3, WS5, WS10: S5, S7, S4's
        header); "ordinal": WS1..WS5 (S4's plot legend). Spec values, not --time-scale'd
        ones, so a shortened run keeps the spec's names."""
        if self.wait_state_naming == ORDINAL:
            return tuple(f"WS{k}" for k in range(1, len(self.idle_seconds) + 1))
        return tuple(f"WS{i / self.write_seconds:g}" for i in self.idle_seconds)

    def total_seconds(self) -> float:
        """Wait states + return-to-baseline segments as the spec has them (spec: 55 800 s ~
        15.5 h; a run's own, --time-scale'd: pts.testdefs.hir_schedule)."""
        w, n, base = self.write_seconds, self.repetitions, self.baseline_repetitions
        return sum(n * (w + i) + base * w for i in self.idle_seconds)


@dataclass(frozen=True)
class XsrGroup:
    pattern: str                     # "seq" or "rnd"
    block_size: int
    hours: float


@dataclass(frozen=True)
class XsrTest:
    clause: str
    thread_count: int
    queue_depth: int
    groups: tuple[XsrGroup, ...]     # Access Groups 1..3, 100 % writes
    recovery_band_pct: float         # recovery: TP within this % of the group's final level
    recovery_sustain: int            # ... for this many consecutive intervals
    final_level_fraction: float      # the final level: mean TP of this last part of a group


def read_hir(r, data: dict, parse_size) -> HirTest:
    w = "hir"
    t = r.table(data, w, {"clause", "block_size", "thread_count", "queue_depth",
                          "write_seconds", "idle_seconds", "repetitions",
                          "baseline_repetitions", "wait_state_naming",
                          "precondition_round_intervals"})
    bs = r.convert(f"{w}.block_size", [r.value(t, w, "block_size", str)], parse_size)[0]
    pos = (lambda v: v > 0, " (> 0)")
    idle = t["idle_seconds"]
    if not isinstance(idle, list) or not idle or \
            not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in idle):
        raise r.fail(f"{w}.idle_seconds", f"{idle!r} must be a non-empty list of whole "
                                          "seconds > 0")
    return HirTest(r.value(t, w, "clause", str), bs, *r.tc_qd(t, w),
                   r.value(t, w, "write_seconds", int, *pos), tuple(idle),
                   r.value(t, w, "repetitions", int, *pos),
                   r.value(t, w, "baseline_repetitions", int, *pos),
                   r.value(t, w, "wait_state_naming", str, lambda v: v in NAMINGS,
                           f" (one of {', '.join(NAMINGS)})"),
                   r.value(t, w, "precondition_round_intervals", int, *pos))


def read_xsr(r, data: dict, parse_size) -> XsrTest:
    w = "xsr"
    t = r.table(data, w, {"clause", "thread_count", "queue_depth", "patterns", "block_sizes",
                          "group_hours", "recovery_band_pct", "recovery_sustain_intervals",
                          "final_level_fraction"})
    pats, sizes, hours = t["patterns"], t["block_sizes"], t["group_hours"]
    for key, items in (("patterns", pats), ("block_sizes", sizes), ("group_hours", hours)):
        if not isinstance(items, list) or len(items) != 3:
            raise r.fail(f"{w}.{key}", f"{items!r} must be a list of 3 (Access Groups 1-3)")
    if any(p not in ("seq", "rnd") for p in pats):
        raise r.fail(f"{w}.patterns", f"{pats!r}: each must be 'seq' or 'rnd'")
    if any(isinstance(h, bool) or not isinstance(h, int | float) or h <= 0 for h in hours):
        raise r.fail(f"{w}.group_hours", f"{hours!r}: each must be a number of hours > 0")
    bss = r.convert(f"{w}.block_sizes", sizes, parse_size)
    groups = tuple(XsrGroup(p, b, float(h)) for p, b, h in zip(pats, bss, hours, strict=True))
    return XsrTest(r.value(t, w, "clause", str), *r.tc_qd(t, w), groups,
                   r.value(t, w, "recovery_band_pct", float, lambda v: 0 < v < 100,
                           " (a percentage between 0 and 100)"),
                   r.value(t, w, "recovery_sustain_intervals", int, lambda v: v >= 1,
                           " (>= 1)"),
                   r.value(t, w, "final_level_fraction", float, lambda v: 0 < v <= 1,
                           " (0 < f <= 1)"))
