"""IO streams: the previous-end SEQ rule (device and process scope), carried across batches;
flush/discard/zero-size rows never streams."""

from __future__ import annotations

import numpy as np
import pytest

from pts.workload.atw import StreamKey
from pts.workload.capture.events import Op
from pts.workload.streams import Classifier, key

R, W, F, D = Op.READ, Op.WRITE, Op.FLUSH, Op.DISCARD


def labels(classifier, op, sector, nbytes, pid=None):
    mask, codes = classifier.classify(np.array(op), np.array(sector), np.array(nbytes),
                                      None if pid is None else np.array(pid))
    return mask.tolist(), [key(c).label for c in codes]


def test_seq_when_it_starts_where_the_previous_io_of_its_direction_ended():
    # read 0+8, write 100+16, read 8 (SEQ: reads ended at 8), write 116 (SEQ), read 40 (RND)
    mask, got = labels(Classifier(), [R, W, R, W, R], [0, 100, 8, 116, 40],
                       [4096, 8192, 4096, 4096, 4096])
    assert mask == [True] * 5
    assert got == ["RND 4K R", "RND 8K W", "SEQ 4K R", "SEQ 4K W", "RND 4K R"]


def test_the_previous_end_is_carried_across_batches():
    c = Classifier()
    assert labels(c, [R], [0], [65536])[1] == ["RND 64K R"]
    assert labels(c, [W, R], [0, 128], [4096, 4096])[1] == ["RND 4K W", "SEQ 4K R"]
    one = Classifier()
    assert labels(one, [R, W, R], [0, 0, 128], [65536, 4096, 4096])[1] == \
        ["RND 64K R", "RND 4K W", "SEQ 4K R"]


def test_flush_discard_and_empty_rows_are_not_streams():
    mask, got = labels(Classifier(), [F, R, D, W, Op.OTHER, R], [0, 0, 8, 8, 0, 8],
                       [0, 4096, 4096, 4096, 4096, 0])
    assert mask == [False, True, False, True, False, False]
    assert got == ["RND 4K R", "RND 4K W"]


def test_process_scope_compares_with_the_same_pid_only():
    op, sector, size, pid = [R, R, R, R], [0, 1000, 8, 1008], [4096] * 4, [1, 2, 1, 2]
    assert labels(Classifier(scope="device"), op, sector, size, pid)[1] == \
        ["RND 4K R", "RND 4K R", "RND 4K R", "RND 4K R"]
    c = Classifier(scope="process")
    assert labels(c, op, sector, size, pid)[1] == \
        ["RND 4K R", "RND 4K R", "SEQ 4K R", "SEQ 4K R"]
    assert labels(c, [R], [16], [4096], [1])[1] == ["SEQ 4K R"]      # carried per pid


def test_key_round_trips_the_code():
    c = Classifier()
    _, codes = c.classify(np.array([W]), np.array([0]), np.array([512]))
    assert key(codes[0]) == StreamKey("RND", "W", 512)


def test_unknown_rule_or_scope_refused():
    with pytest.raises(ValueError, match="not supported"):
        Classifier(rule="window-4")
    with pytest.raises(ValueError, match="scope"):
        Classifier(scope="host")
