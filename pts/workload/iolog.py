"""A replay step as a suite-generated fio iolog (rwsw-digest §8 "iolog replay, closed loop"):
ONE fio job reading it with `read_iolog` + `replay_no_stall=1` at `iodepth` = the step's OIO
issues exactly the logged I/O sequence at exactly that depth, so the step holds both its OIO
and its stream shares (the "iolog" hold of [rwsw_replay], pts.testdefs.rwsw_replay).

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
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from pts.workload import applied
from pts.workload.atw import Stream

HEADER = "fio version 2 iolog"
LINE_BYTES = 40                  # about, a line: "/dev/nvme0n1 write 1099511623680 4096"
_CHUNK = 1 << 16                 # lines formatted and written at a time (bounded memory)


def choices(shares: list[float], n: int, seed: int) -> np.ndarray:
    """The stream (index into `shares`) of each of `n` I/Os: independent draws with
    probabilities share / sum(shares) from numpy's default generator seeded `seed`."""
    p = np.asarray(shares, dtype=float)
    if n < 1 or not len(p) or (p < 0).any() or p.sum() <= 0:
        raise ValueError(f"iolog of {n} I/Os over shares {shares}: need n >= 1 and a "
                         "positive share")
    return np.random.default_rng(seed).choice(len(p), size=n, p=p / p.sum())


def prefix_counts(shares: list[float], n: int, seed: int, done: int) -> list[int]:
    """How many of the log's first `done` I/Os each stream has (the log fio completed)."""
    picked = choices(shares, n, seed)[:max(0, min(done, n))]
    return np.bincount(picked, minlength=len(shares)).tolist()


def offsets(streams: tuple[Stream, ...], picked: np.ndarray, ar_bytes: int, sector: int,
            seed: int) -> np.ndarray:
    """Each I/O's byte offset: RND uniform over the ActiveRange on multiples of
    lcm(transfer size, sector); SEQ continuing in its own region, wrapping at its end."""
    rng = np.random.default_rng([seed, 1])       # independent of the stream draws
    out = np.zeros(len(picked), dtype=np.int64)
    seq = [s for s in streams if s.key.access == "SEQ"]
    region = applied.seq_region(ar_bytes, len(seq))
    for k, s in enumerate(streams):
        where = np.flatnonzero(picked == k)
        size = s.key.size
        if s.key.access == "RND":
            align = math.lcm(size, sector)
            slots = (ar_bytes - size) // align + 1
            if slots < 1:
                raise applied.ApplyError(f"{s.key.label}: ActiveRange of {ar_bytes:,} bytes "
                                         "is smaller than its transfer size")
            out[where] = rng.integers(0, slots, size=len(where)) * align
        else:
            per = region // size
            if per < 1:
                raise applied.ApplyError(
                    f"the region of {s.key.label} ({region:,} bytes) is smaller than its "
                    "transfer size; use a larger device or ActiveRange")
            out[where] = seq.index(s) * region + (np.arange(len(where)) % per) * size
    return out


def write(path: Path, filename: str, streams: tuple[Stream, ...], n: int, seed: int,
          ar_bytes: int, sector: int) -> None:
    """Write the step's iolog of `n` I/Os on device `filename` to `path` (atomically)."""
    picked = choices([s.share_pct for s in streams], n, seed)
    where = offsets(streams, picked, ar_bytes, sector, seed)
    ops = np.array([f"{filename} {'read' if s.key.direction == 'R' else 'write'} "
                    for s in streams])
    sizes = np.array([f" {s.key.size}\n" for s in streams])
    tmp = Path(path).with_suffix(".part")
    tmp.parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "w") as fh:
        fh.write(f"{HEADER}\n{filename} add\n{filename} open\n")
        for a in range(0, n, _CHUNK):
            k, off = picked[a:a + _CHUNK], where[a:a + _CHUNK]
            fh.write("".join(np.char.add(np.char.add(ops[k], off.astype(str)), sizes[k])))
        fh.write(f"{filename} close\n")
    tmp.replace(path)


def length(seconds: int, iops_bound: int) -> int:
    """The I/Os a step's log holds: its seconds at the IOPS upper bound."""
    return max(1, seconds * iops_bound)


def exhausted(total_ios: int, n: int) -> bool:
    """fio completed the whole log: the step ran out of I/Os before its runtime."""
    return total_ios >= n


DIRECTIONS = (("read", "R"), ("write", "W"))


def directions(streams: tuple[Stream, ...], counts: list[int], summary, oio: int) -> list[dict]:
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
        out.append({"direction": name, "log_ios": ios, "fio_ios": fio.total_ios,
                    "log_bytes": size, "fio_bytes": fio.io_bytes,
                    "match": abs(ios - fio.total_ios) <= (oio if mine else 0)
                    and abs(size - fio.io_bytes) <= slack})
    return out
