"""Issue and completion events -> one row per I/O request, in issue order, in bulk (numpy).

Events come as columns (`ringbuf.decode` for a live capture, `parse_text` for trace text,
the blkparse import): t (ns), issue (bool), pid, sector, nr (sectors), rwbs, comm, error.
A completion pairs with the earliest outstanding issue of the same (sector, nr, operation)
before it (rwsw-digest §7); flushes have no sector (issued "0 + 0", completed at 2^64-1) and
pair in order. A completion with no issue before it is held for one more batch (the CPUs'
buffers are read one after the other, so an issue on one CPU may be read after its
completion on another), then counted as unmatched: requests issued before the start, and the
flush machinery's second completion of a write ("+ 0"). Rows leave in issue order once every
earlier request has completed; a request still open STALE_NS after its issue (or at the end)
leaves without a completion (NO_TIME). Memory: the outstanding requests and one batch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from pts.workload.capture import ringbuf, writeback
from pts.workload.capture.events import NO_TIME, Op

STALE_NS = 30 * 10**9        # choice: a request not completed in 30 s is written without
KWORKER = "kworker/"         # the kernel's worker threads (writeback, flush, kblockd)
# rwbs letters (blk_fill_rwbs): an optional leading F (preflush), then the operation
# (R read, W write, D discard, DE secure erase, F flush, N other e.g. write-zeroes), then
# flags (F fua, A readahead, S sync, M meta): "WS", "RM", "FWS" (a write), "FF" (a flush).
OPS = {"R": Op.READ, "W": Op.WRITE, "D": Op.DISCARD, "F": Op.FLUSH}
# A trace_pipe line (format files of block_rq_issue/complete, 6.x):
#   fio-24537   [001] ..... 11808.135711: block_rq_issue: 7,0 R 4096 () 68568 + 8 be,0,4 [fio]
#   ksoftirqd/1-22 [001] ..s.. 11808.137263: block_rq_complete: 7,0 R () 68568 + 8 be,0,4 [0]
# issue has `bytes` after rwbs and ends with [comm]; complete ends with [error]. The ioprio
# field ("be,0,4") is absent on older kernels, the flags field ("....") without irq-info.
LINE = re.compile(
    rb"^ *.*?-(\d+) +\[\d+\] +(?:\S+ +)?(\d+\.\d+): block_rq_(i|c)\w+: "
    rb"\d+,\d+ (\S+) (?:\d+ )?\(.*?\) (\d+) \+ (\d+)(?: \S+)? \[(.*)\]$", re.M)
ROW = ("t", "tc", "sector", "nr", "op", "pid", "comm", "error", "dpid", "why")


def op_of(rwbs: str) -> Op:
    """The operation of a kernel (or blkparse) rwbs string."""
    body = rwbs[1:] if rwbs[:1] == "F" and rwbs[1:2] in ("R", "W", "D", "F", "N") else rwbs
    if rwbs[:1] == "F" and body[:1] == "N":
        return Op.FLUSH          # blkparse's own rwbs writes an empty flush as "FN"
    if body.startswith("DE"):
        return Op.OTHER          # secure erase
    return OPS.get(body[:1], Op.OTHER)


def parse_text(data: bytes) -> tuple[dict[str, np.ndarray], int]:
    """Whole lines of trace_pipe text -> (event columns, lines that are not events)."""
    found = LINE.findall(data)
    unparsed = data.count(b"\n") - len(found)
    if not found:
        return events([], [], [], [], [], [], [], []), unparsed
    pid, ts, kind, rwbs, sector, nr, last = zip(*found, strict=True)
    issue = np.array(kind) == b"i"
    t = np.array([s.replace(b".", b"") for s in ts]).astype(np.int64) * 1000
    tail = np.array(last)
    error = np.zeros(len(t), np.int64)
    error[~issue] = tail[~issue].astype(np.int64)
    comm = np.where(issue, tail, b"").astype("S16")
    sector = np.array(sector).astype(np.uint64).view(np.int64)
    return events(t, issue, np.array(pid).astype(np.int64), sector,
                  np.array(nr).astype(np.int64), np.array(rwbs, dtype="S10"), comm,
                  error), unparsed


def events(t, issue, pid, sector, nr, rwbs, comm, error) -> dict[str, np.ndarray]:
    return {"t": np.asarray(t, np.int64), "issue": np.asarray(issue, bool),
            "pid": np.asarray(pid, np.int64), "sector": np.asarray(sector, np.int64),
            "nr": np.asarray(nr, np.int64), "rwbs": np.asarray(rwbs, "S10"),
            "comm": np.asarray(comm, "S16"), "error": np.asarray(error, np.int64)}


@dataclass
class Counts:
    """What the capture saw, for its descriptor and the summary."""
    seen: int = 0                # requests issued (before --process)
    kworker: int = 0             # of which issued by a kworker thread
    kept: int = 0                # rows written
    by_op: dict[str, int] = field(default_factory=lambda: {o.name: 0 for o in Op})
    sectors_by_op: dict[str, int] = field(default_factory=lambda: {o.name: 0 for o in Op})
    unmatched_completions: int = 0
    incomplete: int = 0          # rows written without a completion
    unparsed_lines: int = 0      # trace lines that are not block_rq events (text input)
    kworker_dropped: int = 0     # kworker requests --process dropped
    # buffered writeback (writeback.py): write requests of kworker and jbd2 threads, those
    # given a dirtier (by its name), the others by reason; all before --process
    writeback: int = 0
    by_dirtier: dict[str, int] = field(default_factory=dict)
    not_attributable: dict[str, int] = field(default_factory=dict)


def _take(cols: dict, idx) -> dict:
    return {k: v[idx] for k, v in cols.items()}


def _cat(a: dict, b: dict) -> dict:
    return {k: np.concatenate([a[k], b[k]]) for k in a}


def _group_cumsum(values: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Cumulative sum of `values` restarting where `start` is True."""
    total = np.cumsum(values)
    base = np.maximum.accumulate(np.where(start, total - values, 0))
    return total - base


