"""The one runner of round-based PTS tests, and the life cycle every PTS test shares.

A round-based test (IOPS, Throughput, Latency; DIRTH, CBW and HIR preconditioning next) is a
`RoundTest` declaration — its points, the fio job of a point, the ledger fields of a point,
its tracking variables, its parameters — and `run_round_test` does the rest the same way for
every one of them:

    test_start -> (resume: the rounds already done, the write cache set again)
               -> or: N/A cells declared, purge, write cache, [FOB sweep], WIPC, write cache
    -> WDPC: rounds until steady state (pts.procedure.rounds), device counters after each round
    -> device health verdict -> test_end

`recorded_test` is the test_start .. test_end bracket (also used by the WSAT, which is not
round-based): a test a resumed run already finished is not run again, and a test that stops
is recorded as "interrupted" or "error" before the exception goes on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pts.conditioning import prepare
from pts.config.spec import format_size
from pts.device import health
from pts.procedure import ceiling, fob, resume
from pts.procedure.progress import Progress
from pts.procedure.rounds import Outcome, TestPoint, run_rounds
from pts.results import health_records, records
from pts.results.ledger import LedgerWriteError
from pts.results.resume import ROUND, WIPC
from pts.run import Run
from pts.tools.fio import Job, JobSet, Summary
from pts.tools.fio_round import PointResult, run_round

# A round's fio run gets this long before it is called hung: three times its points (fio
# start-up, ramp and a device that drains slowly) plus two minutes of slack for a slow host.
TIMEOUT_FACTOR, TIMEOUT_SLACK_S = 3, 120
# Pipelined rounds: point k's I/O starts at an exact time, a gap after point k-1's runtime
# (pts.tools.fio_round). 10 ms between points keeps a point's last completions clear of the
# next one's first I/O on the devices we measured (56-point rounds at 1 s on a tmpfs loop
# device, load 3.4: largest overlap 9 ms with 10 ms gaps, 16 ms with 5 ms) and costs 1 % at
# 1 s points, 0.02 % at the spec's 60 s; a point overlapping the one before by more than
# 1 % of a point (issue: "measurements never overlap silently") is not recorded.
PIPELINE_GAP_MS, MAX_OVERLAP = 10, 0.01
# A point still draining after its runtime (128 x 1 MiB writes) delays the next one: the gap
# before point k is PIPELINE_GAP_MS + DRAIN_MARGIN x the largest of its predecessor's last
# DRAIN_RUNS drains (measured: docs/performance.md, "Pipelined rounds that hold"). A round
# that overlaps is measured again pipelined with the gaps of its drains; the points that
# overlap again, again stonewalled; FALLBACK_ROUNDS such rounds in a row and WHOLE_TEST.
DRAIN_MARGIN, DRAIN_RUNS, FALLBACK_ROUNDS = 1.5, 3, 3
WHOLE_TEST = "the test's later rounds run stonewalled"    # a RoundMode that holds on --resume


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


def point_timeout(point_seconds: int) -> int:
    return point_seconds * TIMEOUT_FACTOR + TIMEOUT_SLACK_S


class RoundMeasure:
    """Measures the points of one round as one fio run (pts.tools.fio_round) in the run's
    round mode; pipelined, with the gaps learned from the points' drains (`gaps`). A point
    overlapping the previous one by more than `MAX_OVERLAP` of a point is never recorded:
    the round is measured again (round_mode records, said on the console)."""

    def __init__(self, run: Run, decl: RoundTest):
        self.run, self.decl = run, decl
        self.mode = decl.round_mode or run.settings.round_mode
        if run.resume is not None:       # a whole-test fallback before the stop still holds
            if any(isinstance(r, records.RoundMode) and r.test == decl.test
                   and WHOLE_TEST in (r.reason or "") for r in run.resume.records):
                self.mode = "stonewalled"
        self.seconds = decl.point_seconds or run.settings.point_seconds
        self.slot_ms = self.seconds * 1000 + PIPELINE_GAP_MS
        self.gaps: dict[int, int] = {}   # point index -> gap before it (ms), learned
        self.drains: dict[int, float | None] = {}    # point index -> its last drain (ms)
        self.seen: dict[int, list[float]] = {}  # point index -> its drains, last DRAIN_RUNS
        self.fallbacks = 0               # rounds in a row with points measured stonewalled
        self.order: list[TestPoint] = []     # the last round's points, in loop order

    def __call__(self, points: list[TestPoint], round_no: int) -> dict[int, dict]:
        found = self._round(points, round_no)
        for p in points:
            if found[p.index].get("mix_warning"):
                text = f"round {round_no}, {p.label}: {found[p.index]['mix_warning']}"
                self.run.write(f"[pts {self.decl.test}] WARNING {text}")
                self.run.deviation(self.decl.test, text)
        return found

    def _round(self, points: list[TestPoint], round_no: int) -> dict[int, dict]:
        found = self._measure(points, round_no, self.mode)
        if self.mode != "pipelined":
            return found
        over = self.overlapping(points, found)
        if over:          # the whole round again, pipelined with the gaps of its drains
            self._said(round_no, over, found, self._again_pipelined(over))
            _set_aside(self.run.raw_dir(self.decl.test, f"round-{round_no:02d}"),
                       "overlapped")         # its raw output is kept, never recorded
            found = self._measure(points, round_no, "pipelined")
            over = self.overlapping(points, found)
        if not over:
            self.fallbacks = 0
            return found
        # Only the points that overlapped again are measured again, stonewalled (their own
        # fio run after the round); the round's other points stand.
        self.fallbacks += 1
        whole = self.fallbacks >= FALLBACK_ROUNDS
        folder = f"round-{round_no:02d}-stonewalled"
        self._said(round_no, over, found, (
            f"these points are measured again stonewalled after the round (raw: {folder}); "
            + (f"{WHOLE_TEST} ({FALLBACK_ROUNDS} rounds in a row overlapped twice)" if whole
               else "the next round goes on pipelined with the gaps learned")), "stonewalled")
        self.mode = "stonewalled" if whole else self.mode
        return found | self._measure(over, round_no, "stonewalled", folder)

    def overlapping(self, points: list[TestPoint], found: dict[int, dict]) -> list[TestPoint]:
        """The points that overlapped their predecessor by more than the limit."""
        limit = MAX_OVERLAP * self.seconds * 1000
        return [p for p in points if (found[p.index]["overlap_ms"] or 0) > limit]

    def _again_pipelined(self, over: list[TestPoint]) -> str:
        widest = max(over, key=lambda p: self.gaps.get(p.index, PIPELINE_GAP_MS))
        return (f"this round is measured again pipelined with the gaps of its drains (widest: "
                f"{self.gaps.get(widest.index, PIPELINE_GAP_MS)} ms before {widest.label})")

    def _said(self, round_no: int, over: list[TestPoint], found: dict[int, dict], how: str,
              mode: str = "pipelined") -> None:
        """Say and record (a round_mode record) why and how the round is measured again."""
        ranked = sorted(over, key=lambda p: -found[p.index]["overlap_ms"])
        said = ", ".join(f"{p.label} by {found[p.index]['overlap_ms']:.0f} ms"
                         for p in ranked[:3])
        more = f" and {len(over) - 3} more" if len(over) > 3 else ""
        reason = (f"round {round_no}: {len(over)} point(s) overlapped the previous point by "
                  f"more than {MAX_OVERLAP:.0%} of a point ({said}{more}); {how}")
        self.run.write(f"[pts {self.decl.test}] {reason}")
        self.run.ledger.append(records.RoundMode(test=self.decl.test, round=round_no,
                                                 mode=mode, reason=reason))

    def learn(self, points: list[TestPoint], results: list[PointResult],
              order: list[TestPoint] | None = None) -> None:
        """Each measured point's drain; the gap before each point of the round (`order`:
        its points in loop order) from its predecessor's largest of its last drains."""
        self.drains |= {p.index: r.drain_ms for p, r in zip(points, results, strict=True)}
        for p, r in zip(points, results, strict=True):
            seen = self.seen.setdefault(p.index, [])
            seen[:] = [*seen, max(0.0, r.drain_ms or 0.0)][-DRAIN_RUNS:]
        order = order or points
        for before, point in zip(order, order[1:], strict=False):
            drain = max(self.seen.get(before.index) or [0.0])
            self.gaps[point.index] = PIPELINE_GAP_MS + int(DRAIN_MARGIN * drain + 0.999)

    def gaps_ms(self, points: list[TestPoint]) -> list[int]:
        return [self.gaps.get(p.index, PIPELINE_GAP_MS) for p in points]

    def _measure(self, points: list[TestPoint], round_no: int, mode: str,
                 folder: str | None = None) -> dict[int, dict]:
        """`points` in one fio run (`folder`: points measured again after their round)."""
        run, decl = self.run, self.decl
        out = run.raw_dir(decl.test, folder or f"round-{round_no:02d}")
        jobs = [decl.job(p) for p in points]
        gaps = self.gaps_ms(points) if mode == "pipelined" else None
        seconds = len(points) * self.seconds + sum(gaps or [PIPELINE_GAP_MS] * len(points)) \
            / 1000
        results = run_round(run.fio, run.device.path, jobs, out, mode, self.slot_ms,
                            timeout=point_timeout(int(seconds) + 1),
                            histograms=decl.histograms, gaps_ms=gaps)
        self.order = self.order if folder else points
        self.learn(points, results, self.order)
        extra = decl.point_fields or (lambda p, r: {})
        return {p.index: decl.fields(r.summary) | _toio(p) | extra(p, r) | {
            "start": r.start, "end": r.end, "overlap_ms": r.overlap_ms,
            "raw": run.relative(r.json_path),
            "host_bound": ceiling.point_mark(run, decl, p, r.summary)}
            for p, r in zip(points, results, strict=True)}


