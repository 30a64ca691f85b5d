"""Buffered writeback attributed to the task that dirtied its pages (issue 40 §2).

A buffered write reaches the device issued by a flusher thread (`kworker/u*:*`), so the
request's own task says nothing of the application. The kernel's events say more, and a
capture traces them beside the requests (tracefs.ATTRIBUTION_EVENTS):

- `writeback_dirty_folio` (older kernels: `_page`): a folio of inode `ino` on the device
  went clean -> dirty, in the context of the task that dirtied it (its pid);
- `writeback_single_inode_start` / `writeback_single_inode`: a flusher thread (pid) writes
  back inode `ino` between them; the end says how many pages it wrote (`wrote`) of the
  budget it had (`nr_to_write`): fewer than its budget means it wrote all it found;
- `block_bio_queue` from flusher threads only (filtered in the kernel): a bio submitted
  inside such a bracket belongs to that inode;
- `task_newtask`, `task_rename` (fork; exec and prctl): a pid's name, with the /proc
  snapshot taken at the capture's start (the spool's `comms`).

The join: a write request issued by a kworker takes the latest earlier flusher bio whose
sectors hold its start sector (a request begins at one of its bios' starts, or inside a bio
split to the device's maximum request size; issued after the bracket ended when the plug
held it, hence the join through the bio, not the request's time) -> the bracket that bio was
submitted in -> the inode -> its dirtier.

The rule for several dirtiers: an inode's dirtied folios are counted per task from the
end of its last writeback that wrote all it found (wrote < nr_to_write); a bio goes to the
task that dirtied the most folios in that count (a folio may be a page or a large folio:
the event gives no size). A writeback in slices (budget used up) keeps the count; an
inode whose count is empty (its pages dirtied during its previous writeback) takes the
dirtier of its previous writeback.

Not attributable, counted by reason (REASONS): the journal (jbd2 issues its own writes),
metadata (a block device's own inode, ino == the dev_t of the device or of one of its
partitions, where the file system usually is: the file system's
metadata written back through it), a bio outside any inode's writeback, a kworker request
no flusher bio explains (kblockd dispatching another task's bio, a journal block re-issued
after a flush), an inode seen written but never dirtied (dirtied before the capture
started, or forgotten: below), and a capture without these events (not traced).

Memory, bounded: the flusher bios of the last BIO_KEEP_NS, and per inode its dirtier counts
until INODE_KEEP_NS after it was last dirtied or written.
"""

from __future__ import annotations

import numpy as np

from pts.workload.capture import ringbuf
from pts.workload.capture.events import Op

# choice: a request is issued within 10 s of its bio (plugging holds it for microseconds;
# a deep scheduler queue for far less than this); older flusher bios are forgotten
BIO_KEEP_NS = 10 * 10**9
# choice: the kernel writes dirty pages back once they are 30 s old (dirty_expire_centisecs
# 3000, the default) every 5 s; an inode untouched for 10 min is forgotten
INODE_KEEP_NS = 600 * 10**9
LOOK_BACK = 8                # flusher bios starting at or before a request tried, latest first

# why a request has (or has not) a dirtier: the capture file keeps the dirtier, the
# descriptor counts the reasons
NOT_WRITEBACK, ATTRIBUTED, JOURNAL, METADATA, NO_INODE, NO_BIO, BEFORE, NOT_TRACED = range(8)
REASONS = {JOURNAL: "journal", METADATA: "metadata", NO_INODE: "outside an inode's writeback",
           NO_BIO: "no flusher bio", BEFORE: "dirtied before the capture",
           NOT_TRACED: "not traced"}
NEEDED = frozenset({ringbuf.BIO, ringbuf.DIRTY, ringbuf.WB_START, ringbuf.WB_END})
KWORKER, JOURNAL_THREAD = b"kworker/", b"jbd2/"


