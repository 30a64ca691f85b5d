"""The capture loop: trace_pipe text -> one row per I/O request -> the capture file.

A request is issued (block_rq_issue) and later completed (block_rq_complete); the two
events pair up on (sector, nr_sector, direction) (rwsw-digest §7). A row carries the issue
event's task (pid from the line's `comm-pid` prefix, comm from the event's own comm field:
the prefix comm comes from the kernel's saved_cmdlines cache and reads "<...>" once a pid
has been evicted from it) and the completion's time and error.

Rows leave in issue order (the order the characteriser's sequential rule reads), held only
until their completion arrives: memory is bounded by the outstanding requests. A request
whose completion is not seen within STALE_NS is written without one (NO_TIME).

Times: the instance's trace clock is CLOCK_MONOTONIC printed with µs digits, so issue_ns
and complete_ns are multiples of 1 µs.
"""

from __future__ import annotations

import fnmatch
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from pts.workload.events import NO_TIME, Op

# The line the kernel prints (format files of block_rq_issue/complete, 6.x):
#   fio-24537   [001] ..... 11808.135711: block_rq_issue: 7,0 R 4096 () 68568 + 8 be,0,4 [fio]
#   ksoftirqd/1-22 [001] ..s.. 11808.137263: block_rq_complete: 7,0 R () 68568 + 8 be,0,4 [0]
# issue has `bytes` after rwbs and ends with [comm]; complete ends with [error]. The ioprio
# field ("be,0,4") is absent on older kernels, the flags field ("....") without irq-info.
LINE = re.compile(
    rb"^ *.*?-(\d+) +\[\d+\] +(?:\S+ +)?(\d+)\.(\d+): block_rq_(i|c)\w+: "
    rb"\d+,\d+ (\S+) (?:\d+ )?\(.*?\) (\d+) \+ (\d+)(?: \S+)? \[(.*)\]$", re.M)
# rwbs letters (blk_fill_rwbs): an optional leading F (preflush), then the operation
# (R read, W write, D discard, DE secure erase, F flush, N other e.g. write-zeroes), then
# flags (F fua, A readahead, S sync, M meta): "WS", "RM", "FWS" (a write), "FF" (a flush).
OPS = {"R": Op.READ, "W": Op.WRITE, "D": Op.DISCARD, "F": Op.FLUSH}
STALE_NS = 30 * 10**9        # choice: a request not completed in 30 s is written without
KWORKER = "kworker/"         # the kernel's worker threads (writeback, flush, kblockd)
BATCH = 1 << 16              # rows handed to the writer at a time


def op_of(rwbs: str) -> Op:
    """The operation of a kernel rwbs string."""
    body = rwbs[1:] if rwbs[:1] == "F" and rwbs[1:2] in ("R", "W", "D", "F", "N") else rwbs
    if rwbs[:1] == "F" and body[:1] == "N":
        return Op.FLUSH          # blkparse's own rwbs writes an empty flush as "FN"
    if body.startswith("DE"):
        return Op.OTHER          # secure erase
    return OPS.get(body[:1], Op.OTHER)


@dataclass
class Counts:
    """What the capture saw, for its descriptor and the summary."""
    seen: int = 0                # requests issued (before --process)
    kworker: int = 0             # of which issued by a kworker thread
    kept: int = 0                # rows written
    by_op: dict[str, int] = field(default_factory=lambda: {o.name: 0 for o in Op})
    sectors_by_op: dict[str, int] = field(default_factory=lambda: {o.name: 0 for o in Op})
    unmatched_completions: int = 0   # completions of requests issued before the start, and
    #                                  the flush machinery's second completion ("+ 0")
    incomplete: int = 0          # rows written without a completion
    unparsed_lines: int = 0      # trace lines that are not block_rq events (e.g. LOST lines)