def _toio(point: TestPoint) -> dict:
    """A point at its own TC/QD (DIRTH, CBW) records them."""
    if point.thread_count is None:
        return {}
    return {"thread_count": point.thread_count, "queue_depth": point.queue_depth}


def _set_aside(folder: Path, why: str) -> None:
    """Rename `folder` to `folder-why` (or `folder-why-N` when that is taken)."""
    for n in range(100):
        target = folder.with_name(f"{folder.name}-{why}" + (f"-{n}" if n else ""))
        if not target.exists():
            folder.rename(target)
            return


def run_round_test(run: Run, decl: RoundTest) -> Outcome:
    """Purge, WIPC and the WDPC rounds to steady state of `decl`, inside its
    test_start..test_end."""
    return recorded_test(run, decl.test, decl.title, decl.clause, decl.parameters,
                         lambda: _rounds_body(run, decl), gate=resume_gate(decl))


def resume_gate(decl: RoundTest) -> str:
    """A test with a WIPC goes on after --resume once its WIPC is done; one without (its
    rounds are its preconditioning: HIR, DIRTH/CBW) once its first round is."""
    return WIPC if decl.wipc_block_size else ROUND


def rounds_in_test(run: Run, decl: RoundTest) -> Outcome:
    """Purge, [WIPC] and the WDPC rounds to steady state of `decl` as one part of a test whose
    test_start..test_end another body brackets (HIR's preconditioning)."""
    return _rounds_body(run, decl)


