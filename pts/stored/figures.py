"""The catalogue of figures (issue 48 §1): one row per figure of every test family, from
which every reader of a stored run takes what it shows: the results index (pts.index.rows,
pts.index.headline) and so `history`, the CSV export (pts.export.cli), the OCPTV export
(pts.export.ocptv), `compare` (pts.compare.data) and the datasheet's vocabulary
(pts.config.datasheet). A new figure is one row here; the reader of its kind (`read`) then
finds it (tests/index/test_figure_catalogue.py adds one and finds it everywhere).

A row: the test family (pts.results.parameters.family_key; `test` when only one test of the
family has it), the metric (its one name; `names` where an export written before the
catalogue names it otherwise), a label, its unit, which way is better (`better`; history's
verdicts), how it is read from a stored run (`read`, `field`) and which outputs show it.
Rows are in the order the outputs list them.

The last record rule, stated once: a resumed run redoes an operating point, a HIR wait state
or an XSR access group, so a figure read from such records is read from the LAST record of
each point / state / group (`last_each`), as the report's pages do; every reader keeps it.

Refusals, never a fallback: a test whose family has no rows is UnknownFamily (naming the
family and where to add it); a row of a kind of read an output has no reader of is an error
naming the kind and the module (`check_readers`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pts.config.datasheet import Vocabulary
from pts.results.parameters import family_key
from pts.stored.latency_qos import LEVELS

# Which way is better (history's verdicts): not a rule of the PTS, the project's reading of
# it. IOPS and MB/s: more I/O done per second is more performance (PTS-E 1.0 §1.2, Figure
# 1-1: FOB's higher IOPS are its "period of elevated performance"); response times (PTS-E 1.0
# §2.1.8 "Latency", a time taken) and recovery times: shorter is better; WAF (media bytes
# written per host byte): lower wears the media less. Ratios, shares, TC / QD: none (their
# changes are "changed").
HIGHER, LOWER, NONE = 1, -1, 0

# The outputs. The index's rows are also `history`'s figures.
INDEX, CSV, OCPTV, COMPARE, DATASHEET = "index", "csv", "ocptv", "compare", "datasheet"

# How a figure is read from a stored run (the reader of each kind says the rest):
TRACKING = "tracking"          # the steady-state tracking variables (window average, excursions)
CELL = "cell"                  # per cell, the window mean of the point field (pts.stored.cells)
FOB = "fob"                    # per cell, --fob-sweep value over the window mean
WSAT_RESULT = "wsat_result"    # the wsat_result record's key
OPERATING_POINT = "operating_point"   # the last operating_point record of each point
CAPTURE = "response_histogram"        # the point's response_histogram record
HIR_BASELINE = "hir_baseline"  # the last hir_baseline record
HIR_STATE = "hir_state"        # the last hir_state record of each wait state
XSR_GROUP = "xsr_group"        # the last xsr_group record of each access group
ATW_SHARE = "atw_share"        # per ATW stream (pts.stored.rwsw.shares)
REPLAY_STEP = "replay_step"    # per capture step (pts.stored.rwsw_replay.steps)
QOS_LEVEL = "qos_level"        # per cell, the QoS level `level` (pts.stored.latency_qos)
WAF = "waf"                    # the test's write amplification (pts.stored.waf)
# Read per test, not per cell (a datasheet requirement on one names no cell).
WHOLE_TEST = frozenset({WSAT_RESULT, HIR_BASELINE, WAF})


@dataclass(frozen=True)
class Figure:
    family: str
    metric: str
    label: str
    unit: str
    better: int
    read: str
    field: str
    shown: frozenset[str]
    test: str | None = None             # only this test of the family (None: every one)
    names: tuple[tuple[str, str], ...] = ()   # (output, its name there) where it differs
    level: float | None = None          # QOS_LEVEL: the percentile
    # shown only for a test whose points, result or HIR / XSR records hold it (--power's
    # figures, pts.stored.power / power_phases): a run without them shows exactly what it
    # showed before they existed
    recorded: bool = False

    def name(self, output: str) -> str:
        return dict(self.names).get(output, self.metric)

    def of_test(self, test: str) -> bool:
        return self.test is None or self.test == test


class UnknownFamily(ValueError):
    """A stored test whose family the catalogue has no figures for."""


def _row(family, metric, label, unit, better, read, field, shown, **kw) -> Figure:
    return Figure(family, metric, label, unit, better, read, field, frozenset(shown), **kw)


def _read_from(family: str, read: str, *rows: tuple, **kw) -> tuple[Figure, ...]:
    """A family's rows read from one kind of record, each (metric, label, unit, better, field,
    shown); `kw` (a test) for every one of them."""
    return tuple(_row(family, metric, label, unit, better, read, field, shown, **kw)
                 for metric, label, unit, better, field, shown in rows)


ALL = (INDEX, CSV, OCPTV, COMPARE, DATASHEET)
# A family without a cell matrix of its own still lists its points' IOPS per cell in the CSV,
# OCPTV and compare exports (as before the catalogue, when these fell back to IOPS).
POINT_IOPS = (CSV, OCPTV, COMPARE)


def _family(name: str, tracking_unit: str, *rows: Figure, cells=(CELL, "iops", "IOPS", "IOPS",
            POINT_IOPS)) -> tuple[Figure, ...]:
    """A family's rows: its tracking variables, its own rows, its WAF."""
    read, field, label, unit, shown = cells
    # the steady-state tracking variables: not a headline figure, no better direction
    head = _row(name, "tracking", "tracking variable", tracking_unit, NONE, TRACKING, "",
                (OCPTV,))
    tail = _row(name, "waf", "write amplification", "ratio", LOWER, WAF, "value",
                (INDEX, OCPTV), names=((OCPTV, "write amplification"),))
    point = (_row(name, field, label, unit, HIGHER, read, field, shown),) if shown else ()
    return (head, *rows, *point, tail)


