"""The writeback join's rules (pts/workload/capture/writeback.py) on events written down by hand, in
the kernel's order as test_capture_writeback.py's real capture showed it: dirty folios in
the dirtier's context, a flusher's inode bracket around its bios, requests issued from the
bios (split, or after the bracket ended), journal and metadata writes."""

from __future__ import annotations

import numpy as np

from pts.workload.capture import ringbuf, writeback
from pts.workload.capture.events import Op
from pts.workload.capture.writeback import Attribution

DEV_T = 7 << 20          # the device's kernel dev_t: the block device inode's number
FLUSHER = 900


def events(*rows) -> dict[str, np.ndarray]:
    """(t, kind, pid, ino, sector, nr, comm) rows -> the columns ringbuf.decode gives."""
    t, kind, pid, ino, sector, nr, comm = zip(*rows, strict=True)
    n = len(t)
    return {"t": np.array(t, np.int64), "kind": np.array(kind, np.int8),
            "issue": np.zeros(n, bool), "pid": np.array(pid, np.int64),
            "ino": np.array(ino, np.int64), "sector": np.array(sector, np.int64),
            "nr": np.array(nr, np.int64), "comm": np.array(comm, "S16"),
            "rwbs": np.full(n, b"W", "S10"), "error": np.zeros(n, np.int64)}


def dirty(t, pid, ino, n=1):
    return [(t + i, ringbuf.DIRTY, pid, ino, i, 0, b"") for i in range(n)]


def bracket(t, ino, bios, wrote=10, budget=100):
    """A flusher's writeback of `ino` submitting `bios` [(sector, nr)], wrote < budget."""
    rows = [(t, ringbuf.WB_START, FLUSHER, ino, 0, 0, b"")]
    rows += [(t + 1 + i, ringbuf.BIO, FLUSHER, 0, s, n, b"kworker/u8:1")
             for i, (s, n) in enumerate(bios)]
    return rows + [(t + 50, ringbuf.WB_END, FLUSHER, ino, wrote, budget, b"")]


def issue(a: Attribution, *reqs) -> tuple[list[int], list[int]]:
    """(t, sector, comm) write requests -> (dirtier pids, reasons)."""
    t, sector, comm = zip(*reqs, strict=True)
    who, why = a.issues(np.array(t, np.int64), np.array(sector, np.int64),
                        np.full(len(t), int(Op.WRITE)), np.array(comm, "S16"))
    return who.tolist(), why.tolist()


def test_a_request_joins_its_bio_its_inode_and_the_task_that_dirtied_most():
    a = Attribution(DEV_T, traced=True, comms={"11": "postgres", "12": "cp"})
    a.feed(events(*dirty(0, 11, 5, n=3), *dirty(10, 12, 5, n=2), *dirty(20, 12, 6),
                  *bracket(100, 5, [(1000, 4096)]), *bracket(200, 6, [(8000, 8)])))
    # inode 5's bio split in two requests, the second beginning inside it and issued
    # (plugged) during inode 6's bracket: still inode 5's; inode 6's after its bracket
    who, why = issue(a, (102, 1000, b"kworker/u8:1"), (205, 3560, b"kworker/1:1H"),
                     (260, 8000, b"kworker/u8:1"))
    assert who == [11, 11, 12] and why == [writeback.ATTRIBUTED] * 3
    assert a.comm_of(np.array([11, 12, 0])) == ["postgres", "cp", ""]


def test_the_count_restarts_after_a_complete_writeback_and_slices_keep_it():
    a = Attribution(DEV_T, traced=True)
    # slice 1 used its whole budget (wrote == budget): the count goes on into slice 2,
    # where task 12's one new folio does not outweigh 11's three
    a.feed(events(*dirty(0, 11, 5, n=3), *bracket(100, 5, [(0, 8)], wrote=100, budget=100),
                  *dirty(160, 12, 5), *bracket(200, 5, [(8, 8)]),
                  # slice 2 wrote all it found: a new count; only 12 dirtied since
                  *dirty(300, 12, 5), *bracket(400, 5, [(16, 8)]),
                  # nothing dirtied since (pages dirtied during the last writeback): the
                  # previous writeback's dirtier
                  *bracket(500, 5, [(24, 8)])))
    who, why = issue(a, (110, 0, b"kworker/u8:1"), (210, 8, b"kworker/u8:1"),
                     (410, 16, b"kworker/u8:1"), (510, 24, b"kworker/u8:1"))
    assert who == [11, 11, 12, 12] and set(why) == {writeback.ATTRIBUTED}