class Pairing:
    def __init__(self, start_ns: int, keep: Callable[[str], bool],
                 emit: Callable[[dict], None],
                 attribution: writeback.Attribution | None = None):
        self.start_ns = start_ns
        self.keep = keep
        self.emit = emit
        self.attribution = attribution     # None: the source has no writeback events
        self.counts = Counts()
        self.held = {k: np.zeros(0, np.int64) for k in ROW} | {"comm": np.zeros(0, "S16")}
        self.orphans = {k: np.zeros(0, np.int64) for k in ("t", "sector", "nr", "op",
                                                         "error", "carried")}
        self._ops: dict[bytes, int] = {}
        self._comms: dict[bytes, tuple[str, bool, bool]] = {}

    def _op(self, rwbs: np.ndarray) -> np.ndarray:
        uniq, inverse = np.unique(rwbs, return_inverse=True)
        for u in uniq:
            if u not in self._ops:
                self._ops[u] = int(op_of(u.decode(errors="replace")))
        return np.array([self._ops[u] for u in uniq], np.int64)[inverse].reshape(-1)

    def feed(self, ev: dict[str, np.ndarray], now_ns: int | None = None,
             horizon_ns: int | None = None) -> None:
        """One batch of events (any order). `horizon_ns`: every event up to it has been
        read, on every CPU (None: not known; then an unmatched completion gets one more
        batch). `now_ns` (trace clock) lets overdue requests leave without a completion."""
        if "kind" in ev:          # a capture's: its attribution events go first
            rq = ev["kind"] <= ringbuf.COMPLETE
            if self.attribution is not None and not rq.all():
                self.attribution.feed(_take(ev, ~rq))
            ev = _take(ev, rq)
        if len(ev["t"]):
            op = self._op(ev["rwbs"])
            flush = op == Op.FLUSH
            sector = np.where(flush, 0, ev["sector"])
            nr = np.where(flush, 0, ev["nr"])
            i, c = ev["issue"], ~ev["issue"]
            new = {"t": ev["t"][i], "tc": np.full(i.sum(), NO_TIME, np.int64),
                   "sector": sector[i], "nr": nr[i], "op": op[i], "pid": ev["pid"][i],
                   "comm": ev["comm"][i], "error": np.zeros(i.sum(), np.int64),
                   "dpid": np.zeros(i.sum(), np.int64), "why": np.zeros(i.sum(), np.int64)}
            if self.attribution is not None:
                new["dpid"], new["why"] = self.attribution.issues(
                    new["t"], new["sector"], new["op"], new["comm"])
            held = _cat(self.held, new)
            self.held = _take(held, np.argsort(held["t"], kind="stable"))
            done = {"t": ev["t"][c], "sector": sector[c], "nr": nr[c], "op": op[c],
                    "error": ev["error"][c], "carried": np.zeros(c.sum(), np.int64)}
            self._match(_cat(self.orphans, done), horizon_ns)
        elif len(self.orphans["t"]):
            self._match(self.orphans, horizon_ns)
        self._release(now_ns, horizon_ns)

    def _match(self, done: dict, horizon_ns: int | None) -> None:
        """Pair completions with open issues. A completion after the horizon waits: an
        earlier request of the same key may still be unread on another CPU."""
        if horizon_ns is not None:
            later = done["t"] > horizon_ns
            wait, done = _take(done, later), _take(done, ~later)
        held = self.held
        open_ = np.flatnonzero(held["tc"] == NO_TIME)
        n_i, n = len(open_), len(open_) + len(done["t"])
        if not len(done["t"]):
            self.orphans = wait if horizon_ns is not None else done
            return
        cat = lambda name: np.concatenate([held[name][open_], done[name]])   # noqa: E731
        is_c = np.r_[np.zeros(n_i, bool), np.ones(n - n_i, bool)]
        order = np.lexsort((is_c, cat("t"), cat("nr"), cat("sector"), cat("op")))
        op, sector, nr = cat("op")[order], cat("sector")[order], cat("nr")[order]
        is_c = is_c[order]
        start = np.r_[True, (op[1:] != op[:-1]) | (sector[1:] != sector[:-1])
                      | (nr[1:] != nr[:-1])]
        gid = np.cumsum(start) - 1
        deficit = _group_cumsum(is_c.astype(np.int64), start) \
            - _group_cumsum((~is_c).astype(np.int64), start)
        h = n + 2
        run = np.maximum.accumulate(deficit + gid * h)
        before = np.maximum(np.r_[np.iinfo(np.int64).min, run[:-1]], gid * h)
        orphan = is_c & (deficit + gid * h > before)
        matched = is_c & ~orphan
        rank_c = _group_cumsum(matched.astype(np.int64), start) - 1
        rank_i = _group_cumsum((~is_c).astype(np.int64), start) - 1
        code_i = (gid * h + rank_i)[~is_c]
        where = np.searchsorted(code_i, (gid * h + rank_c)[matched])
        issue_rows = open_[order[~is_c][where]]
        comp = order[matched] - n_i
        held["tc"][issue_rows] = done["t"][comp]
        held["error"][issue_rows] = done["error"][comp]
        lost = order[orphan] - n_i
        # up to the horizon every issue has been read: an orphan there is final
        final = done["carried"][lost] == 1 if horizon_ns is None \
            else np.ones(len(lost), bool)
        again = lost[~final]
        self.counts.unmatched_completions += int(final.sum())
        self.orphans = _take(done, again)
        self.orphans["carried"] = np.ones(len(again), np.int64)
        if horizon_ns is not None:
            self.orphans = _cat(self.orphans, wait)

    def _release(self, now_ns: int | None, horizon_ns: int | None,
                 final: bool = False) -> None:
        held = self.held
        open_ = held["tc"] == NO_TIME
        if horizon_ns is not None and not final:     # an earlier issue may still come
            open_ = open_ | (held["t"] > horizon_ns)
        if final:
            stale = open_
        elif now_ns is not None:
            stale = open_ & (held["tc"] == NO_TIME) & (held["t"] < now_ns - STALE_NS)
        else:
            stale = np.zeros(len(open_), bool)
        waiting = np.flatnonzero(open_ & ~stale)
        cut = waiting[0] if len(waiting) else len(open_)
        self.counts.incomplete += int(stale[:cut].sum())
        out, self.held = _take(held, slice(0, cut)), _take(held, slice(cut, None))
        if cut:
            self._write(out)

    def finish(self) -> None:
        self._release(None, None, final=True)
        self.counts.unmatched_completions += len(self.orphans["t"])
        self.orphans = _take(self.orphans, slice(0, 0))

    def _write(self, rows: dict) -> None:
        c = self.counts
        uniq, inverse = np.unique(rows["comm"], return_inverse=True)
        info = []
        for u in uniq:
            if u not in self._comms:
                name = u.decode(errors="replace")
                self._comms[u] = (name, name.startswith(KWORKER), bool(self.keep(name)))
            info.append(self._comms[u])
        inverse = inverse.reshape(-1)
        kworker = np.array([k for _, k, _ in info], bool)[inverse]
        keep = np.array([k for _, _, k in info], bool)[inverse]
        dnames = np.full(len(keep), "", dtype=object)
        if self.attribution is not None:
            self._count_writeback(rows)
            who = rows["dpid"] > 0
            if who.any():
                uniq_d, inv_d = np.unique(rows["dpid"][who], return_inverse=True)
                found = self.attribution.comm_of(uniq_d)
                dnames[who] = np.array(found, dtype=object)[inv_d.reshape(-1)]
                hit = np.array([bool(n) and bool(self.keep(n)) for n in found],
                               bool)[inv_d.reshape(-1)]
                keep[np.flatnonzero(who)[hit]] = True    # its dirtier matches --process
        c.seen += len(keep)
        c.kworker += int(kworker.sum())
        c.kworker_dropped += int((kworker & ~keep).sum())
        rows = _take(rows, keep)
        dnames = dnames[keep]
        if not len(rows["t"]):
            return
        names = np.array([n for n, _, _ in info], dtype=object)[inverse[keep]]
        for o in Op:
            mask = rows["op"] == o
            c.by_op[o.name] += int(mask.sum())
            c.sectors_by_op[o.name] += int(rows["nr"][mask].sum())
        c.kept += len(rows["t"])
        self.emit({"issue_ns": rows["t"] - self.start_ns,
                   "complete_ns": np.where(rows["tc"] == NO_TIME, NO_TIME,
                                           rows["tc"] - self.start_ns),
                   "sector": rows["sector"], "bytes": rows["nr"] * 512,
                   "op": rows["op"].astype(np.uint8), "pid": rows["pid"],
                   "comm": list(names), "error": rows["error"],
                   "dirtier_pid": rows["dpid"], "dirtier_comm": list(dnames)})

    def _count_writeback(self, rows: dict) -> None:
        c = self.counts
        why = rows["why"]
        wb = why != writeback.NOT_WRITEBACK
        c.writeback += int(wb.sum())
        done = why == writeback.ATTRIBUTED
        if done.any():
            pids, n = np.unique(rows["dpid"][done], return_counts=True)
            for name, k in zip(self.attribution.comm_of(pids), n.tolist(), strict=True):
                name = name or "(unnamed)"
                c.by_dirtier[name] = c.by_dirtier.get(name, 0) + k
        for code, k in zip(*np.unique(why[wb & ~done], return_counts=True), strict=True):
            reason = writeback.REASONS[int(code)]
            c.not_attributable[reason] = c.not_attributable.get(reason, 0) + int(k)
