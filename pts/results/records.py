"""The ledger schema: every record type of ledger.jsonl and its fields. TYPES names every
type, and every caller imports them from here: the base they extend is in record.py, the HIR
and XSR records in records_recovery.py, the --power records in records_power.py, the rest
below.

Writers build typed records (a missing or misspelt field is a TypeError where it is written);
`Ledger.append` stamps `type` and `time`. `parse` gives typed records back: missing fields read
as None, unknown ones go to `extra`, an unknown type is `Unknown` (readers skip it).
docs/results-format.md documents exactly these fields (tests/unit/test_records_doc.py). Point
records carry their test's measured fields (pts.testdefs.fields) in `measured`, written flat.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar

from pts.results.parameters import current as current_parameters
from pts.results.parameters import typed as typed_parameters
from pts.results.record import Record
from pts.results.records_power import PhasePower, PointPower, PowerSourceInfo, RoundPower
from pts.results.records_recovery import HirBaseline, HirState, HirWrite, XsrGroup, XsrInterval

STEADY, NOT_STEADY, COMPLETE = "steady", "not_steady", "complete"      # test_end statuses
HEALTH_FAILURE = "device_health_failure"
INTERRUPTED, ERROR = "interrupted", "error"
# A test ended with one of these is finished: --resume does not run it again.
FINISHED = (STEADY, NOT_STEADY, COMPLETE, HEALTH_FAILURE)


@dataclass(frozen=True, kw_only=True)
class TestStart(Record):
    __test__ = False  # not a pytest test class, despite the name
    TYPE: ClassVar[str] = "test_start"
    title: str
    clause: str
    parameters: dict            # as stored; `typed`: its family's record

    typed = property(lambda self: typed_parameters(str(self.test), self.parameters))


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

    def get(self, name: str, default=None):     # a measured field (None: N/A, not recorded)
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
class HostCeiling(Record):
    """A test's heaviest points run on a RAM-backed device of the DUT's host (docs)."""
    TYPE: ClassVar[str] = "host_ceiling"
    device: str | None        # "null_blk" or "tmpfs loop" (None: not measured)
    engine: str
    cpus: str | None
    seconds: int | None
    points: list              # [{label, rw, block_size, numjobs, iodepth, iops, mbps, ...}]
    share: float
    margin: float
    error: str | None = None  # why it was not measured (points empty)


@dataclass(frozen=True, kw_only=True)
class DeviceCounters(Record):
    TYPE: ClassVar[str] = "device_counters"
    when: str
    round: int | None
    source: str
    counters: dict | None
    error: str | None = None        # the counters could not be read (counters null)


@dataclass(frozen=True, kw_only=True)
class NvmeFacts(Record):
    """An NVMe drive's host-checkable facts read at a test's start (pts.tools.host_read:
    Identify, features, log support, FDP logs, PCI function), as pts.stored.host_judge judges
    them: the shape of pts.tools.nvme_facts.Facts.as_record."""
    TYPE: ClassVar[str] = "nvme_facts"
    moment: str
    facts: dict                 # Facts.values: decoded, bytes as hex
    files: dict                 # fact name -> its file of bytes in `folder`
    refused: dict               # fact name -> the drive's words
    folder: str | None = None   # the files' folder in the run folder (host-facts/TEST)
    error: str | None = None    # why nothing was read (facts empty)


@dataclass(frozen=True, kw_only=True)
class FdpStatistics(Record):
    """Log 22h (FDP Statistics) of the namespace's Endurance Group at one step, on a drive
    whose FDP statistics answered at the test's start: the FDP WAF of each round."""
    TYPE: ClassVar[str] = "fdp_statistics"
    when: str
    round: int | None
    endgid: int
    stats: dict | None          # {hbmw, mbmw, mbe}: bytes (null: not read, `error` says why)
    file: str | None
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class LatencyMonitor(Record):
    """The OCP latency monitor the suite configured at a test's start (Set Features C5h under
    --destructive, pts.conditioning.latency_monitor) or its log C3h read at the test's end."""
    TYPE: ClassVar[str] = "latency_monitor"
    action: str                 # "configured", "refused", "failed", "not sent", "read after"
    values: dict                # the data structure's fields the suite sends (name -> value)
    data_len: int               # bytes sent (4096)
    data: str | None            # the first 16 of them, hex (the rest zero); null: a read
    file: str | None            # the bytes sent (or the page read) in the run folder
    command: str | None         # the nvme-cli command (null: not sent)
    exit: int | None
    refused: str | None         # nvme-cli's status text of a refusal
    said: str | None            # what nvme-cli said (its last 300 characters)
    why: str | None             # why it was not sent / failed
    after: dict | None          # "read after": the C3h page's fact (ocp_page_facts.page_fact)
    seconds: float | None       # "read after": seconds since the Set Features was answered


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
    host_bound: dict | None = None     # as a point's (pts.procedure.ceiling)


