"""The footprint of a capture: which LBAs its reads and writes touched, and how concentrated
its I/Os are, in bounded memory.

Granularity: the device is cut into chunks of `CHUNK` (1 MiB) — a chunk is "touched" when any
byte of it is read or written — with at most `MAX_CHUNKS` chunks held (a uint32 I/O count and a
touched flag each: 40 MiB at most). A device larger than MAX_CHUNKS x 1 MiB (8 TiB), or a
span that grows past it, doubles the chunk until it fits; the chunk used is reported.

- touched %: touched chunks / the device's chunks when the capture knows the device's size
  (CaptureInfo.capacity_bytes; basis "capacity"), else / the chunks between the lowest and
  the highest touched one (basis "span": the capture cannot tell how large the device is).
- hottest 1 %: the share of I/Os that start in the hottest 1 % of touched chunks (at least
  one chunk), ranked by I/Os starting there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

CHUNK = 1 << 20
MAX_CHUNKS = 1 << 23
SECTOR = 512
HOT_FRACTION = 0.01


@dataclass(frozen=True)
class Footprint:
    chunk_bytes: int             # granularity
    basis: str                   # "capacity" | "span"
    touched_chunks: int
    chunks: int                  # the denominator: the device's chunks, or the span's
    touched_pct: float
    hottest_1pct_share_pct: float    # of I/Os, in the hottest 1 % of touched chunks


class FootprintCounter:
    def __init__(self, capacity_bytes: int | None = None):
        self.capacity = capacity_bytes if capacity_bytes and capacity_bytes > 0 else None
        self.chunk = CHUNK
        n = 0
        if self.capacity:
            while math.ceil(self.capacity / self.chunk) > MAX_CHUNKS:
                self.chunk *= 2
            n = math.ceil(self.capacity / self.chunk)
        self.counts = np.zeros(n, np.uint32)
        self.touched = np.zeros(n, bool)

    def _fit(self, last: int) -> int:
        """Makes room for chunk index `last` (coarsening past MAX_CHUNKS); returns the
        factor the indices computed with the old chunk must be divided by."""
        factor = 1
        while last // factor >= MAX_CHUNKS:
            factor *= 2
            if len(self.counts) % 2:
                self.counts = np.append(self.counts, np.uint32(0))
                self.touched = np.append(self.touched, False)
            self.counts = self.counts.reshape(-1, 2).sum(axis=1, dtype=np.uint32)
            self.touched = self.touched.reshape(-1, 2).any(axis=1)
            self.chunk *= 2
        need = last // factor + 1
        if need > len(self.counts):
            grow = max(need, min(MAX_CHUNKS, 2 * len(self.counts))) - len(self.counts)
            self.counts = np.concatenate([self.counts, np.zeros(grow, np.uint32)])
            self.touched = np.concatenate([self.touched, np.zeros(grow, bool)])
        return factor

    def add(self, sector: np.ndarray, nbytes: np.ndarray) -> None:
        if not len(sector):
            return
        start = sector * SECTOR
        first = start // self.chunk
        last = (start + np.maximum(nbytes, 1) - 1) // self.chunk
        factor = self._fit(int(last.max()))
        if factor > 1:
            first, last = first // factor, last // factor
        chunks, n = np.unique(first, return_counts=True)
        self.counts[chunks] += n.astype(np.uint32)
        self.touched[chunks] = True
        wide = np.flatnonzero(last > first)
        if len(wide):           # I/Os over several chunks touch each of them
            spans = (last[wide] - first[wide]).astype(np.int64)
            base = np.repeat(first[wide] + 1, spans)
            offset = np.arange(spans.sum()) - np.repeat(np.cumsum(spans) - spans, spans)
            self.touched[base + offset] = True

    def result(self) -> Footprint:
        idx = np.flatnonzero(self.touched)
        touched = len(idx)
        if self.capacity:
            basis, chunks = "capacity", math.ceil(self.capacity / self.chunk)
        else:
            basis, chunks = "span", int(idx[-1] - idx[0] + 1) if touched else 0
        total = int(self.counts.sum(dtype=np.int64))
        hot = 0.0
        if touched and total:
            k = max(1, math.ceil(touched * HOT_FRACTION))
            top = np.partition(self.counts, len(self.counts) - k)[-k:]
            hot = 100 * int(top.sum(dtype=np.int64)) / total
        return Footprint(self.chunk, basis, touched, chunks,
                         100 * touched / chunks if chunks else 0.0, hot)
