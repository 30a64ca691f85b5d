"""The capture loop: the tracefs instance's ring buffer pages -> rows -> the capture file.

Every poll drains each CPU's `trace_pipe_raw` (binary pages: no text formatting in the
kernel, pts/workload/ringbuf.py), decodes the block_rq events in bulk and hands them to the
pairing (pts/workload/pairing.py), which writes one row per request in issue order. The
ring buffer's lost-event counters are read at every step boundary.
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pts.workload import ringbuf
from pts.workload.pairing import Counts, Pairing

BATCH_PAGES = 2048           # pages read per CPU per poll at most (8 MiB of 4 KiB pages)
# choice: the ring buffer is read every POLL_S. Per-batch numpy costs are fixed, so fewer,
# larger batches cost less CPU per event (offline, pairing: 0.77 µs/event in 20 ms
# batches, 0.28 in 100 ms); the buffer (--buffer-kb) must hold POLL_S of events per CPU.
POLL_S = 0.1
# A CPU read to its end has delivered every event stamped before the read began, but for
# one being committed at that instant: the pairing waits this long for such stragglers.
MARGIN_NS = 10_000_000


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


@dataclass(frozen=True)
class Recorded:
    start_ns: int                # CLOCK_MONOTONIC at issue_ns == 0
    started_unix: float
    seconds: float
    lost_events: int
    lost_by_step: tuple[int, ...]
    counts: Counts


def record(instance, layout: ringbuf.Layout, seconds: float, step_s: float,
           keep: Callable[[str], bool], emit: Callable[[dict], None],
           poll_s: float = POLL_S) -> Recorded:
    """Trace for `seconds`, streaming the ring buffer (digest §7: streaming kept every
    event where a post-run read lost most), pairing and emitting rows as they come.
    `instance`: a tracefs.Instance, or a remote_capture.RemoteInstance (the same methods;
    its clock is the DUT host's)."""
    started_unix = time.time()
    start_ns = instance.start()
    pairing = Pairing(start_ns, keep, emit)
    steps = max(1, -(-int(seconds * 1e9) // int(step_s * 1e9)))
    lost_by_step, lost_before = [], instance.lost()
    end_ns = start_ns + int(seconds * 1e9)
    stopped = False
    while True:
        now = instance.clock()
        boundary = start_ns + int((len(lost_by_step) + 1) * step_s * 1e9)
        if now >= min(boundary, end_ns) and len(lost_by_step) < steps - 1:
            lost_now = instance.lost()
            lost_by_step.append(lost_now - lost_before)
            lost_before = lost_now
        if now >= end_ns and not stopped:
            instance.stop()
            stopped = True
        batches, horizon, capped = [], now - MARGIN_NS, False
        for pages in instance.read_pages(BATCH_PAGES):
            batch = ringbuf.decode(pages, layout)
            batches.append(batch)
            if len(pages) >= BATCH_PAGES * layout.page_size and len(batch["t"]):
                horizon = min(horizon, int(batch["t"].max()))    # more pages wait
                capped = True
        got = any(len(b["t"]) for b in batches)
        pairing.feed({k: np.concatenate([b[k] for b in batches]) for k in batches[0]}
                     if got else ringbuf.empty(), now_ns=now, horizon_ns=horizon)
        if stopped and not got:     # stopped and drained
            break
        if not capped:              # few large batches cost less than many small ones
            time.sleep(poll_s)
    lost_by_step += [0] * (steps - 1 - len(lost_by_step))   # steps shorter than a poll
    lost_by_step.append(instance.lost() - lost_before)
    pairing.finish()
    lost = sum(lost_by_step)
    return Recorded(start_ns, started_unix, seconds, lost, tuple(lost_by_step), pairing.counts)
