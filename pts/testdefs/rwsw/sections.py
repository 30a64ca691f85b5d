"""The RWSW spec file's sections the RWSW tests read, as typed records: one attribute per
setting, never a setting's name looked up in a dict. The values are the spec file's as
pts.config.spec_rwsw loaded and checked them (specs/rwsw-*.toml, each with its provenance);
each record's fields are its section's keys there, in its order
(tests/unit/test_rwsw_package.py holds them to spec_rwsw.SECTIONS).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Self

from pts.config.settings import Settings


@dataclass(frozen=True)
class Section:
    NAME: ClassVar[str]                  # the table in the spec file

    @classmethod
    def of(cls, settings: Settings) -> Self:
        """This section of the run's RWSW spec file."""
        return cls(**settings.spec.rwsw[cls.NAME])


@dataclass(frozen=True)
class AtwSection(Section):
    """[rwsw_atw]: how an ATW is derived from a capture, and the share tolerance of a point."""
    NAME: ClassVar[str] = "rwsw_atw"
    top_n: int
    coverage_min_pct: float
    oio_rule: str
    thread_count: int
    queue_depth: int
    share_tolerance_pct: float


@dataclass(frozen=True)
class FioSection(Section):
    """[rwsw_fio]: how an ATW is applied with fio (pts.workload.applied)."""
    NAME: ClassVar[str] = "rwsw_fio"
    flow_sleep_us: int
    oio_split: str                       # "share" or "every-stream"


@dataclass(frozen=True)
class WsatSection(Section):
    """[rwsw_wsat]: Multi-WSAT (wsat.py)."""
    NAME: ClassVar[str] = "rwsw_wsat"
    purge: bool
    wipc: bool
    round_seconds: int
    stop_drive_fills: float
    stop_hours: float
    stop_at_steady_state: bool


@dataclass(frozen=True)
class StreamsSection(Section):
    """[rwsw_streams]: Individual Streams-WSAT (streams.py)."""
    NAME: ClassVar[str] = "rwsw_streams"
    purge: str                           # "once"
    wipc: bool
    round_seconds: int
    stop_at_steady_state: bool


@dataclass(frozen=True)
class ReplaySection(Section):
    """[rwsw_replay]: Replay-Native (replay.py)."""
    NAME: ClassVar[str] = "rwsw_replay"
    purge: bool
    precondition: str
    precondition_round_seconds: int
    time_scale: float
    loop: str
    hold: str                            # "iolog", "oio" or "shares"
    iolog_iops: int
    iolog_seed: int
    min_step_seconds: int


@dataclass(frozen=True)
class DirthSection(Section):
    """[rwsw_dirth]: DIRTH with the ATW (dirth.py)."""
    NAME: ClassVar[str] = "rwsw_dirth"
    purge: bool
    precondition: str
    round_seconds: int
    thread_counts: list[int]
    queue_depths: list[int]
    demand_to_steady_state: bool
    histograms: str