class Attribution:
    """Fed every batch's attribution events (`feed`) before its requests (`issues`)."""

    def __init__(self, dev_t: int, traced: bool, comms: dict | None = None,
                 partitions: tuple[int, ...] = ()):
        self.dev_t = dev_t           # the kernel's dev_t: the block device inode's number
        # ... and its partitions' (their block device inodes hold the metadata of the file
        # systems on them; seen: ext4 on loop3p2 (259:1) dirties ino 259 << 20 | 1)
        self.block_inodes = frozenset((dev_t, *partitions))
        self.traced = traced
        self.comms: dict[int, str] = {int(p): c for p, c in (comms or {}).items()}
        self.bracket: dict[int, int] = {}        # flusher pid -> the inode it writes back
        # ino -> [{dirtier pid: folios since its last complete writeback}, the dirtier of
        #         its previous writeback (0 none), last touched (ns)]
        self.inodes: dict[int, list] = {}
        empty = np.zeros(0, np.int64)
        self.bios = {"t": empty, "start": empty, "end": empty, "pid": empty, "why": empty}

    def feed(self, ev: dict[str, np.ndarray]) -> None:
        """One batch's attribution events (any order; ev['kind'] as ringbuf's)."""
        if not len(ev["t"]):
            return
        order = np.argsort(ev["t"], kind="stable")
        kind, t = ev["kind"][order], ev["t"][order]
        pid, ino, sector = ev["pid"][order], ev["ino"][order], ev["sector"][order]
        nr, comm = ev["nr"][order], ev["comm"][order]
        dirty = kind == ringbuf.DIRTY
        ctrl = np.flatnonzero(~dirty)
        d = np.flatnonzero(dirty)
        # the dirty events in bulk: folios per (control events before it, inode, task)
        seg = np.searchsorted(ctrl, d)
        keys, inverse, g_n = np.unique(np.stack([seg, ino[d], pid[d]], 1).reshape(-1, 3),
                                       axis=0, return_inverse=True, return_counts=True)
        last = np.zeros(len(keys), np.int64)
        np.maximum.at(last, inverse.reshape(-1), t[d])
        g_seg, g_ino, g_pid = (keys[:, i].tolist() for i in range(3))
        g_n, g_t = g_n.tolist(), last.tolist()
        # groups before control k: those of segments <= k
        bounds = np.searchsorted(keys[:, 0], np.arange(len(ctrl) + 1), side="right").tolist()
        c_kind, c_t = kind[ctrl].tolist(), t[ctrl].tolist()
        c_pid, c_ino = pid[ctrl].tolist(), ino[ctrl].tolist()
        c_sec, c_nr, c_comm = sector[ctrl].tolist(), nr[ctrl].tolist(), comm[ctrl].tolist()
        new_bios: list[tuple[int, int, int, int, int]] = []
        g = 0
        for k in range(len(ctrl) + 1):
            while g < bounds[k]:                  # the folios dirtied before control k
                entry = self._inode(g_ino[g], g_t[g])
                entry[0][g_pid[g]] = entry[0].get(g_pid[g], 0) + g_n[g]
                g += 1
            if k == len(ctrl):
                break
            kk = c_kind[k]
            if kk == ringbuf.BIO:
                who, why = self._dirtier(self.bracket.get(c_pid[k]), c_t[k])
                new_bios.append((c_t[k], c_sec[k], c_sec[k] + c_nr[k], who, why))
            elif kk == ringbuf.WB_START:
                self.bracket[c_pid[k]] = c_ino[k]
            elif kk == ringbuf.WB_END:
                self.bracket.pop(c_pid[k], None)
                if c_sec[k] < c_nr[k]:         # wrote all it found: a new count begins
                    entry = self._inode(c_ino[k], c_t[k])
                    if entry[0]:
                        entry[1] = max(entry[0], key=entry[0].get)
                    entry[0] = {}
            else:                                  # task_newtask, task_rename
                self.comms[c_ino[k]] = c_comm[k].decode(errors="replace")
        now = int(t[-1])
        self._forget(now)
        if new_bios:
            cols = np.array(new_bios, np.int64).T
            for name, col in zip(("t", "start", "end", "pid", "why"), cols, strict=True):
                self.bios[name] = np.r_[self.bios[name], col]

    def _inode(self, ino: int, t: int) -> list:
        entry = self.inodes.get(ino)
        if entry is None:
            entry = self.inodes[ino] = [{}, 0, t]
        entry[2] = t
        return entry

    def _dirtier(self, ino: int | None, t: int) -> tuple[int, int]:
        if ino is None:
            return 0, NO_INODE
        if ino in self.block_inodes:
            return 0, METADATA
        entry = self.inodes.get(ino)
        if entry is None:
            return 0, BEFORE
        entry[2] = t
        if entry[0]:
            return max(entry[0], key=entry[0].get), ATTRIBUTED
        return (entry[1], ATTRIBUTED) if entry[1] else (0, BEFORE)

    def _forget(self, now: int) -> None:
        old = [ino for ino, e in self.inodes.items() if e[2] < now - INODE_KEEP_NS]
        for ino in old:
            del self.inodes[ino]
        keep = self.bios["t"] >= now - BIO_KEEP_NS
        if not keep.all():
            self.bios = {k: v[keep] for k, v in self.bios.items()}

    def issues(self, t: np.ndarray, sector: np.ndarray, op: np.ndarray,
               comm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(dirtier pid, why) of each issued request (after `feed` of its batch)."""
        n = len(t)
        who, why = np.zeros(n, np.int64), np.zeros(n, np.int64)
        write = op == Op.WRITE
        kworker = write & np.char.startswith(comm, KWORKER)
        why[write & np.char.startswith(comm, JOURNAL_THREAD)] = JOURNAL
        if not self.traced:
            why[kworker] = NOT_TRACED
            return who, why
        idx = np.flatnonzero(kworker)
        why[idx] = NO_BIO
        b = self.bios
        if not len(idx) or not len(b["t"]):
            return who, why
        order = np.lexsort((b["t"], b["start"]))
        start, end, bt = b["start"][order], b["end"][order], b["t"][order]
        at = np.searchsorted(start, sector[idx], side="right") - 1
        found = np.full(len(idx), -1, np.int64)
        for back in range(LOOK_BACK):          # latest first among the bios starting there
            j = at - back
            ok = (found < 0) & (j >= 0)
            jj = np.where(ok, j, 0)
            ok &= (end[jj] > sector[idx]) & (bt[jj] <= t[idx])
            found[ok] = jj[ok]
        hit = found >= 0
        src = order[found[hit]]
        who[idx[hit]] = b["pid"][src]
        why[idx[hit]] = b["why"][src]
        return who, why

    def comm_of(self, pids: np.ndarray) -> list[str]:
        """The dirtiers' names (the latest known when its request is written; "" none)."""
        return [self.comms.get(p, "") if p else "" for p in pids.tolist()]
