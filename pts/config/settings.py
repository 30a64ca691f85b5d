"""Effective settings of a run: the options, checked, plus the deviations they imply.

Precedence: command-line option, then the spec's value. Every value that differs from the
spec is a declared deviation (design principle 6), worded for the report. Each option is one
row of pts.config.option_table: its check, its default, how run.json stores it and its
deviation sentence come from there.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pts.config.option_rows import (  # noqa: F401 (the options' choices, named here before)
    HOST_BOUND_SHARE,
    HOST_CEILING_CHOICES,
    HOST_FLOOR_MARGIN,
    IO_ENGINES,
    PURGE_CHOICES,
    ROUND_MODES,
    SettingsError,
)
from pts.config.option_table import ROWS
from pts.config.report_info import ReportInfo
from pts.config.spec import RwMix, Spec


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
    # the drive's form factor as the operator declared it (option_rows.FORM_FACTOR_CHOICES;
    # None: unknown)
    form_factor: str | None = None
    # --power's sources (pts.config.power_option.SourceSpec), set by the session from its
    # row's check; not a setting row: run.json's options stay as they were (issue 51)
    power: tuple = ()
    # the options given (on the command line, an --inventory drive's or by the run resumed),
    # by option name (pytest's; a setting's is its field's): an explicit --point-seconds 60
    # is not "the spec's 60" (explicit)
    given: frozenset[str] = frozenset()

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

    def explicit(self, name: str) -> bool:
        """Whether option `name` (a Settings field) was given rather than left to default."""
        return name in self.given

    def as_dict(self) -> dict:
        """run.json's `options`: each stored option of the table, in its order."""
        return {row.name: row.store(self) for row in ROWS if row.kept}

    def deviations(self) -> list[str]:
        """Deviations known from the options alone (more are found while running)."""
        return [d for row in ROWS if row.deviation and (d := row.deviation(self))]


SETTINGS = frozenset(row.name for row in ROWS if row.setting)


def make_settings(spec: Spec, *, given: Iterable[str] | None = None,
                  report_info: ReportInfo | None = None, **values) -> Settings:
    """Settings from option values by Settings name (text as the command line gives it; a
    value left out or None: the option's default), each checked by its row in table order.
    `given`: the options given explicitly (default: those passed other than None)."""
    unknown = sorted(set(values) - SETTINGS)
    if unknown:
        raise TypeError(f"make_settings: not an option of the table: {', '.join(unknown)}")
    done: dict = {}
    for row in ROWS:
        if not row.setting:
            continue
        value = values.get(row.name)
        if value is None:
            value = row.unset(spec) if row.unset else row.absent
        done[row.name] = row.check(row.flag, value, spec, done) if row.check else value
    done["reports_dir"] = Path(done["reports_dir"])
    chosen = {k for k, v in values.items() if v is not None} if given is None else set(given)
    return Settings(spec=spec, report_info=report_info or ReportInfo(), given=frozenset(chosen),
                    **done)
