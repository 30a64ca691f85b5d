"""The ledger schema: every record type of ledger.jsonl and its fields, in one place.

Writers build a record with its typed constructor (`Purge(test=..., method=..., ...)`: a
missing or misspelt field is a TypeError where it is written, not a gap found by a reader);
`Ledger.append` stamps `type` and `time`. Readers get typed records back from `parse`:
fields missing from an older ledger read as None, fields this version does not know are
kept in `extra`, and a type it does not know comes back as `Unknown` (skipped by readers).
docs/results-format.md documents exactly these fields (tests/unit/test_records_doc.py).

Point records carry the measured fields of their test (pts.testdefs.fields) in `measured`,
written flat beside the fixed fields.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

# test_end statuses
STEADY, NOT_STEADY, COMPLETE = "steady", "not_steady", "complete"
HEALTH_FAILURE = "device_health_failure"
INTERRUPTED, ERROR = "interrupted", "error"
# A test ended with one of these is finished: --resume does not run it again.
FINISHED = (STEADY, NOT_STEADY, COMPLETE, HEALTH_FAILURE)


@dataclass(frozen=True, kw_only=True)
class Record:
    TYPE: ClassVar[str] = ""
    test: str | None
    time: float | None = None         # set by Ledger.append; None in a record not yet written
    extra: dict = field(default_factory=dict, compare=False)   # fields this version lacks

    def to_json(self) -> dict:
        out: dict[str, Any] = {"type": self.TYPE}
        if self.time is not None:
            out["time"] = self.time
        for f in dataclasses.fields(self):
            if f.name not in ("time", "extra", "measured"):
                out[f.name] = getattr(self, f.name)
        return out | getattr(self, "measured", {}) | self.extra

    @classmethod
    def fixed_fields(cls) -> list[str]:
        """The record's own fields as written (besides type, time and measured fields)."""
        return [f.name for f in dataclasses.fields(cls) if f.name not in ("time", "extra",
                                                                           "measured")]


@dataclass(frozen=True, kw_only=True)
class TestStart(Record):
    __test__ = False  # not a pytest test class, despite the name
    TYPE: ClassVar[str] = "test_start"
    title: str
    clause: str
    parameters: dict


@dataclass(frozen=True, kw_only=True)
class Purge(Record):
    TYPE: ClassVar[str] = "purge"
    method: str
    command: list[str] | None
    ok: bool
    seconds: float | None
    deviation: bool
    steps: list[list[str]]
    verification: str
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class WriteCache(Record):
    TYPE: ClassVar[str] = "write_cache"
    required: str
    actual: str
    settable: bool
    when: str
    how: str


@dataclass(frozen=True, kw_only=True)
class Wipc(Record):
    TYPE: ClassVar[str] = "wipc"
    block_size: int
    bytes_expected: int
    bytes_written: int
    seconds: float
    thread_count: int
    queue_depth: int
    raw: str


@dataclass(frozen=True, kw_only=True)
class Point(Record):
    TYPE: ClassVar[str] = "point"
    round: int
    index: int
    rw_mix: str
    read_pct: int
    block_size: int
    na: bool
    reason: str | None = None
    measured: dict = field(default_factory=dict)   # iops, lat_mean_us, ..., start, end, raw

    def get(self, name: str, default=None):
        """A measured field (None when the point is N/A or its test does not record it)."""
        return self.measured.get(name, default)


@dataclass(frozen=True, kw_only=True)
class FobPoint(Point):
    TYPE: ClassVar[str] = "fob_point"


@dataclass(frozen=True, kw_only=True)
class Round(Record):
    TYPE: ClassVar[str] = "round"
    round: int
    tracking: dict
    steady_state: dict
    steady: bool


@dataclass(frozen=True, kw_only=True)
class RoundMode(Record):
    """A round-based test changed how its rounds are run (a pipelined round overlapped)."""
    TYPE: ClassVar[str] = "round_mode"
    round: int
    mode: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class DeviceCounters(Record):
    TYPE: ClassVar[str] = "device_counters"
    when: str
    round: int | None
    source: str
    counters: dict | None
    error: str | None = None        # the counters could not be read (counters null)


@dataclass(frozen=True, kw_only=True)
class Sample(Record):
    TYPE: ClassVar[str] = "sample"
    sample: int
    start_s: float
    end_s: float
    ios: float
    iops: float
    lat_mean_us: float | None
    clat_max_us: float | None
    clat_percentile_us: float | None
    bytes_written: float
    tgbw_gb: float
    drive_fills: float
    partial: bool
    steady: bool | None


@dataclass(frozen=True, kw_only=True)
class WsatResult(Record):
    TYPE: ClassVar[str] = "wsat_result"
    stop: str
    bytes_written: int
    bytes_planned: int
    seconds: float
    tgbw_gb: float
    drive_fills: float
    samples: int
    fob_iops: float | None
    ss_window: list[int]
    ss_average: float | None
    fob_ss_ratio: float | None
    final_window_steady: bool
    first_steady_sample: int | None
    steady_from_sample: int | None
    ss_evidence: dict | None
    iops: float
    lat_mean_us: float | None
    lat_max_us: float | None
    lat_percentile_us: float | None
    raw: str


@dataclass(frozen=True, kw_only=True)
class Resume(Record):
    TYPE: ClassVar[str] = "resume"
    after_round: int
    idle_minutes: float


@dataclass(frozen=True, kw_only=True)
class Deviation(Record):
    TYPE: ClassVar[str] = "deviation"
    text: str


@dataclass(frozen=True, kw_only=True)
class TestEnd(Record):
    __test__ = False
    TYPE: ClassVar[str] = "test_end"
    status: str
    rounds: int | None
    steady_round: int | None
    window: list[int] | None
    message: str

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


@dataclass(frozen=True, kw_only=True)
class PurgeProbe(Record):
    """The short FOB write probe right after the purge (an addition to the PTS flow)."""
    TYPE: ClassVar[str] = "purge_probe"
    block_size: int
    rw_mix: str
    thread_count: int
    queue_depth: int
    seconds: float                 # measured by fio (runtime)
    iops: float                    # write IOPS of the probe
    fob_ss_min_ratio: float        # from the spec file: probe / SS below this warns
    raw: str


@dataclass(frozen=True, kw_only=True)
class Unknown(Record):
    """A record type this version does not know (a newer writer): readers skip it."""
    type: str = ""


TYPES: dict[str, type[Record]] = {cls.TYPE: cls for cls in (
    TestStart, Purge, WriteCache, Wipc, Point, FobPoint, Round, RoundMode, DeviceCounters, Sample,
    WsatResult, Resume, Deviation, TestEnd)}
TYPES[PurgeProbe.TYPE] = PurgeProbe


def parse(data: dict) -> Record:
    """One ledger line (a dict with "type") as its typed record."""
    cls = TYPES.get(data.get("type", ""))
    if cls is None:
        return Unknown(test=data.get("test"), time=data.get("time"), type=str(data.get("type")),
                       extra={k: v for k, v in data.items() if k not in ("type", "test", "time")})
    known = {f.name for f in dataclasses.fields(cls)} - {"extra", "measured"}
    args = {name: data.get(name) for name in known}
    rest = {k: v for k, v in data.items() if k not in known and k != "type"}
    if "measured" in {f.name for f in dataclasses.fields(cls)}:
        return cls(**args, measured=rest)
    return cls(**args, extra=rest)
