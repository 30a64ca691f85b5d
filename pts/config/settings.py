"""Effective settings of a run: the options, checked, plus the deviations they imply.

Precedence: command-line option, then the spec's value. Every value that differs from the
spec is a declared deviation (design principle 6), worded for the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pts.config.report_info import ReportInfo
from pts.config.spec import RwMix, Spec, format_size, parse_size

PURGE_CHOICES = ("auto", "sanitize", "format", "security-erase", "trim", "none")
# How the points of a round are run (pts.tools.fio_round): one fio process per round with
# the points back to back, one process with each point waiting for the one before, or one
# fio process per point.
ROUND_MODES = ("pipelined", "stonewalled", "per-point")
# fio's I/O engine (pts-digest §11: "ioengine=libaio or io_uring"). libaio is the default: the
# engine of the PTS readings and of every reference tool (anchors.md), so figures compare with
# theirs; io_uring (with fixed buffers and registered files; --io-poll: polled completion)
# for fast drives whose libaio figure is the host's (issue 33, docs/running.md).
IO_ENGINES = ("libaio", "io_uring")
# The host ceiling (pts.procedure.ceiling): "auto" measures it on a RAM-backed block device
# before each test where one can be made (root: null_blk, else a loop device over tmpfs),
# "off" does not (declared on the report).
HOST_CEILING_CHOICES = ("auto", "off")
# A point is host-bound when its figure reaches this share of the host's ceiling (issue 33
# §1: "e.g. 80 %"), or its mean latency is within this margin of the host's floor.
HOST_BOUND_SHARE = 0.8
HOST_FLOOR_MARGIN = 0.25


class SettingsError(ValueError):
    """A bad option value; the message names the option and the fix."""


@dataclass(frozen=True)
class Settings:
    device: str | None
    destructive: bool
    spec: Spec
    point_seconds: int
    max_rounds: int
    purge: str
    reports_dir: Path
    iops_block_sizes: tuple[int, ...]  # IOPS inner loop actually run, spec order
    iops_rw_mixes: tuple[RwMix, ...]   # IOPS outer loop actually run, spec order
    wsat_fills: float | None = None  # WSAT stop: drive fills (None: the spec's)
    wsat_hours: float | None = None  # WSAT stop: time limit in hours (None: the spec's)
    fob_sweep: bool = False          # IOPS: one informative round between purge and WIPC
    round_mode: str = "pipelined"    # ROUND_MODES
    # Multiplies the spec's fixed long durations (DIRTH/CBW pre-writes and histogram
    # captures, HIR write and idle lengths, XSR access groups); 1 = as the spec says.
    time_scale: float = 1.0
    # DIRTH/CBW demand-variation grid actually run (None: the spec's), spec order
    dirth_thread_counts: tuple[int, ...] | None = None
    dirth_queue_depths: tuple[int, ...] | None = None
    hir_repetitions: int | None = None   # HIR: A+B (and C) repetitions (None: the spec's 360)
    purge_probe: bool = True         # IOPS/WSAT: FOB write probe right after the purge
    # --operator/--auditor/--sponsor/--report-info: run.json `report_info`, not an option
    report_info: ReportInfo = ReportInfo()
    # --workload: the Applied Test Workload of the RWSW tests (a pts.workload.atw.Workload,
    # loaded and checked when the session starts; typed `object`: that layer is above this)
    workload: object | None = None
    workload_path: str | None = None
    ioengine: str = "libaio"         # IO_ENGINES
    io_poll: bool = False            # io_uring polled completion (hipri); needs poll queues
    host_ceiling: str = "auto"       # HOST_CEILING_CHOICES
    host_bound_share: float = HOST_BOUND_SHARE
    host_floor_margin: float = HOST_FLOOR_MARGIN

    def scaled(self, seconds: float) -> int:
        """A fixed long duration of the spec x --time-scale, whole seconds, at least 1 s: the
        one --time-scale rule (DIRTH/CBW, HIR and XSR durations all come through here)."""
        return max(1, round(seconds * self.time_scale))

    @property
    def wsat_stop(self) -> tuple[float, float]:
        """(drive fills, hours): WSAT stops at whichever comes first."""
        w = self.spec.wsat
        return (w.capacity_multiple if self.wsat_fills is None else self.wsat_fills,
                w.max_hours if self.wsat_hours is None else self.wsat_hours)

    def as_dict(self) -> dict:
        return {"device": self.device, "destructive": self.destructive, "spec": self.spec.name,
                "point_seconds": self.point_seconds, "max_rounds": self.max_rounds,
                "purge": self.purge, "reports_dir": str(self.reports_dir),
                "iops_block_sizes": [format_size(b) for b in self.iops_block_sizes],
                "iops_rw_mixes": [str(m) for m in self.iops_rw_mixes],
                "wsat_fills": self.wsat_stop[0], "wsat_hours": self.wsat_stop[1],
                "fob_sweep": self.fob_sweep, "round_mode": self.round_mode,
                "time_scale": self.time_scale,
                "dirth_thread_counts": _listed(self.dirth_thread_counts),
                "dirth_queue_depths": _listed(self.dirth_queue_depths),
                "hir_repetitions": self.hir_repetitions, "purge_probe": self.purge_probe,
                "workload": self.workload_path, "ioengine": self.ioengine,
                "io_poll": self.io_poll, "host_ceiling": self.host_ceiling,
                "host_bound_share": self.host_bound_share,
                "host_floor_margin": self.host_floor_margin}

    def deviations(self) -> list[str]:
        """Deviations known from the options alone (more are found while running)."""
        spec, out = self.spec, []
        if self.point_seconds != spec.common.point_seconds:
            out.append(f"Test point duration {self.point_seconds} s instead of "
                       f"{spec.common.point_seconds} s.")
        if self.max_rounds < spec.steady_state.max_rounds:
            out.append(f"At most {self.max_rounds} rounds instead of "
                       f"{spec.steady_state.max_rounds}.")
        if self.purge == "trim":
            out.append("Purge replaced by TRIM (blkdiscard of the whole device); TRIM is not a "
                       "purge method of the PTS.")
        if self.purge == "none":
            out.append("Purge not performed (--purge none).")
        if (self.iops_block_sizes != spec.iops.block_sizes
                or self.iops_rw_mixes != spec.iops.rw_mixes):
            out.append("IOPS matrix reduced to block sizes "
                       + ", ".join(format_size(b) for b in self.iops_block_sizes)
                       + " x R/W mixes " + ", ".join(str(m) for m in self.iops_rw_mixes)
                       + f" (spec: {len(spec.iops.block_sizes)} x {len(spec.iops.rw_mixes)}).")
        fills, hours = self.wsat_stop
        if fills != spec.wsat.capacity_multiple:
            out.append(f"WSAT stops after {fills:g} drive fill(s) instead of "
                       f"{spec.wsat.capacity_multiple:g} (or at its time limit).")
        if hours != spec.wsat.max_hours:
            out.append(f"WSAT time limit {hours:g} h instead of {spec.wsat.max_hours:g} h.")
        if self.fob_sweep:
            out.append("IOPS: one informative FOB round of the IOPS matrix ran between purge "
                       "and WIPC (--fob-sweep); the PTS flow has no step there.")
        if self.time_scale != 1:
            out.append(f"Fixed long durations (pre-writes, histogram captures, recovery "
                       f"segments and access groups) scaled by {self.time_scale:g} "
                       "(--time-scale).")
        for option, grid, full in (
                ("thread counts", self.dirth_thread_counts, getattr(spec.dirth, "thread_counts",
                                                                    None)),
                ("queue depths", self.dirth_queue_depths, getattr(spec.dirth, "queue_depths",
                                                                  None))):
            if grid is not None and grid != full:
                out.append(f"DIRTH/CBW demand-variation grid reduced to {option} "
                           f"{', '.join(map(str, grid))} (spec: {', '.join(map(str, full))}).")
        if self.hir_repetitions is not None and \
                self.hir_repetitions != spec.hir.repetitions:
            out.append(f"HIR: {self.hir_repetitions} repetitions per wait state and "
                       f"return-to-baseline segment instead of {spec.hir.repetitions} "
                       "(--hir-repetitions).")
        return out


def _listed(values: tuple[int, ...] | None) -> list[str] | None:
    """As the option is written (resume sets options back from run.json)."""
    return None if values is None else [str(v) for v in values]


def _subset(option: str, text: str | None, parse, allowed: tuple, what: str) -> tuple:
    """A comma-separated subset of the spec's values, returned in the spec's order."""
    if not text:
        return allowed
    chosen = []
    for item in text.split(","):
        try:
            value = parse(item.strip())
        except ValueError as exc:
            raise SettingsError(f"{option}: {exc}") from None
        if value not in allowed:
            raise SettingsError(f"{option}: {item.strip()} is not one of the spec's {what}")
        chosen.append(value)
    return tuple(v for v in allowed if v in chosen)


def make_settings(spec: Spec, *, device: str | None, destructive: bool,
                  point_seconds: int | None, max_rounds: int | None, purge: str,
                  reports_dir: str | Path, iops_block_sizes: str | None = None,
                  iops_rw_mixes: str | None = None, wsat_fills: float | None = None,
                  wsat_hours: float | None = None, fob_sweep: bool = False,
                  round_mode: str = "pipelined", time_scale: float = 1.0,
                  dirth_thread_counts: str | None = None,
                  dirth_queue_depths: str | None = None,
                  hir_repetitions: int | None = None, purge_probe: bool = True,
                  report_info: ReportInfo | None = None, ioengine: str = "libaio",
                  io_poll: bool = False, host_ceiling: str = "auto",
                  host_bound_share: float = HOST_BOUND_SHARE,
                  host_floor_margin: float = HOST_FLOOR_MARGIN) -> Settings:
    rule = spec.steady_state
    point_seconds = spec.common.point_seconds if point_seconds is None else point_seconds
    max_rounds = rule.max_rounds if max_rounds is None else max_rounds
    if point_seconds < 1:
        raise SettingsError(f"--point-seconds {point_seconds}: must be a whole number of "
                            f"seconds >= 1 (the spec says {spec.common.point_seconds})")
    if max_rounds < rule.window_rounds:
        raise SettingsError(f"--max-rounds {max_rounds}: must be at least the steady-state "
                            f"window of {rule.window_rounds} rounds (the spec says "
                            f"{rule.max_rounds})")
    if round_mode not in ROUND_MODES:
        raise SettingsError(f"--round-mode {round_mode}: choose one of {', '.join(ROUND_MODES)}")
    if not 0 < time_scale <= 1:
        raise SettingsError(f"--time-scale {time_scale:g}: must be a factor with 0 < F <= 1 "
                            "(1 = the spec's durations; 0.01 makes a 5-minute pre-write 3 s)")
    if ioengine not in IO_ENGINES:
        raise SettingsError(f"--ioengine {ioengine}: choose one of {', '.join(IO_ENGINES)}")
    if io_poll and ioengine != "io_uring":
        raise SettingsError("--io-poll: polled completion is an io_uring option; add "
                            "--ioengine io_uring")
    if host_ceiling not in HOST_CEILING_CHOICES:
        raise SettingsError(f"--host-ceiling {host_ceiling}: choose one of "
                            f"{', '.join(HOST_CEILING_CHOICES)}")
    if not 0 < host_bound_share <= 1:
        raise SettingsError(f"--host-bound-share {host_bound_share:g}: must be a share with "
                            f"0 < S <= 1 (default {HOST_BOUND_SHARE:g}: a point at 80 % of the "
                            "host's ceiling is host-bound)")
    if not host_floor_margin >= 0:
        raise SettingsError(f"--host-floor-margin {host_floor_margin:g}: must be >= 0 (default "
                            f"{HOST_FLOOR_MARGIN:g}: a mean latency within 25 % of the host's "
                            "floor is host-bound)")
    if purge not in PURGE_CHOICES:
        raise SettingsError(f"--purge {purge}: choose one of {', '.join(PURGE_CHOICES)}")
    sizes = _subset("--iops-block-sizes", iops_block_sizes, parse_size, spec.iops.block_sizes,
                    "IOPS block sizes (" + ", ".join(format_size(b).replace(" ", "")
                                                     for b in spec.iops.block_sizes) + ")")
    mixes = _subset("--iops-rw-mixes", iops_rw_mixes, RwMix.parse, spec.iops.rw_mixes,
                    "R/W mixes (" + ", ".join(str(m) for m in spec.iops.rw_mixes) + ")")
    for tr in spec.iops.tracking:
        if tr.block_size not in sizes or tr.rw_mix not in mixes:
            raise SettingsError(f"--iops-block-sizes/--iops-rw-mixes: the reduced matrix must "
                                f"keep the tracking variable {tr.label}")
    for option, value in (("--wsat-fills", wsat_fills), ("--wsat-hours", wsat_hours)):
        if value is not None and not value > 0:
            raise SettingsError(f"{option} {value:g}: must be a number > 0 (the spec says "
                                f"{spec.wsat.capacity_multiple:g} fills or "
                                f"{spec.wsat.max_hours:g} h, whichever comes first)")
    if hir_repetitions is not None and hir_repetitions < 1:
        raise SettingsError(f"--hir-repetitions {hir_repetitions}: must be a whole number "
                            f">= 1 (the spec says {spec.hir.repetitions})")
    grid = [_grid(option, text, spec) for option, text in (
        ("--dirth-thread-counts", dirth_thread_counts), ("--dirth-queue-depths",
                                                         dirth_queue_depths))]
    return Settings(device, destructive, spec, point_seconds, max_rounds, purge,
                    Path(reports_dir), sizes, mixes, wsat_fills, wsat_hours, fob_sweep,
                    round_mode, time_scale, *grid, hir_repetitions, purge_probe,
                    report_info or ReportInfo(), ioengine=ioengine, io_poll=io_poll,
                    host_ceiling=host_ceiling, host_bound_share=host_bound_share,
                    host_floor_margin=host_floor_margin)


def _grid(option: str, text: str | None, spec: Spec) -> tuple[int, ...] | None:
    """A reduced DIRTH/CBW thread-count or queue-depth list (both tests share the grid):
    values of the spec's list, keeping the tracking value (32) and 1 (MinIOPS = TC1/QD1)."""
    if not text:
        return None
    tc = option.endswith("thread-counts")
    dirth = spec.dirth
    allowed = dirth.thread_counts if tc else dirth.queue_depths
    values = _subset(option, text, lambda v: int(v) if v.isdigit() else _not_int(v), allowed,
                     ("thread counts (" if tc else "queue depths (")
                     + ", ".join(map(str, allowed)) + ")")
    keep = dirth.tracking_thread_count if tc else dirth.tracking_queue_depth
    for must, why in ((keep, "the tracking point TC32/QD32"), (1, "MinIOPS = TC1/QD1")):
        if must not in values:
            raise SettingsError(f"{option} {text}: the reduced grid must keep {must} ({why}); "
                                f"e.g. {option} {keep},4,1")
    return values


def _not_int(text: str) -> int:
    raise ValueError(f"{text!r} is not a whole number")
