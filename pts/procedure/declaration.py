"""A round-based PTS test as a declaration (`RoundTest`): its points, the fio job of a point,
the ledger fields of a point, its tracking variables, its parameters; the one runner
(pts.procedure.runner) does the rest the same way for every test."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pts.procedure.rounds import TestPoint
from pts.tools.fio import Job, JobSet, Summary
from pts.tools.fio_round import PointResult


class TestDefinitionError(ValueError):
    """A test cannot be run as declared on this device (e.g. its tracking cell is N/A)."""


@dataclass(frozen=True)
class RoundTest:
    """What a round-based PTS test measures; everything else is the runner's."""
    test: str                        # ledger test name, e.g. "iops", "throughput-1024k"
    title: str                       # report title, e.g. "IOPS", "Throughput 1 MiB"
    clause: str                      # the spec clause it implements
    parameters: dict                 # the test_start record's parameters
    points: tuple[TestPoint, ...]        # one round, in the spec's loop order
    tracking: dict[str, TestPoint]       # tracking variable label -> its point
    value_key: str                   # the ledger field the tracking variables are judged on
    job: Callable[[TestPoint], Job | JobSet]   # the fio job (or job sections) of one point
    fields: Callable[[Summary], dict]  # the measured fields of a point record
    thread_count: int
    queue_depth: int
    wipc_block_size: int | None      # None: no WIPC (the test starts from the purged drive)
    histograms: bool = False         # fio json+ latency bins (percentiles of total latency)
    fob_sweep: bool = False          # one informative round before WIPC (--fob-sweep)
    purge_probe: bool = False        # the FOB write probe after the purge (IOPS)
    na_prefix: str = ""              # "Latency " -> "Latency 0.5 KiB cells not measured"
    # --dry-run wording only
    wipc_note: str = ""              # e.g. " at TC 1 / QD 1"
    measures: str = ""               # e.g. "per point ART, MRT and 99.999 % response time; "
    tracking_unit: str = ""          # e.g. " MB/s"
    # runs before each round's points (DIRTH/CBW: the inter-round pre-write; a round whose
    # last interval is measured: the rest of the round, pts.procedure.preconditioning)
    before_round: Callable[[int], None] | None = None
    # runs after each round's points, before its verdict (a round whose first interval is
    # measured: the rest of the round, pts.procedure.preconditioning)
    after_points: Callable[[int], None] | None = None
    # more fields of a point record from its whole result (an ATW point: each stream's
    # achieved share beside its target); a "mix_warning" text among them is said on the
    # console and recorded as a deviation (declared, never silent)
    point_fields: Callable[[TestPoint, PointResult], dict] | None = None
    # a WSAT-like stop rule (pts.procedure.rounds.run_rounds `stop`), and whether steady
    # state ends the rounds (False: judged and recorded only)
    stop: Callable[[int, dict[int, dict]], str | None] | None = None
    until_steady: bool = True
    point_seconds: int | None = None     # a point's length when not --point-seconds
    max_rounds: int | None = None        # the round limit when not --max-rounds
    # the round mode when not --round-mode: "stonewalled" for points of unequal length
    # (rwsw-replay's steps), which pipelined rounds' fixed slots cannot hold
    round_mode: str | None = None

    @property
    def until(self) -> str:
        """The tracking variables as the plan names them."""
        return ", ".join(label + self.tracking_unit for label in self.tracking)


def tracking_points(test: str, points, cells: dict[str, tuple]) -> dict[str, TestPoint]:
    """label -> point for each tracking cell (rw_mix, block_size). A cell that is not in the
    round, or is N/A on this device, cannot be tracked: a clear error, never a KeyError."""
    by_cell = {(p.rw_mix, p.block_size): p for p in points}
    found = {}
    for label, cell in cells.items():
        point = by_cell.get(cell)
        if point is None:
            raise TestDefinitionError(
                f"{test}: the tracking variable {label} is not among the test's points (a "
                "spec file or --iops-block-sizes/--iops-rw-mixes left its cell out); keep "
                "that R/W mix and block size in the test")
        if point.na_reason:
            raise TestDefinitionError(
                f"{test}: the tracking variable {label} cannot be measured on this device "
                f"({point.na_reason}); steady state cannot be judged. Nothing was written. "
                "Use a spec file whose tracking cells this device can measure.")
        found[label] = point
    return found