def _operating_points(family: str, test: str | None = None) -> tuple[Figure, ...]:
    kw = {"test": test} if test else {}
    return (*_read_from(family, OPERATING_POINT,
                        ("iops", "IOPS", "IOPS", HIGHER, "iops", (INDEX, OCPTV)),
                        ("lat_mean_us", "ART", "us", LOWER, "lat_mean_us", (INDEX, OCPTV)),
                        ("thread_count", "TC", "TC", NONE, "thread_count", (INDEX,)),
                        ("queue_depth", "QD", "QD", NONE, "queue_depth", (INDEX,)), **kw),
            *_read_from(family, CAPTURE,
                        ("capture_iops", "capture IOPS", "IOPS", HIGHER, "iops", (INDEX,)),
                        ("capture_lat_mean_us", "capture ART", "us", LOWER, "lat_mean_us",
                         (INDEX,)),
                        ("capture_lat_max_us", "capture MRT", "us", LOWER, "lat_max_us",
                         (INDEX,)), **kw))


# --power's figures (issue 51 §3), per cell over the measurement window, from the run's first
# source (pts.stored.power): mean W, the point's energy, and the family's figure per watt.
# W and J have no better direction (a drive doing more work draws more); per watt: more I/O
# done per joule is better. A datasheet may require W (at_most) and the figure per watt
# (at_least) per cell (issue 51 §3: `W <=`, `IOPS/W >=`); a point's energy is no datasheet's.
POWER_SHOWN = (INDEX, CSV, OCPTV, COMPARE)


def _power(family: str, per: str, unit: str) -> tuple[Figure, ...]:
    return (_row(family, "power_w", "mean power", "W", NONE, CELL, "power_w",
                 (*POWER_SHOWN, DATASHEET), recorded=True),
            _row(family, "energy_j", "energy per point", "J", NONE, CELL, "energy_j",
                 POWER_SHOWN, recorded=True),
            _row(family, f"{per}_per_w", f"{unit}/W", f"{unit}/W", HIGHER, CELL,
                 f"{per}_per_w", (*POWER_SHOWN, DATASHEET), recorded=True))


# The tests without rounds of points (pts.stored.power_phases): WSAT's final window's W and
# IOPS/W beside its steady-state IOPS, each HIR wait state's wait run, each XSR group's run.
def _power_of(family: str, read: str, prefix: str, per: str, unit: str,
              shown: tuple) -> tuple[Figure, ...]:
    return (_row(family, f"{prefix}power_w", f"{prefix.replace('_', ' ')}mean power", "W",
                 NONE, read, f"{prefix}power_w", shown, recorded=True),
            _row(family, f"{prefix}{per}_per_w", f"{prefix.replace('_', ' ')}{unit}/W",
                 f"{unit}/W", HIGHER, read, f"{prefix}{per}_per_w", shown, recorded=True))


def _qos_levels() -> tuple[Figure, ...]:
    return tuple(_row("latency", f"qos_{p:g}_us", f"{p:g} % response time (QoS)", "us", LOWER,
                      QOS_LEVEL, "us", (INDEX, COMPARE), level=p,
                      names=((COMPARE, f"qos_{p:g}"),)) for p in LEVELS)


