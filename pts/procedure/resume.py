"""--resume: the one way every PTS test goes on in a stopped run (IOPS, Throughput, Latency
and every round phase through the round runner; HIR's wait states; XSR's access groups;
DIRTH's and CBW's operating-point captures; WSAT restarts), and with the stopped run's
--power sources (`power_sources`).

A test says only where it stands, from the stopped run's ledger (pts.results.resume): a
`GoOn` (after which round, wait state or group, and what it carries on with) or a
`Restart` (why it starts again from purge). Everything a resumed test owes the report is
done here, the same for all of them: the Resume record with the device's idle time, the
deviation and console line saying where it went on, and the write cache set, read back and
recorded again "on resume" (a power cycle between stop and resume may have reset it), with
its deviation when the device does not hold the required state.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pts.conditioning import prepare
from pts.config import power_option
from pts.results import records
from pts.results.resume import ResumeState, TestProgress
from pts.run import Run


@dataclass(frozen=True)
class GoOn:
    """Where a stopped test goes on."""
    after: int                 # completed rounds / wait states / groups (Resume.after_round)
    last_time: float | None    # the test's last record: the device idled since
    where: str                 # "after round 3", "during the operating-point captures"
    redone: str                # "the round in flight was redone"
    then: str = ""             # more for the console line
    state: Any = None          # what the test carries on with (tracking history, baseline)


@dataclass(frozen=True)
class Restart:
    """The stopped test starts again from purge; `reason` says why."""
    reason: str


Where = Callable[[ResumeState], GoOn | Restart | None]


def go_on(run: Run, test: str, where: Where) -> GoOn | None:
    """On --resume, where `test` goes on (`where` reads it from the stopped run's ledger),
    recorded and declared, with the write cache set again; None: the test runs from its
    start (not a resumed run, the test had not started before the stop, or it restarts
    from purge: then declared here)."""
    if run.resume is None:
        return None
    found = where(run.resume)
    if isinstance(found, Restart):
        restart(run, test, found.reason)
        return None
    if found is None:
        return None
    idle = (time.time() - found.last_time) / 60 if found.last_time else 0.0
    run.ledger.append(records.Resume(test=test, after_round=found.after, idle_minutes=idle))
    run.deviation(test, f"Resumed run: device idle {idle:.1f} minutes {found.where} "
                        f"({found.redone}).")
    run.write(f"[pts {test}] resume {found.where} (idle {idle:.1f} min){found.then}")
    cache = prepare.write_cache_step(run, test, "on resume")
    if cache.deviation():
        run.deviation(test, cache.deviation())
    return found


def restart(run: Run, test: str, reason: str) -> None:
    """A stopped test that starts again from purge: said and declared."""
    run.write(f"[pts {test}] resume: {reason}; starting from purge")
    run.deviation(test, f"Resumed run: the test was restarted from purge ({reason}).")


def after_rounds(progress: TestProgress) -> GoOn | Restart | None:
    """A round-based test (pts.results.resume.ResumeState.progress): on after its last
    completed round with the tracking history of its rounds, restarted from purge, or (it
    had not started before the stop) None."""
    if progress.restart_reason:
        return Restart(progress.restart_reason)
    if progress.restart_reason == "":
        return None
    return GoOn(progress.last_round, progress.last_time, f"after round {progress.last_round}",
                "the round in flight was redone", state=progress.history)


def power_sources(run: Run) -> tuple[tuple, tuple[str, ...]]:
    """--resume without --power: the stopped run's power sources (its power_source records,
    in order), so that the rounds after the stop get their windows as those before did, and
    what to say of them. --power is no run.json option (the option table's replay does not
    take it back): the ledger's records are what the run kept of it, each source under its
    stored name, which leaves out a password-file= (said: give --power again for such a
    source). ((), ()) for a run that is not resumed or recorded no source; --power given with
    --resume wins (the caller asks only without it)."""
    if run.resume is None:
        return (), ()
    names = list(dict.fromkeys(r.name for r in run.resume.records
                               if isinstance(r, records.PowerSourceInfo)))
    found, said = [], []
    for name in names:
        try:
            found += power_option.parse(name)
        except power_option.PowerSpecError as exc:    # a record of an older parser
            said.append(f"--resume: the stopped run's source {name!r} is not taken back "
                        f"({exc}); give --power again for it")
    if found:
        said.append(f"--resume: the stopped run's sources again: {', '.join(names)} (a "
                    "password-file= is not stored: give --power again with it where a "
                    "source needs one)")
    return tuple(found), tuple(said)
