"""The report's view of a run folder: frozen dataclasses, one per kind of stored fact
(named *View: the checked, report-ready form of a ledger record of pts.results.records).

Built by `pts.stored.data.load_run` from run.json + ledger.jsonl (docs/results-format.md);
read by the charts and the PDF pages. Nothing here reads files or computes verdicts.
`RunView.records` / `TestResult.records` keep the typed ledger records the load parsed
(pts.results.records), so a reader that needs a record the views leave out (a histogram's
bins, a requirement, the smart-log counters) takes it from there: only pts.results and the
loader open ledger.jsonl (tests/unit/test_architecture.py holds it).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from pts.procedure.steady_state import SteadyStateResult
from pts.results.parameters import ROUND_LIMITED, Parameters, SteadyParameters, typed
from pts.results.records import Record

# Test states, from test_end.status plus "incomplete" when there is no test_end record.
# "complete": a test with no steady-state requirement (WSAT) ran to its stop condition.
STEADY, NOT_STEADY, ERROR, INCOMPLETE = "steady", "not_steady", "error", "incomplete"
COMPLETE = "complete"
HEALTH_FAILURE = "device_health_failure"   # critical warning / throttling (pts.device.health)

# Free-text write-cache states (sysfs, nvme-cli, hdparm words) that mean enabled / disabled.
CACHE_ENABLED = frozenset({"enabled", "write back", "write-back", "wce", "on", "1", "true"})
CACHE_DISABLED = frozenset({"disabled", "write through", "write-through", "wcd", "off", "0",
                            "false"})


class RunFolderError(Exception):
    """The run folder cannot be reported on; the message names the file (and line)."""


@dataclass(frozen=True)
class Device:
    path: str
    kname: str
    model: str
    serial: str
    firmware: str
    capacity_bytes: int | None
    logical_sector: int | None
    physical_sector: int | None
    transport: str
    identity_source: str
    emulated: bool | None   # None: run.json does not say


@dataclass(frozen=True)
class TrackingView:
    """One steady-state tracking variable, e.g. RND 4KiB 0/100 IOPS."""

    label: str
    rw_mix: str | None
    block_size: int | None


@dataclass(frozen=True)
class PurgeView:
    method: str
    command: tuple[str, ...] | None
    ok: bool
    seconds: float | None
    deviation: bool
    verification: str = ""                  # how the purge was checked (empty: not checked)
    steps: tuple[tuple[str, ...], ...] = ()  # every command of the purge, in order
    error: str = ""                         # why it failed (ok False)


@dataclass(frozen=True)
class WriteCacheView:
    required: str        # "WCD" / "WCE"
    actual: str          # free text as the device reported it
    settable: bool
    when: str

    @property
    def matches(self) -> bool:
        """True only when the reported state is recognisably the required one."""
        actual = self.actual.strip().lower()
        wanted = {"WCE": CACHE_ENABLED, "WCD": CACHE_DISABLED}.get(self.required.upper())
        return wanted is not None and actual in wanted


@dataclass(frozen=True)
class WipcView:
    block_size: int | None
    bytes_expected: int | None
    bytes_written: int | None
    seconds: float | None
    thread_count: int | None
    queue_depth: int | None
    raw: str | None


@dataclass(frozen=True)
class PointView:
    round: int
    index: int | None
    rw_mix: str
    read_pct: float | None
    block_size: int
    na: bool
    reason: str | None
    iops: float | None
    read_iops: float | None
    write_iops: float | None
    mbps: float | None
    lat_mean_us: float | None
    lat_max_us: float | None
    start: float | None
    end: float | None
    values: dict[str, float] = field(default_factory=dict)   # every numeric field recorded
    # RWSW: per stream of the ATW, its target and achieved share (pts.workload.applied)
    streams: tuple[dict, ...] = ()
    # rwsw-replay hold "iolog": per direction, the replayed log's I/Os and bytes beside fio's
    log_vs_fio: tuple[dict, ...] = ()
    host_bound: dict | None = None   # issue 33: {by, figure, ceiling, ...} (stored.host_ceiling)

    def get(self, metric: str) -> float | None:
        """A recorded measurement by its ledger name ("iops", "write_mbps",
        "lat_percentile_us", ...); None if this point did not record it."""
        return self.values.get(metric)


@dataclass(frozen=True)
class RoundModeView:
    """A round-based test changed how its rounds run (a round_mode record)."""
    round: int
    mode: str
    reason: str


@dataclass(frozen=True)
class SampleView:
    """One WSAT sample (a `sample` record): one interval of the continuous write run."""

    number: int
    start_s: float | None
    end_s: float | None
    iops: float | None
    lat_mean_us: float | None         # total latency
    clat_max_us: float | None         # completion latency (fio histogram log)
    clat_percentile_us: float | None
    tgbw_gb: float | None
    drive_fills: float | None
    partial: bool
    steady: bool | None               # the 5-sample window ending here (None: no window)


@dataclass(frozen=True)
class PurgeProbeView:
    """A `purge_probe` record: the FOB write probe right after the purge."""


    block_size: int
    thread_count: int | None
    queue_depth: int | None
    seconds: float | None
    iops: float
    fob_ss_min_ratio: float


@dataclass(frozen=True)
class RoundView:
    number: int
    tracking: dict[str, float]
    evidence: dict[str, SteadyStateResult | None]
    steady: bool


@dataclass(frozen=True)
class CountersView:
    """One device_counters record: the device's cumulative counters at one step of a test
    (for the emulator, its FTL model's counters since it started; writes in pages of
    page_size bytes). A counter the record lacks is None."""

    when: str            # "after purge", "after WIPC", "after round N"
    round: int | None    # N for "after round N", else None
    source: str          # "emulator"; later "smart-log"
    host_writes: int | None
    nand_writes: int | None
    relocations: int | None
    gc_runs: int | None
    erases: int | None
    trims: int | None
    valid_pages: int | None
    free_blocks: int | None
    page_size: int | None
    # smart-log only: the health fields (pts.tools.nvme.SMART_FIELDS) as recorded
    health: dict[str, int | None] | None = None
    error: str | None = None   # the counters could not be read (all of them None)

    @property
    def host_bytes(self) -> int | None:
        return _pages_to_bytes(self.host_writes, self.page_size)

    @property
    def nand_bytes(self) -> int | None:
        return _pages_to_bytes(self.nand_writes, self.page_size)

    @property
    def waf(self) -> float | None:
        """Cumulative write amplification, NAND pages / host pages (None: nothing written)."""
        return _ratio(self.nand_writes, self.host_writes)

    def waf_since(self, earlier: CountersView) -> float | None:
        """Write amplification over the interval since `earlier`: Δnand / Δhost. None when
        the host wrote nothing in between (or a counter is missing or went backwards, as
        after an emulator restart: the difference then measures nothing)."""
        if None in (self.nand_writes, self.host_writes, earlier.nand_writes,
                    earlier.host_writes):
            return None
        return _ratio(self.nand_writes - earlier.nand_writes,
                      self.host_writes - earlier.host_writes)


@dataclass(frozen=True)
class TestEndView:
    __test__ = False  # not a pytest test class, despite the name

    status: str
    rounds: int | None
    steady_round: int | None
    window: tuple[int, int] | None
    message: str
    time: float | None = None      # when it was recorded (a later record: a resumed run)


@dataclass(frozen=True)
class DeviationView:
    text: str
    source: str          # "run.json" or "ledger"
    test: str | None = None


@dataclass(frozen=True)
class Cell:
    """One (R/W mix, block size) result: the mean over the measurement-window rounds."""

    rw_mix: str
    block_size: int
    mean: float | None   # None when N/A or when no window round has a value
    na: bool
    reason: str | None
    rounds: int          # how many window rounds the mean is over


@dataclass(frozen=True)
class TestResult:
    """Everything the ledger holds about one PTS test (e.g. "iops")."""

    __test__ = False  # not a pytest test class, despite the name

    name: str
    title: str
    clause: str | None
    parameters: dict
    tracking: tuple[TrackingView, ...]
    purge: PurgeView | None
    write_caches: tuple[WriteCacheView, ...]
    wipc: WipcView | None
    points: tuple[PointView, ...]
    rounds: tuple[RoundView, ...]
    deviations: tuple[DeviationView, ...]
    end: TestEndView | None
    window: tuple[int, int] | None
    cells: tuple[Cell, ...]
    window_evidence: dict[str, SteadyStateResult | None]   # per tracking label
    state: str           # STEADY, NOT_STEADY, ERROR or INCOMPLETE
    status: str          # one line for people, e.g. "Steady state reached at round 7 ..."
    counters: tuple[CountersView, ...] = ()   # ledger order, one per `when`
    samples: tuple[SampleView, ...] = ()            # WSAT
    fob_points: tuple[PointView, ...] = ()          # --fob-sweep: informative, before WIPC
    result: dict = field(default_factory=dict)  # WSAT: the wsat_result record
    round_modes: tuple[RoundModeView, ...] = ()     # learning round, again, fallbacks
    recovery: tuple = ()     # HIR / XSR: their typed records (pts.results.records), ledger order
    histograms: tuple = ()   # DIRTH/CBW, WSAT: their records.ResponseHistogram, ledger order
    purge_probe: PurgeProbeView | None = None  # the FOB write probe after the purge
    host_ceiling: object = None   # its records.HostCeiling (pts.stored.host_ceiling)
    started: float | None = None  # its test_start record's time (None: none recorded)
    # every ledger record of this test, typed, in ledger order (any type; a record redone by
    # a resumed run too: the views above keep the last one)
    records: tuple[Record, ...] = field(default=(), repr=False)

    def records_of(self, *kinds: type[Record]) -> tuple:
        """Its records of these types (isinstance: a FobPoint is a Point), ledger order."""
        return _of(self.records, kinds)

    @property
    def window_rounds(self) -> tuple[int, ...]:
        return () if self.window is None else tuple(range(self.window[0], self.window[1] + 1))

    @functools.cached_property
    def typed(self) -> Parameters:
        """`parameters` as the test family's record (checked when the run was loaded); a test
        without a test_start: every option None."""
        return typed(self.name, self.parameters, required=False)

    @property
    def steady_parameters(self) -> SteadyParameters | None:
        """`typed` if the test's family judges a steady state (None: XSR)."""
        return self.typed if isinstance(self.typed, SteadyParameters) else None

    @property
    def max_rounds(self) -> int | None:
        """Its round limit (None: WSAT, XSR, or not recorded)."""
        return self.typed.max_rounds if isinstance(self.typed, ROUND_LIMITED) else None

    @property
    def rw_mixes(self) -> tuple[str, ...]:
        steady = self.steady_parameters
        return _ordered(steady and steady.rw_mixes, (p.rw_mix for p in self.points))

    @property
    def block_sizes(self) -> tuple[int, ...]:
        steady = self.steady_parameters
        return _ordered(steady and steady.block_sizes, (p.block_size for p in self.points))


