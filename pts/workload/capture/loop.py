"""The capture loop: the tracefs instance's ring buffer pages -> the spool, nothing more.

Every poll moves each CPU's filled `trace_pipe_raw` pages into the spool's part files
(pts/workload/capture/spool.py; splice: the kernel moves them, this process neither copies nor
decodes them), and at least every spool.FLUSH_S the partly filled pages too. The ring
buffer's lost-event counters are read at every step boundary. Decoding and pairing come
afterwards (pts/workload/capture/unspool.py). Issue 32's version decoded and paired while the
workload ran: 1.6-1.7 µs of the traced host's CPU per request (docs/capture.md).
"""

from __future__ import annotations

import contextlib
import fnmatch
import resource
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from pts.workload.capture import spool as spooling
from pts.workload.capture.source import Source
from pts.workload.capture.tracefs import on_signals

# choice: the ring buffer is emptied every POLL_S; the buffer (--buffer-kb per CPU) must
# hold POLL_S of events (plus the host's scheduling delays) per CPU.
POLL_S = 0.1


def process_filter(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """--process: keep a request when its issuing comm matches one of the names or globs
    (fnmatch, case-sensitive: `postgres`, `kworker/*`). No patterns: keep everything."""
    if not patterns:
        return lambda comm: True
    cache: dict[str, bool] = {}

    def keep(comm: str) -> bool:
        hit = cache.get(comm)
        if hit is None:
            hit = cache[comm] = any(fnmatch.fnmatchcase(comm, p) for p in patterns)
        return hit
    return keep


@contextlib.contextmanager
def signals_flag() -> Iterator[Callable[[], str | None]]:
    """For the block's duration SIGINT and SIGTERM only note their arrival: the callable
    given returns the first one's name (None before), so a capture can end as it would at
    its end, keeping what it traced; the previous handlers are restored afterwards."""
    got: list[str] = []
    with on_signals(lambda signum, frame: got.append(signal.Signals(signum).name)):
        yield lambda: got[0] if got else None


@dataclass(frozen=True)
class Spooled:
    start_ns: int                # CLOCK_MONOTONIC at issue_ns == 0
    started_unix: float
    seconds: float               # traced for this long (less than asked when stopped)
    stopped_by: str | None       # the signal that ended it early, if one did
    lost_by_step: tuple[int, ...]
    cpu_s: float                 # this process's CPU time while it spooled
    bytes: int


def spool(instance: Source, path, formats: dict[str, bytes], meta: dict, seconds: float,
          step_s: float, stop: Callable[[], str | None] = lambda: None,
          part_s: float = spooling.PART_S, poll_s: float = POLL_S) -> Spooled:
    """Trace for `seconds` (or until `stop()` names a reason), moving the ring buffer's
    pages into a new spool at `path` (digest §7: streaming kept every event where a
    post-run read lost most). `instance`: a live source (source.Source: a
    tracefs.Instance, or a remote.RemoteInstance, whose clock is the DUT host's)."""
    # counted from before tracing (was: after the spool's files were made and fsync'd,
    # so what the buffer lost meanwhile went uncounted)
    lost_before = instance.lost()
    start_ns = instance.start()
    # the Unix time of start_ns (issue_ns 0), read on the source's clock: was time.time()
    # before start(), early by a remote start's ssh round trip, so the window the
    # descriptor gives (started_unix + seconds) ended before the tracing did (CI of stop 55:
    # a workload that ended inside the capture read as ending after it)
    started_unix = time.time() - (instance.clock() - start_ns) / 1e9
    # after tracing_on: a task started later is named by its task_newtask event (a
    # one-time cost, not counted in cpu_s: ~300 tasks read in a few ms here)
    comms = instance.comms() if "task_newtask.format" in formats else {}
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    writer = spooling.SpoolWriter(path, formats, meta | {"start_ns": start_ns,
                                                         "comms": comms,
                                                         "started_unix": started_unix,
                                                         "step_s": step_s,
                                                         "seconds": seconds},
                                  instance.ncpus, part_s)
    try:
        steps = max(1, -(-int(seconds * 1e9) // int(step_s * 1e9)))
        lost_by_step = []
        end_ns = start_ns + int(seconds * 1e9)
        stopped_at, stopped_by, flushed = None, None, start_ns
        while True:
            now = instance.clock()
            if stopped_at is None and (now >= end_ns or (stopped_by := stop())):
                instance.stop()
                now = stopped_at = instance.clock()    # read after: every event is older
            # every step boundary passed until now or the stop (a poll late by more than a
            # step passes several: the first takes the losses since the last one)
            upto = now if stopped_at is None else stopped_at
            while upto >= min(start_ns + int((len(lost_by_step) + 1) * step_s * 1e9), end_ns) \
                    and len(lost_by_step) < steps - 1:
                lost_now = instance.lost()
                lost_by_step.append(lost_now - lost_before)
                lost_before = lost_now
                writer.lost(now, lost_now)
            partial = stopped_at is not None or now - flushed >= FLUSH_NS
            moved = instance.pages_to(writer.files, partial)
            if partial:
                flushed = now
            part = writer.part
            writer.moved(moved)
            if writer.part != part:       # a killed capture's lost count reaches this far
                writer.lost(now, instance.lost(), step=False)
            if stopped_at is not None and not moved:     # stopped and drained
                break
            time.sleep(poll_s)
        if stopped_by:            # steps after the stop were not traced
            steps = len(lost_by_step) + 1
        lost_by_step += [0] * (steps - 1 - len(lost_by_step))  # steps shorter than a poll
        lost_now = instance.lost()
        lost_by_step.append(lost_now - lost_before)
        writer.lost(stopped_at, lost_now)
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu_s = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
        traced = min(seconds, (stopped_at - start_ns) / 1e9)
        writer.close({"seconds": traced, "stopped_by": stopped_by,
                      "lost_by_step": lost_by_step, "spool_cpu_s": cpu_s,
                      "spool_maxrss_kb": cpu1.ru_maxrss})
    except BaseException:
        writer.abandon()
        raise
    return Spooled(start_ns, started_unix, traced, stopped_by, tuple(lost_by_step), cpu_s,
                   writer.bytes)


FLUSH_NS = int(spooling.FLUSH_S * 1e9)
