"""A replay step as a suite-generated fio iolog (rwsw-digest §8 "iolog replay, closed loop"):
ONE fio job reading it with `read_iolog` + `replay_no_stall=1` at `iodepth` = the step's OIO
issues exactly the logged I/O sequence at exactly that depth, so the step holds both its OIO
and its stream shares (the "iolog" hold of [rwsw_replay], pts.testdefs.rwsw.replay).

The log (fio iolog version 2): a random stream per I/O, drawn with the step's shares from a
seeded numpy generator (the seed is recorded in the run); RND offsets uniform over the
ActiveRange, aligned to the transfer size and the logical sector; SEQ streams each in its own
region (pts.workload.applied.seq_region, as the flow sections), every I/O continuing from the
stream's last end, back to the region's start at its end.

fio 3.33 does not loop an iolog: measured on this machine (1,000 logged I/Os, runtime 2 s)
the job ends when the log does, with `time_based=1` and with `loops=100000` alike (666 reads
+ 334 writes each time). So the log holds enough I/Os for the step at an upper bound of IOPS
([rwsw_replay] iolog_iops x the step's seconds) and fio's `runtime` stops it; a step that
completes the whole log ran out before its runtime (`exhausted`, warned). Because the log is
never looped, the I/Os fio completed are the log's first `total_ios` lines, and the shares
achieved are counted from that prefix (`prefix_counts`: the choices regenerated from the
seed, not read back), up to the OIO in flight when runtime ended. Those are the shares *of
the replayed log*: fio's one job cannot tell the streams apart, so what is measured is fio's
I/Os and bytes per direction, compared with the prefix's (`directions`): a log that is not
what fio issued (another seed, another file, a log fio read in part) shows there.

Made as it is replayed (issue 40 §3): a 5-minute step at 400,000 logged I/Os a second is
120 M lines (about 4.8 GB, and more of fio's memory if read at once), so a step's log is
never written whole. `StepLog.chunks` makes it _CHUNK lines at a time, the same bytes as the
whole log made at once (`write`, which the tests compare with the former all-at-once maker):
the stream draws of a prefix are the prefix of the draws (numpy's `choice` with `p` takes one
double per draw), and each RND stream's offsets come from the one offset generator in stream
order, so a stream's generator state is found once per step by drawing the streams before it
(`StepLog.prepare`, one pass over the log's draws in chunks, only when a step has two RND
streams or more). It is served to fio as it is made by pts.testdefs.rwsw.replay_feed.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pts.workload import applied
from pts.workload.atw import Stream

HEADER = "fio version 2 iolog"
LINE_BYTES = 40                  # about, a line: "/dev/nvme0n1 write 1099511623680 4096"
_CHUNK = 1 << 16                 # lines made at a time (bounded memory: a few MB a chunk)
_POW10 = 10 ** np.arange(1, 20, dtype=np.uint64)   # 10 .. 10^19: an offset's decimal digits


def choices(shares: list[float], n: int, seed: int) -> np.ndarray:
    """The stream (index into `shares`) of each of `n` I/Os: independent draws with
    probabilities share / sum(shares) from numpy's default generator seeded `seed`."""
    return np.concatenate(list(_choices(shares, n, seed)))


def _p(shares: list[float], n: int) -> np.ndarray:
    p = np.asarray(shares, dtype=float)
    if n < 1 or not len(p) or (p < 0).any() or p.sum() <= 0:
        raise ValueError(f"iolog of {n} I/Os over shares {shares}: need n >= 1 and a "
                         "positive share")
    return p / p.sum()


def _choices(shares: list[float], n: int, seed: int, chunk: int = _CHUNK):
    """`choices` in pieces of `chunk` draws: the same draws (each takes one double of the
    generator), never more than a chunk in memory."""
    p, rng = _p(shares, n), np.random.default_rng(seed)
    for a in range(0, n, chunk):
        yield rng.choice(len(p), size=min(chunk, n - a), p=p)


