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

from pts.conditioning import prepare
from pts.config.spec import format_size
from pts.device import health
from pts.procedure import ceiling, fob, resume
from pts.procedure.declaration import RoundTest, TestDefinitionError, tracking_points
from pts.procedure.progress import Progress
from pts.procedure.round_measure import (
    MAX_OVERLAP,
    PIPELINE_GAP_MS,
    RoundMeasure,
    point_timeout,
)
from pts.procedure.rounds import Outcome, run_rounds
from pts.results import health_records, records
from pts.results.ledger import LedgerWriteError
from pts.results.resume import ROUND, WIPC
from pts.run import Run

# Re-exported: the declaration and the round measure are the runner's (tests, testdefs and
# benchmarks import them from here).
__all__ = ["MAX_OVERLAP", "PIPELINE_GAP_MS", "RoundMeasure", "RoundTest", "TestDefinitionError",
           "health_verdict", "point_timeout", "recorded_test", "resume_gate", "resumed_history",
           "rounds_in_test", "run_phase", "run_round_test", "tracking_points"]


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
    history = resumed_history(run, decl.test, resume_gate(decl))
    # before the purge: the DUT does not idle after WIPC (nor between rounds, resumed)
    ceiling.for_test(run, decl, going_on=history is not None)
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
