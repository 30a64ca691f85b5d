"""Per-step figures from the issue/complete sweep, on I/Os whose answers are computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from pts.workload.steps import NS, Timeline
from pts.workload.streams import code

CODE_4K_R = int(code(np.array([False]), np.array([0]), np.array([4096]))[0])


def add(t: Timeline, ios, comm=None):
    """ios: (issue s, complete s or None) pairs, 4 KiB RND reads."""
    issue = np.array([round(i * NS) for i, _ in ios], np.int64)
    complete = np.array([-1 if c is None else round(c * NS) for _, c in ios], np.int64)
    t.add(issue, complete, np.full(len(ios), 4096), np.full(len(ios), CODE_4K_R),
          None if comm is None else np.array(comm, dtype=object))


def three_overlapping(batches: int) -> Timeline:
    # A [0, 10), B [2, 6), C [4, 14): outstanding 1 (0-2), 2 (2-4), 3 (4-6), 2 (6-10),
    # 1 (10-14), then D issued at 15 never completes: 1 (15-20)
    ios = [(0, 10), (2, 6), (4, 14), (15, None)]
    t = Timeline(0, 10 * NS)
    parts = [ios] if batches == 1 else [ios[:1], ios[1:3], ios[3:]]
    for part in parts:
        add(t, part, ["app"] * len(part))
    t.finish(20 * NS)
    return t


@pytest.mark.parametrize("batches", [1, 3])
def test_outstanding_ios_mean_max_busy_per_step(batches):
    t = three_overlapping(batches)
    first, second = t.figures()
    # step 0: integral 1x2 + 2x2 + 3x2 + 2x4 = 20 I/O-seconds over 10 s
    assert first.oio_mean == pytest.approx(2.0)
    assert first.oio_max == 3
    assert first.busy_pct == pytest.approx(100.0)
    # step 1: C until 14 (4 s), idle 14-15, D 15-20 (5 s): 9 / 10
    assert second.oio_mean == pytest.approx(0.9)
    assert second.oio_max == 1
    assert second.busy_pct == pytest.approx(90.0)
    assert t.incomplete == 1
    # seconds held at 0, 1, 2, 3 outstanding
    assert (t.hist / NS).tolist() == pytest.approx([1, 11, 6, 2])


def test_counts_rates_and_response_times_of_the_ios_issued_in_the_step():
    first, second = three_overlapping(1).figures()
    assert (first.ios, first.iops, first.mbps) == (3, pytest.approx(0.3),
                                                   pytest.approx(3 * 4096 / 10 / 1e6))
    assert first.rt_mean_ms == pytest.approx((10 + 4 + 10) / 3 * 1000)
    assert first.rt_max_ms == pytest.approx(10_000)
    assert second.ios == 1 and second.rt_mean_ms is None      # D never completed
    assert first.processes == {"app": 3}
    assert sum(first.streams.values()) == 3


def test_last_step_is_cut_at_the_window_end_and_late_completions_are_cut_there():
    t = Timeline(0, 4 * NS, end_ns=6 * NS)
    add(t, [(1, 3), (5, 9)])
    t.finish()
    a, b = t.figures()
    assert (a.seconds, b.seconds) == (4.0, 2.0)
    assert a.oio_mean == pytest.approx(2 / 4)
    assert b.oio_mean == pytest.approx(1 / 2)        # 5-6 only: the rest is past --to
    assert b.rt_mean_ms == pytest.approx(4000)       # its response time is whole


def test_simultaneous_issues_count_together():
    t = Timeline(0, NS)
    add(t, [(0.1, 0.2), (0.1, 0.2), (0.1, 0.3)])
    t.finish(NS)
    (s,) = t.figures()
    assert s.oio_max == 3
    assert s.oio_mean == pytest.approx((3 * 0.1 + 1 * 0.1) / 1)
    assert s.busy_pct == pytest.approx(20.0)


def test_an_io_of_no_time_and_back_to_back_ios():
    # a zero-time I/O while idle, then A [1, 2) and B [2, 3) back to back: never 2 outstanding
    t = Timeline(0, 4 * NS)
    add(t, [(0.5, 0.5), (1, 2), (2, 3)])
    t.finish(4 * NS)
    (s,) = t.figures()
    assert (np.trim_zeros(t.hist, "b") / NS).tolist() == pytest.approx([2, 2])
    assert s.oio_max == 1 and s.busy_pct == pytest.approx(50.0)


def test_a_row_out_of_issue_order_across_batches_is_counted_and_swept_at_the_cut():
    t = Timeline(0, 10 * NS)
    add(t, [(0, 1), (4, 6)])
    add(t, [(3, 5)])            # issued before the first batch's last issue (4)
    t.finish(10 * NS)
    assert t.out_of_order == 1
    # swept as issued at 4: 0-1: 1, 4-5: 2, 5-6: 1; the hist still covers the 10 s once
    assert (t.hist / NS).tolist() == pytest.approx([7, 2, 1])


def test_a_step_must_be_positive():
    with pytest.raises(ValueError, match="step"):
        Timeline(0, 0)
