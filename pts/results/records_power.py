"""The ledger records of --power (issue 51): each source of the run, once when it starts
recording, and its energy over each point's measurement window and over each round's fio
run (pts.procedure.power_windows writes them, pts.power.energy computes them). Part of the
ledger schema: pts.results.records lists them in its TYPES and its callers import them
there; docs/results-format.md documents their fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pts.results.record import Record


@dataclass(frozen=True, kw_only=True)
class PowerSourceInfo(Record):
    """--power: one source of the run (issue 51), once when the run starts recording: what
    it measures, how often it is read, its kind (W readings or an energy counter)."""
    TYPE: ClassVar[str] = "power_source"
    name: str                   # as given to --power, password-file= left out
    measures: str               # "drive", "server", "cpu package", what a meter is on
    interval_s: float
    kind: str                   # "power" (W readings) or "energy" (a counter, J)
    detail: str                 # what exactly is read (the model, the URL, the command)
    error: str | None = None    # it could not be started: no window of it follows
    window_s: float | None = None   # each reading an average over this many s (drive: 1)
    sample_s: float | None = None   # the sampling period of that average, as stated


@dataclass(frozen=True, kw_only=True)
class PointPower(Record):
    """--power: one source over one point's measurement window, its fio I/O's start to end
    (pts.power.energy.window; round 0: the --fob-sweep's points)."""
    TYPE: ClassVar[str] = "point_power"
    round: int
    index: int
    source: str                 # a power_source record's name
    start: float                # Unix s, the point's start and end as its point record's
    end: float
    energy_j: float             # over the covered seconds only: a gap is never filled
    covered_s: float
    mean_w: float | None        # energy / covered seconds (None: nothing covered)
    samples: int                # good readings inside the window
    gaps: list                  # [[from, to]] s after start, the window's uncovered parts
    max_w: float | None = None  # the largest W reading inside (W readings only)
    state_counts: list | None = None   # the drive's Power State Change Count, first and last


@dataclass(frozen=True, kw_only=True)
class RoundPower(Record):
    """--power: one source over a round's whole fio run, from the read just before it starts
    to the read just after it ends (the points and the time between them: a round's energy;
    points measured again after their round: a second one)."""
    TYPE: ClassVar[str] = "round_power"
    round: int
    source: str
    start: float                # Unix s
    end: float
    energy_j: float
    covered_s: float
    mean_w: float | None
    samples: int
    gaps: list                  # [[from, to]] s after start
    max_w: float | None = None
    state_counts: list | None = None


@dataclass(frozen=True, kw_only=True)
class PhasePower(Record):
    """--power: one source over a part of a test without rounds of points (issue 51 §3):
    WSAT's one fio run (`phase` "run", number 1) and each of its samples ("sample", the
    sample's number); HIR's wait states ("wait state": from the read before its wait fio run
    to the read after its return-to-baseline run; "wait": the wait run, Access A and B
    repeated; "baseline": the return to baseline; number: the state); XSR's access groups
    ("group", the group's number). A whole fio run's edges are the reads just before and
    after it; a WSAT sample's are fio's log times put on Unix time (pts.testdefs.wsat)."""
    TYPE: ClassVar[str] = "phase_power"
    phase: str
    number: int
    source: str
    start: float                # Unix s
    end: float
    energy_j: float
    covered_s: float
    mean_w: float | None
    samples: int
    gaps: list                  # [[from, to]] s after start
    max_w: float | None = None
    state_counts: list | None = None
