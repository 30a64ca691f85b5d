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
class PowerWindow(Record):
    """--power: what every window record holds, one source over a window of the run (its
    energy, coverage and readings, pts.power.energy.Window). Each window record's class names
    it first and its key second (`class PointPower(PowerWindow, PointKey)`): dataclasses
    collect fields from the last base to the first, so the key's fields stand before these
    in every record and in its JSON, where the ledger has always written them."""
    source: str                 # a power_source record's name
    start: float                # Unix s
    end: float
    energy_j: float             # over the covered seconds only: a gap is never filled
    covered_s: float
    mean_w: float | None        # energy / covered seconds (None: nothing covered)
    samples: int                # good readings inside the window
    gaps: list                  # [[from, to]] s after start, the window's uncovered parts
    max_w: float | None = None  # the largest W reading inside (W readings only)
    state_counts: list | None = None   # the drive's Power State Change Count, first and last


@dataclass(frozen=True, kw_only=True)
class RoundKey(Record):
    """Which round a round's window is of."""
    round: int


@dataclass(frozen=True, kw_only=True)
class PointKey(RoundKey):
    """Which point a point's window is of: its round and its index in the round."""
    index: int


@dataclass(frozen=True, kw_only=True)
class PhaseKey(Record):
    """Which part of a test without rounds a phase's window is of."""
    phase: str
    number: int


@dataclass(frozen=True, kw_only=True)
class PointPower(PowerWindow, PointKey):
    """--power: one source over one point's measurement window, its fio I/O's start to end
    (pts.power.energy.window; round 0: the --fob-sweep's points; start and end as its point
    record's)."""
    TYPE: ClassVar[str] = "point_power"


@dataclass(frozen=True, kw_only=True)
class RoundPower(PowerWindow, RoundKey):
    """--power: one source over a round's whole fio run, from the read just before it starts
    to the read just after it ends (the points and the time between them: a round's energy;
    points measured again after their round: a second one)."""
    TYPE: ClassVar[str] = "round_power"


@dataclass(frozen=True, kw_only=True)
class PhasePower(PowerWindow, PhaseKey):
    """--power: one source over a part of a test without rounds of points (issue 51 §3):
    WSAT's one fio run (`phase` "run", number 1) and each of its samples ("sample", the
    sample's number); HIR's wait states ("wait state": from the read before its wait fio run
    to the read after its return-to-baseline run; "wait": the wait run, Access A and B
    repeated; "baseline": the return to baseline; number: the state); XSR's access groups
    ("group", the group's number). A whole fio run's edges are the reads just before and
    after it; a WSAT sample's are fio's log times put on Unix time (pts.testdefs.wsat)."""
    TYPE: ClassVar[str] = "phase_power"