CATALOGUE: tuple[Figure, ...] = (
    *_family("iops", "IOPS",
             _row("iops", "iops", "IOPS", "IOPS", HIGHER, CELL, "iops", ALL),
             _row("iops", "read_iops", "read IOPS", "IOPS", HIGHER, CELL, "read_iops",
                  (DATASHEET,)),
             _row("iops", "write_iops", "write IOPS", "IOPS", HIGHER, CELL, "write_iops",
                  (DATASHEET,)),
             _row("iops", "fob_ss_ratio", "FOB / steady state", "ratio", NONE, FOB, "iops",
                  (DATASHEET,)), *_power("iops", "iops", "IOPS"), cells=(CELL, "", "", "", ())),
    *_family("throughput", "MB/s",
             _row("throughput", "mbps", "Throughput", "MB/s", HIGHER, CELL, "mbps", ALL),
             _row("throughput", "read_mbps", "read MB/s", "MB/s", HIGHER, CELL, "read_mbps",
                  (DATASHEET,)),
             _row("throughput", "write_mbps", "write MB/s", "MB/s", HIGHER, CELL,
                  "write_mbps", (DATASHEET,)), *_power("throughput", "mbps", "MB/s"),
             cells=(CELL, "", "", "", ())),
    *_family("latency", "us",
             _row("latency", "lat_mean_us", "Average response time (ART)", "us", LOWER, CELL,
                  "lat_mean_us", ALL),
             # the report's "5 9s" table: the test_start percentile, 99.999 % without one
             _row("latency", "lat_percentile_us", "5 9s response time", "us", LOWER, CELL,
                  "lat_percentile_us", (INDEX, DATASHEET)),
             _row("latency", "lat_max_us", "Maximum response time (MRT)", "us", LOWER, CELL,
                  "lat_max_us", (INDEX, OCPTV, COMPARE, DATASHEET)),
             _row("latency", "iops", "IOPS", "IOPS", HIGHER, CELL, "iops", (INDEX,)),
             # a datasheet's name for the 5 9s level, refused when the run recorded another
             _row("latency", "lat_p99999_us", "99.999 % response time", "us", LOWER, CELL,
                  "lat_percentile_us", (DATASHEET,)),
             *_qos_levels(), *_power("latency", "iops", "IOPS"), cells=(CELL, "", "", "", ())),
    *_family("wsat", "IOPS",
             _row("wsat", "iops", "steady-state IOPS", "IOPS", HIGHER, WSAT_RESULT,
                  "ss_average", (INDEX, CSV, OCPTV, DATASHEET),
                  names=((OCPTV, "ss_average"), (DATASHEET, "ss_iops"))),
             _row("wsat", "fob_iops", "FOB IOPS", "IOPS", HIGHER, WSAT_RESULT, "fob_iops",
                  (INDEX, OCPTV)),
             _row("wsat", "fob_ss_ratio", "FOB / steady state", "ratio", NONE, WSAT_RESULT,
                  "fob_ss_ratio", (INDEX, OCPTV, DATASHEET)),
             *_power_of("wsat", WSAT_RESULT, "", "iops", "IOPS", (INDEX, CSV, OCPTV)),
             cells=(CELL, "iops", "IOPS", "IOPS", (OCPTV,))),
    *_family("dirth", "IOPS", *_operating_points("dirth")),
    *_family("cbw", "IOPS", *_operating_points("cbw")),
    *_family("hir", "IOPS",
             _row("hir", "baseline_iops", "baseline IOPS", "IOPS", HIGHER, HIR_BASELINE,
                  "ss_iops", (INDEX, OCPTV)),
             *_read_from("hir", HIR_STATE,
                         ("wait_iops", "wait-state IOPS", "IOPS", HIGHER, "wait_iops",
                          (INDEX, OCPTV)),
                         ("return_iops", "return to baseline IOPS", "IOPS", HIGHER,
                          "baseline_iops", (INDEX,)),
                         ("ss_iops", "baseline compared with", "IOPS", HIGHER, "ss_iops",
                          (INDEX,)),
                         ("wait_ratio", "wait / baseline", "ratio", NONE, "ratio",
                          (INDEX, OCPTV))),
             *_power_of("hir", HIR_STATE, "wait_", "iops", "IOPS", (INDEX, OCPTV))),
    *_family("xsr", "IOPS",
             *_read_from("xsr", XSR_GROUP,
                         ("end_tp_mbps", "end throughput", "MB/s", HIGHER, "end_tp_mbps",
                          (INDEX,)),
                         ("final_level_mbps", "final level", "MB/s", HIGHER, "final_level_mbps",
                          (INDEX, OCPTV)),
                         ("peak_lat_mean_us", "peak ART", "us", LOWER, "peak_lat_mean_us",
                          (INDEX,)),
                         ("peak_clat_max_us", "peak MRT", "us", LOWER, "peak_clat_max_us",
                          (INDEX,)),
                         ("recovery_s", "recovery time", "s", LOWER, "recovery_s",
                          (INDEX, OCPTV))),
             *_power_of("xsr", XSR_GROUP, "", "mbps", "MB/s", (INDEX, OCPTV))),
    *_family("rwsw", "IOPS",
             *_operating_points("rwsw", "rwsw-dirth"),
             *_read_from("rwsw", ATW_SHARE,
                         ("share_target_pct", "target share", "%", NONE, "target_pct", (INDEX,)),
                         ("share_achieved_pct", "achieved share", "%", NONE, "achieved_pct",
                          (INDEX,)),
                         ("share_max_miss_pts", "largest miss", "pts", NONE, "max_miss_pts",
                          (INDEX,)),
                         ("share_within", "within tolerance", "yes=1", NONE, "within", (INDEX,)),
                         test="rwsw-wsat"),
             *_read_from("rwsw", REPLAY_STEP,
                         ("share_max_miss_pts", "largest miss", "pts", NONE, "miss_pts",
                          (INDEX,)),
                         ("share_within", "within tolerance", "yes=1", NONE, "within", (INDEX,)),
                         test="rwsw-replay")),
)