def prefix_counts(shares: list[float], n: int, seed: int, done: int) -> list[int]:
    """How many of the log's first `done` I/Os each stream has (the log fio completed):
    only those draws are made, in chunks."""
    _p(shares, n)
    counts = np.zeros(len(shares), dtype=np.int64)
    m = max(0, min(done, n))
    if m:
        for picked in _choices(shares, m, seed, 1 << 20):
            counts += np.bincount(picked, minlength=len(shares))
    return counts.tolist()


class StepLog:
    """One step's iolog of `n` I/Os on device `filename`: `streams` at their shares, seed
    `seed`, RND offsets over `ar_bytes` on multiples of lcm(transfer size, `sector`), SEQ in
    their regions; made in chunks (`chunks`), never whole."""

    def __init__(self, filename: str, streams: tuple[Stream, ...], n: int, seed: int,
                 ar_bytes: int, sector: int):
        self.filename, self.streams, self.n, self.seed = filename, streams, n, seed
        self.ar_bytes, self.sector = ar_bytes, sector
        _p([s.share_pct for s in streams], n)
        seq = [s for s in streams if s.key.access == "SEQ"]
        self.region = applied.seq_region(ar_bytes, len(seq))
        self.layout = []          # per stream: ("RND", align, slots) or ("SEQ", base, per)
        for s in streams:
            size = s.key.size
            if s.key.access == "RND":
                align = math.lcm(size, sector)
                slots = (ar_bytes - size) // align + 1
                if slots < 1:
                    raise applied.ApplyError(f"{s.key.label}: ActiveRange of {ar_bytes:,} "
                                             "bytes is smaller than its transfer size")
                self.layout.append(("RND", align, slots))
            else:
                per = self.region // size
                if per < 1:
                    raise applied.ApplyError(
                        f"the region of {s.key.label} ({self.region:,} bytes) is smaller "
                        "than its transfer size; use a larger device or ActiveRange")
                self.layout.append(("SEQ", seq.index(s) * self.region, per))
        op = {"R": "read", "W": "write"}
        self._pre = [f"{filename} {op[s.key.direction]} ".encode() for s in streams]
        self._suf = [f" {s.key.size}\n".encode() for s in streams]
        self.states: list[dict | None] | None = None

    @property
    def rnd(self) -> list[int]:
        return [k for k, (kind, *_) in enumerate(self.layout) if kind == "RND"]

    def prepare(self) -> StepLog:
        """Each RND stream's offset generator state (stream order: the first RND stream's is
        the generator's start; a later one's follows the draws of the RND streams before it,
        found by counting the step's stream draws in chunks). Cheap with one RND stream."""
        if self.states is not None:
            return self
        rng = np.random.default_rng([self.seed, 1])       # independent of the stream draws
        rnd = self.rnd
        counts = np.zeros(len(self.streams), dtype=np.int64)
        if len(rnd) > 1:
            for picked in _choices([s.share_pct for s in self.streams], self.n, self.seed,
                                   1 << 20):
                counts += np.bincount(picked, minlength=len(self.streams))
        states: list[dict | None] = [None] * len(self.streams)
        for j, k in enumerate(rnd):
            states[k] = rng.bit_generator.state
            if j + 1 < len(rnd):                          # advance past stream k's draws
                slots = self.layout[k][2]
                for a in range(0, int(counts[k]), 1 << 20):
                    rng.integers(0, slots, size=min(1 << 20, int(counts[k]) - a))
        self.states = states
        return self

    def head(self) -> bytes:
        return f"{HEADER}\n{self.filename} add\n{self.filename} open\n".encode()

    def tail(self) -> bytes:
        return f"{self.filename} close\n".encode()

    def chunks(self, chunk: int = _CHUNK):
        """The log's bytes: its head, then `chunk` lines at a time, then its close line."""
        self.prepare()
        gens = [None if st is None else np.random.Generator(np.random.PCG64())
                for st in self.states]
        for g, st in zip(gens, self.states, strict=True):
            if g is not None:
                g.bit_generator.state = st
        seen = np.zeros(len(self.streams), dtype=np.int64)
        yield self.head()
        for picked in _choices([s.share_pct for s in self.streams], self.n, self.seed, chunk):
            off = np.zeros(len(picked), dtype=np.int64)
            for k, (kind, a, b) in enumerate(self.layout):
                where = np.flatnonzero(picked == k)
                if not len(where):
                    continue
                if kind == "RND":
                    off[where] = gens[k].integers(0, b, size=len(where)) * a
                else:
                    size = self.streams[k].key.size
                    off[where] = a + ((seen[k] + np.arange(len(where))) % b) * size
                seen[k] += len(where)
            yield _lines(self._pre, self._suf, picked, off)
        yield self.tail()