def _rounds_body(run: Run, decl: RoundTest) -> Outcome:
    measure = RoundMeasure(run, decl)
    ceiling.for_test(run, decl)     # before the purge: the DUT does not idle after WIPC
    history = resumed_history(run, decl.test, resume_gate(decl))
    if history is None:
        declare_na(run, decl.test, decl.na_prefix, decl.points)
        sweep = (lambda: fob.sweep(run, decl.test, list(decl.points), measure)) \
            if decl.fob_sweep else None
        prepare.prepare(run, decl.test, prepare.active_range_bytes(run), decl.wipc_block_size,
                        (decl.thread_count, decl.queue_depth), before_wipc=sweep,
                        probe=decl.purge_probe)
    return run_phase(run, decl, measure, history)


def run_phase(run: Run, decl: RoundTest, measure: RoundMeasure | None = None,
              history: dict[str, list[float]] | None = None) -> Outcome:
    """The WDPC rounds of `decl` until steady state (no purge, no WIPC): the rounds of a test
    that runs several round phases inside one recorded test (DIRTH's demand variation after
    its preconditioning)."""
    measure = measure or RoundMeasure(run, decl)
    settings, rule = run.settings, run.spec.steady_state
    max_rounds = decl.max_rounds or settings.max_rounds
    progress = Progress(run.write, decl.test, len(decl.points),
                        decl.point_seconds or settings.point_seconds, rule.window_rounds,
                        max_rounds)
    return run_rounds(
        test=decl.test, points=list(decl.points), measure=measure, tracking=decl.tracking,
        rule=rule, max_rounds=max_rounds, ledger=run.ledger, progress=progress,
        value_key=decl.value_key,
        after_round=lambda r: _after_round(run, decl, r),
        history=history, before_round=decl.before_round, stop=decl.stop,
        until_steady=decl.until_steady)