@dataclass(frozen=True, kw_only=True)
class Prewrite(Record):
    """DIRTH/CBW: a timed RND write phase (before a round or an operating point's capture)."""
    TYPE: ClassVar[str] = "prewrite"
    when: str                   # "precondition round 3", "before round 2", "MaxIOPS"
    thread_count: int
    queue_depth: int
    seconds: int                # planned fio runtime
    bytes_written: int
    iops: float
    raw: str


@dataclass(frozen=True, kw_only=True)
class OperatingPoint(Record):
    """DIRTH/CBW: MaxIOPS, MidIOPS or MinIOPS chosen from the demand-variation rounds."""
    TYPE: ClassVar[str] = "operating_point"
    name: str                   # "MaxIOPS", "MidIOPS", "MinIOPS"
    selected: bool              # False: no point qualified (reason says why; declared)
    thread_count: int | None
    queue_depth: int | None
    iops: float | None          # the point's mean over the measurement window rounds
    lat_mean_us: float | None
    rule: str                   # how it was chosen, with the numbers
    rounds: list[int]           # the rounds the means are over


@dataclass(frozen=True, kw_only=True)
class ResponseHistogram(Record):
    """DIRTH/CBW: the response-time histogram of one operating point's capture."""
    TYPE: ClassVar[str] = "response_histogram"
    name: str                   # the operating point
    thread_count: int
    queue_depth: int
    seconds: int                # planned fio runtime
    ios: int
    iops: float
    lat_mean_us: float | None
    lat_max_us: float | None
    percentiles: list[dict]     # [{pct, us, ios_needed, resolvable}]
    bins: dict                  # {bin midpoint ns (str): I/O count}, reads + writes merged
    source: str                 # where the bins come from (fio json+ total-latency bins)
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

    finished = property(lambda self: self.status in FINISHED)


@dataclass(frozen=True, kw_only=True)
class Requirement(Record):
    """--datasheet: one requirement judged after the test it depends on (pts.qualify.judge)."""
    TYPE: ClassVar[str] = "requirement"
    cell: str | None
    metric: str
    bound: str                   # "at_least" / "at_most"
    required: float
    value: float | None          # the figure measured (None: could not be judged)
    verdict: str                 # "met", "not met", "error"
    text: str
    source: str                  # "FILE line N"


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
class Unknown(Record):      # a record type this version does not know: readers skip it
    type: str = ""


TYPES: dict[str, type[Record]] = {cls.TYPE: cls for cls in (
    TestStart, Purge, WriteCache, Wipc, Point, FobPoint, Round, RoundMode, DeviceCounters, Sample,
    WsatResult, Resume, Deviation, TestEnd, Prewrite, OperatingPoint, ResponseHistogram,
    HirBaseline, HirWrite, HirState, XsrInterval, XsrGroup, Requirement, PurgeProbe,
    HostCeiling, NvmeFacts, FdpStatistics, LatencyMonitor, PowerSourceInfo,
    PointPower, RoundPower, PhasePower)}


def parse(data: dict) -> Record:
    """One ledger line (a dict with "type") as its typed record."""
    cls = TYPES.get(data.get("type", ""))
    if cls is None:
        return Unknown(test=data.get("test"), time=data.get("time"), type=str(data.get("type")),
                       extra={k: v for k, v in data.items() if k not in ("type", "test", "time")})
    known = {f.name for f in dataclasses.fields(cls)} - {"extra", "measured"}
    args = {name: data.get(name) for name in known}
    if cls is TestStart:            # an older run's parameter names read as this version's
        args["parameters"] = current_parameters(args["parameters"])
    rest = {k: v for k, v in data.items() if k not in known and k != "type"}
    if "measured" in {f.name for f in dataclasses.fields(cls)}:
        return cls(**args, measured=rest)
    return cls(**args, extra=rest)