def _lines(pre: list[bytes], suf: list[bytes], picked: np.ndarray, off: np.ndarray) -> bytes:
    """PRE[k] + decimal offset + SUF[k] for each I/O, as one byte string (vectorised: a
    line's parts placed in one uint8 array, its offset's digits one decimal place a pass)."""
    off = off.astype(np.uint64)
    digits = 1 + np.searchsorted(_POW10, off, side="right")
    lp = np.array([len(x) for x in pre])[picked]
    ls = np.array([len(x) for x in suf])[picked]
    size = lp + digits + ls
    end = np.cumsum(size)
    start = end - size
    out = np.empty(int(end[-1]), dtype=np.uint8)
    for k in range(len(pre)):
        rows = start[picked == k]
        if not len(rows):
            continue
        for part, at in ((pre[k], rows), (suf[k], None)):
            b = np.frombuffer(part, dtype=np.uint8)
            if at is None:
                at = end[picked == k] - len(b)
            out[at[:, None] + np.arange(len(b))] = b
    last = start + lp + digits - 1                         # the offset's units digit
    rest = off.copy()
    for d in range(int(digits.max())):
        live = digits > d
        out[last[live] - d] = (rest[live] % 10).astype(np.uint8) + ord("0")
        rest //= 10
    return out.tobytes()


def write(path: Path, filename: str, streams: tuple[Stream, ...], n: int, seed: int,
          ar_bytes: int, sector: int) -> None:
    """Write the step's iolog of `n` I/Os on device `filename` to `path` (atomically): the
    bytes `StepLog.chunks` streams (the replay itself never writes one: `Feed`)."""
    tmp = Path(path).with_suffix(".part")
    tmp.parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "wb") as fh:
        for piece in StepLog(filename, streams, n, seed, ar_bytes, sector).chunks():
            fh.write(piece)
    tmp.replace(path)


def length(seconds: int, iops_bound: int) -> int:
    """The I/Os a step's log holds: its seconds at the IOPS upper bound."""
    return max(1, seconds * iops_bound)


def exhausted(total_ios: int, n: int) -> bool:
    """fio completed the whole log: the step ran out of I/Os before its runtime."""
    return total_ios >= n


DIRECTIONS = (("read", "R"), ("write", "W"))


@dataclass(frozen=True)
class Direction:
    """One direction of a replayed step: the log's completed prefix beside fio's own."""
    direction: str                   # "read" / "write"
    log_ios: int
    fio_ios: int
    log_bytes: int
    fio_bytes: int
    match: bool                      # they agree to the I/Os in flight when runtime ended


def compared(streams: tuple[Stream, ...], counts: list[int], summary, oio: int
             ) -> list[Direction]:
    """Per direction: the I/Os and bytes of the log's completed prefix (each stream's
    `counts` x its transfer size) beside fio's own (`summary`: its read and write total_ios
    and io_bytes), and whether they agree to the I/Os in flight when runtime ended (`oio`
    of them, each at most the direction's largest transfer)."""
    out = []
    for name, d in DIRECTIONS:
        mine = [(n, s.key.size) for s, n in zip(streams, counts, strict=True)
                if s.key.direction == d]
        ios, size = sum(n for n, _ in mine), sum(n * b for n, b in mine)
        fio = getattr(summary, name)
        slack = oio * max((b for _, b in mine), default=0)
        out.append(Direction(name, ios, fio.total_ios, size, fio.io_bytes,
                             abs(ios - fio.total_ios) <= (oio if mine else 0)
                             and abs(size - fio.io_bytes) <= slack))
    return out


def directions(streams: tuple[Stream, ...], counts: list[int], summary, oio: int) -> list[dict]:
    """`compared` as the point record keeps it ("log_vs_fio": one object per direction)."""
    return [dataclasses.asdict(row) for row in compared(streams, counts, summary, oio)]
