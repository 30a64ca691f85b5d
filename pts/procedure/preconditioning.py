"""Preconditioning rounds with one measured interval (HIR; DIRTH/CBW preconditioning,
pts-digest §7.5, §7.7 step 2, §11.15): a round writes for its whole length — S4/S5: 30 x
1 min — and one interval of point_seconds is its tracked point. Which one is a reading the
spec file chooses: the round's FIRST interval (the point, then the rest of the round
written) or its LAST (the rest written, then the point). The rest is one timed write
(`timed_writes`), recorded as a `prewrite` record; between it and the point the device is
idle only for fio's start-up (~0.3-0.5 s; pts-digest §11.18: accepted in practice).
"""

from __future__ import annotations

from collections.abc import Callable

from pts.procedure.runner import point_timeout
from pts.results import records
from pts.run import Run
from pts.tools.fio import Job

FIRST, LAST = "first", "last"


def hooks(sample: str, write_rest: Callable[[int], None] | None) -> dict:
    """RoundTest keyword arguments that put the rest of a round (`write_rest(round)`; None:
    the round is its measured point alone) before its measured point (sample "last") or
    after it (sample "first")."""
    if write_rest is None:
        return {}
    if sample not in (FIRST, LAST):
        raise ValueError(f"round sample {sample!r}: must be {FIRST!r} or {LAST!r}")
    return {"before_round": write_rest} if sample == LAST else {"after_points": write_rest}


def timed_writes(run: Run, test: str, job: Job, when: str, tc: int, qd: int,
                 seconds: int) -> records.Prewrite:
    """Run `job` (RND writes for `seconds`) as one fio run and record it."""
    res = run.fio.run(run.device.path, [job], run.raw_dir(test, "prewrite"),
                      when.replace(" ", "-"), timeout=point_timeout(seconds))
    rec = records.Prewrite(test=test, when=when, thread_count=tc, queue_depth=qd,
                           seconds=seconds, bytes_written=res.summary.write.io_bytes,
                           iops=res.summary.iops, raw=run.relative(res.json_path))
    run.ledger.append(rec)
    return rec