@dataclass(frozen=True)
class Verdict:
    compliant: bool
    text: str            # "COMPLIANT RUN ..." / "NOT A COMPLIANT RUN"
    reasons: tuple[str, ...]
    readings: int = 0    # values of the run that are readings of the spec, not its text
    short: str = ""      # the page band's note where `text` is too long for it ("" = text)

    @property
    def status(self) -> str:
        return self.short or self.text


@dataclass(frozen=True)
class RunView:
    folder: Path
    run_id: str
    started: str | None
    finished: float | None        # time of the last ledger record
    device: Device
    platform: dict
    tools: dict
    spec: dict
    options: dict
    tests: tuple[TestResult, ...]
    deviations: tuple[DeviationView, ...]   # run.json then ledger
    verdict: Verdict
    notes: tuple[str, ...] = field(default=())   # things the reader should know (torn line)
    device_extra: dict = field(default_factory=dict)   # run.json device fields not in Device
    warnings: tuple[str, ...] = field(default=())   # run-level warnings (purge probe, ...)
    readings: tuple = field(default=())   # pts.stored.readings.ReadingView: spec readings used
    report_info: dict = field(default_factory=dict)   # run.json report_info (given fields)
    system: dict = field(default_factory=dict)        # run.json system (DMI, adapter, link)
    # every record of ledger.jsonl as the load read it, typed (records.Unknown for a type this
    # version does not know), in ledger order; a torn last line is not among them (notes)
    records: tuple[Record, ...] = field(default=(), repr=False)

    def records_of(self, *kinds: type[Record]) -> tuple:
        """The run's records of these types (isinstance), ledger order."""
        return _of(self.records, kinds)

    @property
    def spec_title(self) -> str:
        return str(self.spec.get("title") or self.spec.get("name") or "unknown specification")


def _of(found: tuple[Record, ...], kinds: tuple[type[Record], ...]) -> tuple:
    return tuple(r for r in found if isinstance(r, kinds))


def _pages_to_bytes(pages: int | None, page_size: int | None) -> int | None:
    return None if pages is None or page_size is None else pages * page_size


def _ratio(num: int | None, den: int | None) -> float | None:
    if num is None or den is None or den <= 0 or num < 0:
        return None
    return num / den


def _ordered(declared, seen) -> tuple:
    """The declared loop order if the test_start gave one, else first-seen order."""
    if declared:
        return tuple(declared)
    return tuple(dict.fromkeys(seen))