def _after_round(run: Run, decl: RoundTest, round_no: int) -> None:
    if decl.after_points:
        decl.after_points(round_no)
    prepare.record_counters(run, decl.test, f"after round {round_no}", round_no)


def health_verdict(run: Run, test: str, outcome: Outcome) -> Outcome:
    """The outcome, or a device-health failure when the smart-log shows one (the spec
    outcome is kept in the message)."""
    found = health.problems(health_records.test_records(run.ledger.path, test))
    if not found:
        return outcome
    run.write(f"[pts {test}] DEVICE HEALTH FAILURE: " + "; ".join(found))
    return dataclasses.replace(
        outcome, status=health.HEALTH_FAILURE,
        message="DEVICE HEALTH FAILURE (not a spec result): " + "; ".join(found)
        + f". Spec outcome: {outcome.message}")


def declare_na(run: Run, test: str, prefix: str, points) -> None:
    """One deviation per block size that cannot be measured on this device."""
    for bs in sorted({p.block_size for p in points if p.na_reason}):
        run.deviation(test, f"{prefix}{format_size(bs)} cells not measured (N/A): smaller "
                            f"than the logical sector size ({run.device.logical_sector} "
                            "bytes).")


def resumed_history(run: Run, test: str,
                    gate: str | None = WIPC) -> dict[str, list[float]] | None:
    """On --resume, the tracking values of the rounds already done, if the test got past its
    gate and nothing purged the drive since (it then goes on with the next round: the one
    resume path, pts.procedure.resume); None: run the test from purge."""
    found = resume.go_on(run, test, lambda state: resume.after_rounds(state.progress(test, gate)))
    return None if found is None else found.state


def recorded_test(run: Run, test: str, title: str, clause: str, parameters: dict,
                  body: Callable[[], Outcome], gate: str | None = WIPC) -> Outcome:
    """test_start, the test's body, test_end (status "error" if the body raised).
    A test a resumed run had already finished is not run again: its recorded end stands.
    gate: as ResumeState.progress."""
    progress = run.resume.progress(test, gate) if run.resume else None
    if progress is not None and progress.finished is not None:
        end = progress.finished
        run.write(f"[pts {test}] already finished in this run: {end.message}")
        return Outcome(end.status, end.rounds, end.steady_round, tuple(end.window or (0, 0)),
                       {}, end.message)
    if progress is None or progress.restart_reason is not None:
        # The readings of the spec this test runs with (spec file [provenance.*]): stored
        # with the run so its report lists them whatever the spec file says later.
        readings = {"readings": run.spec.readings_for(test)}
        run.ledger.append(records.TestStart(test=test, title=title, clause=clause,
                                            parameters=parameters | readings))
    prepare.record_counters(run, test, "test start")
    try:
        outcome = body()
        prepare.record_counters(run, test, "test end")
        outcome = health_verdict(run, test, outcome)
    except KeyboardInterrupt:
        run.ledger.append(records.TestEnd(
            test=test, status=records.INTERRUPTED, rounds=None, steady_round=None,
            window=None, message="interrupted (Ctrl-C or SIGTERM); the point in flight was "
                                 "stopped and not recorded"))
        raise
    except BaseException as exc:
        try:
            run.ledger.append(records.TestEnd(test=test, status=records.ERROR, rounds=None,
                                              steady_round=None, window=None,
                                              message=f"{type(exc).__name__}: {exc}"))
        except LedgerWriteError as failed:     # a full disk: the test's own error stands
            run.write(f"[pts {test}] the test's error could not be recorded: {failed}")
        raise
    run.ledger.append(records.TestEnd(test=test, status=outcome.status, rounds=outcome.rounds,
                                      steady_round=outcome.steady_round,
                                      window=list(outcome.window), message=outcome.message))
    return outcome
