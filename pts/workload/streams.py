"""IO streams: each read or write of a capture as (RND|SEQ, R|W, transfer size).

The sequential rule is a reading (specs/rwsw-*.toml [rwsw_capture], rwsw-digest §3: the
spec's rule was not found). Both rules compare an I/O's start sector with the sectors where
earlier I/Os of the *same direction* ended, in the capture's row order (rows are in issue
order: the capture writes them so):

- "recent-ends" (window N = `seq_window`): SEQ when the I/O starts where one of the last N
  I/Os of its direction ended. Several streams issued at once (a database's log writes among
  its page writes, fio jobs side by side) interleave on the device; a stream's next I/O then
  follows its previous one with the other streams' I/Os in between, and stays SEQ as long
  as fewer than N of them came between (rwsw-digest §3's "within a window of N previous
  I/Os"). Ends are not consumed: a random I/O that happens to start where another stream's
  I/O ended counts SEQ itself (its address continues that I/O; no rule over addresses can
  tell chance from intent) and leaves the other stream's next I/O SEQ still.
- "previous-end": the same with N = 1: SEQ only when the I/O starts where the one previous
  I/O of its direction ended. Interleaved streams break it (issue 40 §1).

`seq_scope = "device"` looks at the I/Os of the device, `"process"` at those of the same pid.
The first I/O of a direction (of a pid) has no earlier one: RND.

Flush, discard and other operations, and reads/writes of zero bytes, are never streams:
`Classifier.classify` marks them out and the characteriser counts them apart.

Vectorised with numpy (one comparison per position of the window); the last N ends are
carried from one batch to the next, so a capture is classified batch by batch with the same
answer as in one piece. A stream is coded as one int64 (`code`), size << 2 | direction << 1
| seq, so counting is a bincount/unique over ints.
"""

from __future__ import annotations

import numpy as np

from pts.workload.atw import StreamKey
from pts.workload.capture.events import Op

SECTOR = 512                 # the capture's sector unit (events.SCHEMA: 512-byte sectors)
RULES = ("recent-ends", "previous-end")
SCOPES = ("device", "process")
NO_END = -1                  # no earlier I/O: nothing starts at sector -1