def test_what_cannot_be_attributed_is_named():
    a = Attribution(DEV_T, traced=True)
    a.feed(events(*dirty(0, 11, 5),
                  *bracket(100, DEV_T, [(2, 8)]),          # the block device's own inode
                  *bracket(200, 77, [(500, 8)]),           # an inode never seen dirtied
                  (300, ringbuf.BIO, FLUSHER, 0, 900, 8, b"kworker/u8:1")))   # no bracket
    who, why = issue(a, (110, 2, b"kworker/u8:1"), (210, 500, b"kworker/u8:1"),
                     (310, 900, b"kworker/u8:1"), (320, 4000, b"kworker/1:1H"),
                     (330, 64, b"jbd2/loop0-8"), (340, 128, b"postgres"),
                     (90, 2, b"kworker/u8:1"))     # before its bio: not that bio's
    assert who == [0] * 7
    assert why == [writeback.METADATA, writeback.BEFORE, writeback.NO_INODE,
                   writeback.NO_BIO, writeback.JOURNAL, writeback.NOT_WRITEBACK,
                   writeback.NO_BIO]
    # a file system on a partition (its dev_t given with the device's): its metadata too
    part = 259 << 20 | 1
    on_part = Attribution(DEV_T, traced=True, partitions=(part,))
    on_part.feed(events(*dirty(0, 11, part), *bracket(100, part, [(2, 8)])))
    assert issue(on_part, (110, 2, b"kworker/u8:1"))[1] == [writeback.METADATA]
    untraced = Attribution(DEV_T, traced=False)
    assert issue(untraced, (1, 0, b"kworker/u8:1"), (2, 0, b"jbd2/x"))[1] == \
        [writeback.NOT_TRACED, writeback.JOURNAL]


def test_task_events_name_the_dirtier_and_old_state_is_forgotten():
    a = Attribution(DEV_T, traced=True, comms={"11": "bash"})
    a.feed(events((1, ringbuf.TASK_RENAME, 11, 11, 0, 0, b"postgres"),
                  (2, ringbuf.TASK_NEW, 11, 12, 0, 0, b"postgres"),
                  *dirty(3, 12, 5), *bracket(100, 5, [(0, 8)])))
    assert a.comm_of(np.array([11, 12])) == ["postgres", "postgres"]
    assert len(a.bios["t"]) == 1 and 5 in a.inodes
    # a batch BIO_KEEP_NS later: the bio forgotten (a request then finds none)
    late = writeback.BIO_KEEP_NS + 200
    a.feed(events((late, ringbuf.TASK_RENAME, 11, 11, 0, 0, b"postgres")))
    assert len(a.bios["t"]) == 0 and 5 in a.inodes
    assert issue(a, (late + 1, 0, b"kworker/u8:1"))[1] == [writeback.NO_BIO]
    a.feed(events((writeback.INODE_KEEP_NS + 200, ringbuf.TASK_RENAME, 11, 11, 0, 0, b"x")))
    assert 5 not in a.inodes


def test_the_spools_partitions_are_block_device_inodes_too():
    """`pts capture` lists the device's partitions at its start (spool.json's `partitions`,
    MAJ:MIN); the decoding's join takes their inodes as metadata."""
    from types import SimpleNamespace

    from pts.workload.capture.unspool import attribution_of
    sp = SimpleNamespace(meta={"dev_t": "7:3", "partitions": ["259:1", "259:2"]},
                         layout=SimpleNamespace(kinds=writeback.NEEDED))
    a = attribution_of(sp)
    assert a.traced and a.block_inodes == {7 << 20 | 3, 259 << 20 | 1, 259 << 20 | 2}
    old = SimpleNamespace(meta={"dev_t": "7:3"}, layout=SimpleNamespace(kinds=frozenset()))
    assert attribution_of(old).block_inodes == {7 << 20 | 3} and not attribution_of(old).traced

