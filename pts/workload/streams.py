"""IO streams: each read or write of a capture as (RND|SEQ, R|W, transfer size).

The sequential rule is a reading (specs/rwsw-*.toml [rwsw_capture], rwsw-digest §3: the
spec's rule was not found): "previous-end" — an I/O is SEQ when it starts at the sector
where the previous I/O of the same direction ended; `seq_scope = "device"` compares with the
previous one on the device, `"process"` with the previous one of the same pid. "Previous"
is the previous row of the capture file, whose rows are in issue order (the capture writes
them so). The first I/O of a direction (of a pid) has no previous one: RND.

Flush, discard and other operations, and reads/writes of zero bytes, are never streams:
`Classifier.classify` marks them out and the characteriser counts them apart.

Vectorised with numpy; the previous end is carried from one batch to the next, so a capture
is classified batch by batch with the same answer as in one piece. A stream is coded as one
int64 (`code`), size << 2 | direction << 1 | seq, so counting is a bincount/unique over ints.
"""

from __future__ import annotations

import numpy as np

from pts.workload.atw import StreamKey
from pts.workload.events import Op

SECTOR = 512                 # the capture's sector unit (events.SCHEMA: 512-byte sectors)
RULES = ("previous-end",)
SCOPES = ("device", "process")
NO_END = -1                  # no previous I/O: nothing starts at sector -1


def code(seq: np.ndarray, direction: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Stream codes of arrays (seq: bool, direction: 0 read / 1 write, size: bytes)."""
    return (size.astype(np.int64) << 2) | (direction.astype(np.int64) << 1) | seq.astype(np.int64)


def key(stream_code: int) -> StreamKey:
    c = int(stream_code)
    return StreamKey("SEQ" if c & 1 else "RND", "W" if c & 2 else "R", c >> 2)


class Classifier:
    """Classifies the batches of one capture, in file order (the state carried between
    batches is each direction's previous end, per pid when the scope is "process")."""

    def __init__(self, rule: str = "previous-end", scope: str = "device"):
        if rule not in RULES:
            raise ValueError(f"sequential rule {rule!r} is not supported (supported: {RULES})")
        if scope not in SCOPES:
            raise ValueError(f"sequential scope {scope!r}: one of {SCOPES}")
        self.rule, self.scope = rule, scope
        self._end = {Op.READ: NO_END, Op.WRITE: NO_END}           # scope "device"
        self._end_pid: dict[tuple[int, int], int] = {}             # scope "process"

    def classify(self, op: np.ndarray, sector: np.ndarray, nbytes: np.ndarray,
                 pid: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(mask, codes): mask marks the rows that are reads or writes of > 0 bytes (the
        stream rows); codes holds the stream code of each of them, in row order."""
        mask = ((op == Op.READ) | (op == Op.WRITE)) & (nbytes > 0)
        seq = np.zeros(len(op), dtype=bool)
        ends = sector + nbytes // SECTOR
        for direction in (Op.READ, Op.WRITE):
            rows = np.flatnonzero(mask & (op == direction))
            if not len(rows):
                continue
            if self.scope == "device":
                seq[rows] = self._seq_device(direction, sector[rows], ends[rows])
            else:
                if pid is None:
                    raise ValueError("seq_scope 'process' needs the pid column")
                seq[rows] = self._seq_process(direction, sector[rows], ends[rows], pid[rows])
        rows = np.flatnonzero(mask)
        return mask, code(seq[rows], op[rows] == Op.WRITE, nbytes[rows])

    def _seq_device(self, direction: int, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        previous = np.empty_like(ends)
        previous[0] = self._end[direction]
        previous[1:] = ends[:-1]
        self._end[direction] = int(ends[-1])
        return starts == previous

    def _seq_process(self, direction: int, starts: np.ndarray, ends: np.ndarray,
                     pid: np.ndarray) -> np.ndarray:
        order = np.argsort(pid, kind="stable")       # each pid's I/Os, still in file order
        p, s, e = pid[order], starts[order], ends[order]
        previous = np.empty_like(e)
        previous[1:] = e[:-1]
        first = np.ones(len(p), dtype=bool)
        first[1:] = p[1:] != p[:-1]
        last = np.ones(len(p), dtype=bool)
        last[:-1] = first[1:]
        for i in np.flatnonzero(first):
            previous[i] = self._end_pid.get((direction, int(p[i])), NO_END)
        for i in np.flatnonzero(last):
            self._end_pid[(direction, int(p[i]))] = int(e[i])
        seq = np.empty(len(p), dtype=bool)
        seq[order] = s == previous
        return seq