def catalogue() -> tuple[Figure, ...]:
    """The rows (read at every call: a test may add one, tests/index/test_figure_catalogue)."""
    return CATALOGUE


def family_of(test: str) -> str:
    """The family of a stored test; UnknownFamily, naming it and the fix, when the catalogue
    has no figures for it (never a fallback to IOPS)."""
    family = family_key(test)
    if not any(f.family == family for f in catalogue()):
        known = ", ".join(dict.fromkeys(f.family for f in catalogue()))
        raise UnknownFamily(f"test {test!r}: the figure catalogue has no family {family!r} "
                            f"(families: {known}); add its figures to pts/stored/figures.py "
                            "CATALOGUE (docs/design.md, 'add a figure')")
    return family


def of(test, output: str, *reads: str) -> tuple[Figure, ...]:
    """The figures of `test` that `output` shows (of these kinds of read; none given: every
    kind), in catalogue order. `test`: a stored test (its `recorded` rows only where one of
    its points holds the field) or a test's name (no `recorded` row)."""
    name = test if isinstance(test, str) else test.name
    family = family_of(name)
    held = set() if isinstance(test, str) else _held(test)
    return tuple(f for f in catalogue() if f.family == family and f.of_test(name)
                 and output in f.shown and (not reads or f.read in reads)
                 and (not f.recorded or f.field in held))


def _held(test) -> set[str]:
    """The fields a stored test holds: its points', its wsat_result's, its HIR / XSR
    records' (the read model adds --power's to them: pts.stored.power, power_phases)."""
    return ({k for p in test.points for k in p.values} | set(test.result)
            | {f.name for r in test.recovery for f in dataclasses.fields(r)})


def reads_of(test, output: str) -> list[str]:
    """The kinds of read of `test`'s figures that `output` shows, in catalogue order."""
    return list(dict.fromkeys(f.read for f in of(test, output)))


def check_readers(reads: Iterable[str], known: Iterable[str], where: str) -> None:
    """A kind of read a row asks an output for and that output has no reader of: an error
    naming both, never a figure silently left out."""
    missing = sorted(set(reads) - set(known))
    if missing:
        raise ValueError(f"the figure catalogue's kind(s) of read {', '.join(missing)} have "
                         f"no reader in {where}: add one (pts/stored/figures.py lists them)")


def tracking_unit(test: str) -> str:
    return next(f.unit for f in catalogue() if f.family == family_of(test)
                and f.read == TRACKING)


def better(test: str, metric: str) -> int:
    """HIGHER, LOWER or NONE for an indexed figure (NONE too for a metric the catalogue no
    longer has, as an index made by an older reader may hold)."""
    family = family_of(test)           # a `recorded` row too: the name alone cannot tell
    return next((f.better for f in catalogue() if f.family == family and f.of_test(test)
                 and INDEX in f.shown and f.metric == metric), NONE)


def last_each(found: Iterable, key: Callable) -> dict:
    """The last record of each key (point name, wait state, access group), in the order the
    keys first appear: the module's rule."""
    out: dict = {}
    for r in found:
        out[key(r)] = r
    return out


def datasheet_vocabulary() -> Vocabulary:
    """What a datasheet requirement may name (pts.config.datasheet, below this floor, is
    handed it): the datasheet names of the rows, and whether a test's metric is whole-test
    (no cell): so in the test's family, else in every family that has it."""
    rows = [f for f in catalogue() if DATASHEET in f.shown]

    def whole_test(test: str, metric: str) -> bool:
        named = [f for f in rows if f.name(DATASHEET) == metric]
        mine = [f for f in named if f.family == family_key(test)] or named
        return bool(mine) and all(f.read in WHOLE_TEST for f in mine)

    return Vocabulary(frozenset(f.name(DATASHEET) for f in rows),
                      frozenset(f.name(DATASHEET) for f in rows
                                if f.read == CELL and f.name(DATASHEET) == f.field),
                      whole_test)