def code(seq: np.ndarray, direction: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Stream codes of arrays (seq: bool, direction: 0 read / 1 write, size: bytes)."""
    return (size.astype(np.int64) << 2) | (direction.astype(np.int64) << 1) | seq.astype(np.int64)


def key(stream_code: int) -> StreamKey:
    c = int(stream_code)
    return StreamKey("SEQ" if c & 1 else "RND", "W" if c & 2 else "R", c >> 2)


def describe(rule: str, scope: str, window: int) -> str:
    """The rule as the card and the ATW's provenance write it."""
    n = f" N={window}" if rule == "recent-ends" else ""
    return f"{rule}{n}, {scope}"


class Classifier:
    """Classifies the batches of one capture, in file order (the state carried between
    batches: each direction's last N ends, per pid when the scope is "process")."""

    def __init__(self, rule: str = "recent-ends", scope: str = "device", window: int = 1):
        if rule not in RULES:
            raise ValueError(f"sequential rule {rule!r} is not supported (supported: {RULES})")
        if scope not in SCOPES:
            raise ValueError(f"sequential scope {scope!r}: one of {SCOPES}")
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"sequential window {window!r}: a whole number of I/Os >= 1")
        self.rule, self.scope = rule, scope
        self.window = 1 if rule == "previous-end" else window
        self._ends: dict[tuple[int, int], np.ndarray] = {}   # (direction, pid or 0) -> ends
        # SEQ I/Os classified so far, by rule (describe()): this rule's, and previous-end's
        # too (the window's nearest end: no extra pass), for the card's comparison
        self.seq_ios: dict[str, int] = {self.label: 0, describe("previous-end", scope, 1): 0}

    @property
    def label(self) -> str:
        return describe(self.rule, self.scope, self.window)

    def classify(self, op: np.ndarray, sector: np.ndarray, nbytes: np.ndarray,
                 pid: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(mask, codes): mask marks the rows that are reads or writes of > 0 bytes (the
        stream rows); codes holds the stream code of each of them, in row order."""
        mask = ((op == Op.READ) | (op == Op.WRITE)) & (nbytes > 0)
        seq = np.zeros(len(op), dtype=bool)
        seq1 = np.zeros(len(op), dtype=bool)            # previous-end's answer
        ends = sector + nbytes // SECTOR
        if self.scope == "process" and pid is None:
            raise ValueError("seq_scope 'process' needs the pid column")
        for direction in (Op.READ, Op.WRITE):
            rows = np.flatnonzero(mask & (op == direction))
            if len(rows):
                group = pid[rows] if self.scope == "process" else np.zeros(len(rows), np.int64)
                seq[rows], seq1[rows] = self._seq(int(direction), sector[rows], ends[rows],
                                                  group)
        self.seq_ios[self.label] += int(seq.sum())
        self.seq_ios[describe("previous-end", self.scope, 1)] += int(seq1.sum())
        rows = np.flatnonzero(mask)
        return mask, code(seq[rows], op[rows] == Op.WRITE, nbytes[rows])

    def _seq(self, direction: int, starts: np.ndarray, ends: np.ndarray,
             group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row: starts where one of the last N ends of its group (this batch's earlier
        rows, then the ends carried from earlier batches) ended; and where the last one did.

        Each group's rows are laid out after its N carried ends in one array (`ext`), so
        the end k rows back is `ext` shifted by k, for every group at once (a slice)."""
        n = self.window
        if self.scope == "device":                      # one group: slices, no reordering
            ext = np.concatenate([self._ends.get((direction, 0), np.full(n, NO_END)), ends])
            found = starts == ext[n - 1:-1]
            nearest = found.copy()
            for k in range(2, n + 1):
                found |= starts == ext[n - k:len(ext) - k]
            self._ends[(direction, 0)] = ext[-n:].copy()
            return found, nearest
        order = _by_group(group)
        g, s, e = group[order], starts[order], ends[order]
        first = np.ones(len(g), dtype=bool)
        first[1:] = g[1:] != g[:-1]
        head = np.flatnonzero(first)                    # each group's first row
        gi = np.cumsum(first) - 1                       # row -> its group's index
        pos = np.arange(len(g)) + (gi + 1) * n          # row -> its place in ext
        ext = np.empty(len(g) + len(head) * n, np.int64)
        mine = np.full(len(ext), NO_END - 1)            # starts; no end is NO_END - 1
        for j, x in enumerate(g[head].tolist()):        # the ends carried, oldest first
            at = head[j] + j * n
            ext[at:at + n] = self._ends.get((direction, int(x)), np.full(n, NO_END))
        ext[pos], mine[pos] = e, s
        found = np.zeros(len(ext), dtype=bool)
        for k in range(1, n + 1):                       # the end k rows back
            found[k:] |= mine[k:] == ext[:-k]
            if k == 1:
                nearest = found[pos]
        tail = np.append(head[1:], len(g)) + np.arange(1, len(head) + 1) * n
        for j, x in enumerate(g[head].tolist()):        # carry each group's last n ends
            self._ends[(direction, int(x))] = ext[tail[j] - n:tail[j]].copy()
        seq, seq1 = np.empty(len(g), dtype=bool), np.empty(len(g), dtype=bool)
        seq[order], seq1[order] = found[pos], nearest
        return seq, seq1


def _by_group(group: np.ndarray) -> np.ndarray:
    """A stable order of the rows by group (pid, < 2^32): two stable sorts of 16-bit keys,
    low half then high half (numpy sorts 16-bit keys by radix: half the time of one sort)."""
    g = group.astype(np.int64) & 0xFFFFFFFF
    low = np.argsort((g & 0xFFFF).astype(np.uint16), kind="stable")
    return low[np.argsort((g[low] >> 16).astype(np.uint16), kind="stable")]