class Pairing:
    """Pairs issue and complete events into rows; emits rows in issue order."""

    def __init__(self, start_ns: int, keep: Callable[[str], bool],
                 emit: Callable[[dict], None]):
        self.start_ns = start_ns
        self.keep = keep
        self.emit = emit
        self.counts = Counts()
        self.pending: dict[tuple, deque] = {}
        self.order: deque[list] = deque()
        self.rows: list[list] = []
        self._comms: dict[bytes, list] = {}
        self._ops: dict[bytes, Op] = {}

    def feed(self, data: bytes) -> None:
        """Whole lines of trace_pipe text. The loop keeps the fields as bytes (a row's
        numbers are converted in bulk when written): it runs twice per I/O."""
        matches = LINE.findall(data)
        self.counts.unparsed_lines += data.count(b"\n") - len(matches)
        start, ops, pending, order = self.start_ns, self._ops, self.pending, self.order
        for pid, sec, usec, kind, rwbs, sector, nr, last in matches:
            op = ops.get(rwbs)
            if op is None:
                op = ops[rwbs] = op_of(rwbs.decode())
            # a flush has no sector: issued "0 + 0", completed "18446744073709551615 + 0"
            key = op if op is Op.FLUSH else (sector, nr, op)
            t = int(sec + usec) * 1000 - start
            if kind == b"i":
                row = [t, NO_TIME, sector, nr, op, pid, last, b"0", key]
                order.append(row)
                queue = pending.get(key)
                if queue is None:
                    pending[key] = deque((row,))
                else:
                    queue.append(row)
            else:
                queue = pending.get(key)
                if not queue:
                    self.counts.unmatched_completions += 1
                    continue
                row = queue.popleft()
                if not queue:
                    del pending[key]
                row[1] = t
                row[7] = last
        self._drain(now_ns=None)

    def _drain(self, now_ns: int | None, final: bool = False) -> None:
        order, c, out, comms = self.order, self.counts, self.rows, self._comms
        while order:
            row = order[0]
            if row[1] == NO_TIME:
                stale = now_ns is not None and now_ns - row[0] > STALE_NS
                if not (final or stale):
                    break
                self._forget(row)
                c.incomplete += 1
            order.popleft()
            seen = comms.get(row[6])
            if seen is None:      # per task name: (its str, a kworker?, kept?)
                name = row[6].decode(errors="replace")
                seen = comms[row[6]] = [name, name.startswith(KWORKER), self.keep(name), 0]
            seen[3] += 1
            if seen[2]:
                out.append(row)
                if len(out) >= BATCH:
                    self.flush()
                    out = self.rows

    def _forget(self, row: list) -> None:
        queue = self.pending.get(row[8])
        if queue is not None:
            queue.remove(row)
            if not queue:
                del self.pending[row[8]]

    def tick(self, now_ns: int) -> None:
        """Write out requests whose completion is overdue."""
        self._drain(now_ns)

    def finish(self) -> None:
        self._drain(None, final=True)
        self.flush()

    def flush(self) -> None:
        """Hand the kept rows to the writer as columns, numbers converted in bulk."""
        c = self.counts
        c.seen = sum(n for _name, _kworker, _kept, n in self._comms.values())
        c.kworker = sum(n for _name, kworker, _kept, n in self._comms.values() if kworker)
        if not self.rows:
            return
        cols = dict(zip(("issue_ns", "complete_ns", "sector", "nr", "op", "pid", "comm",
                         "error", "key"), zip(*self.rows, strict=True), strict=True))
        self.rows = []
        del cols["key"]
        nr = np.array(cols.pop("nr")).astype(np.int64)
        cols["bytes"] = nr * 512
        for name in ("sector", "pid", "error"):
            cols[name] = np.array(cols[name]).astype(np.int64)
        ops = np.array([int(o) for o in cols["op"]], dtype=np.uint8)
        cols["op"] = ops
        cols["comm"] = [b.decode(errors="replace") for b in cols["comm"]]
        for o in Op:
            mask = ops == o
            c.by_op[o.name] += int(mask.sum())
            c.sectors_by_op[o.name] += int(nr[mask].sum())
        c.kept += len(ops)
        self.emit(cols)


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


def record(instance, seconds: float, step_s: float, keep: Callable[[str], bool],
           emit: Callable[[dict], None], poll_s: float = 0.02) -> Recorded:
    """Trace for `seconds`, streaming trace_pipe (digest §7: streaming kept every event
    where a post-run read of `trace` lost most), pairing and emitting rows as they come.
    Lost events are read from the ring buffer's stats at every step boundary."""
    started_unix = time.time()
    start_ns = instance.start()
    pairing = Pairing(start_ns, keep, emit)
    steps = max(1, -(-int(seconds * 1e9) // int(step_s * 1e9)))
    lost_by_step, lost_before = [], instance.lost()
    end_ns = start_ns + int(seconds * 1e9)
    rest, stopped = b"", False
    while True:
        now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        boundary = start_ns + int((len(lost_by_step) + 1) * step_s * 1e9)
        if now >= min(boundary, end_ns) and len(lost_by_step) < steps - 1:
            lost_now = instance.lost()
            lost_by_step.append(lost_now - lost_before)
            lost_before = lost_now
        if now >= end_ns and not stopped:
            instance.stop()
            stopped = True
        data = instance.read()
        if data:
            rest += data
            cut = rest.rfind(b"\n") + 1
            if cut:
                pairing.feed(rest[:cut])
                rest = rest[cut:]
            continue
        if now >= end_ns:       # stopped and drained
            break
        pairing.tick(now - start_ns)
        time.sleep(poll_s)
    lost_by_step += [0] * (steps - 1 - len(lost_by_step))   # steps shorter than a poll
    lost_by_step.append(instance.lost() - lost_before)
    pairing.finish()
    lost = sum(lost_by_step)
    return Recorded(start_ns, started_unix, seconds, lost, tuple(lost_by_step), pairing.counts)
