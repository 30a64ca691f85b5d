"""The characterisation of small synthetic captures whose figures are known by hand."""

from __future__ import annotations

import pytest

from pts.workload.atw import StreamKey
from pts.workload.capture.events import CaptureError
from pts.workload.characterise import characterise
from tests.support.synthetic_capture import D, F, R, W, rows, write

K = StreamKey


@pytest.fixture()
def capture(tmp_path):
    # times in ms. Reads: RND 4K at 0, SEQ 4K at 8 (after 0+8), RND 4K at 4096;
    # writes: RND 64K at 1000, SEQ 64K at 1128, RND 8K at 5000 (pid 7, "kworker");
    # a flush and a discard; the last write never completes.
    first = rows((0, 10, 0, 4096, R), (2, 6, 8, 4096, R), (4, 14, 1000, 65536, W),
                 (5, 5, 0, 0, F))
    second = rows((15, 16, 1128, 65536, W), (16, 18, 4096, 4096, R),
                  (30, 31, 9000, 4096, D), (35, None, 5000, 8192, W, 7, "kworker"))
    return write(tmp_path / "c.capture", first, second, seconds=0.04,
                 capacity_bytes=100 << 20, lost_events=2)


def run(path, **kw):
    kw.setdefault("step_s", 0.01)
    return characterise(path, batch_rows=3, **kw)


def test_cumulative_workload_shares_by_count_and_bytes(capture):
    ch = run(capture)
    assert (ch.events, ch.ios, ch.flushes, ch.discards, ch.other) == (8, 6, 1, 1, 0)
    got = {s.key.label: (s.ios, s.share_ios_pct, s.share_bytes_pct) for s in ch.streams}
    total = 3 * 4096 + 2 * 65536 + 8192
    assert got == {
        "RND 4K R": (2, pytest.approx(100 * 2 / 6), pytest.approx(100 * 8192 / total)),
        "SEQ 4K R": (1, pytest.approx(100 / 6), pytest.approx(100 * 4096 / total)),
        "RND 64K W": (1, pytest.approx(100 / 6), pytest.approx(100 * 65536 / total)),
        "SEQ 64K W": (1, pytest.approx(100 / 6), pytest.approx(100 * 65536 / total)),
        "RND 8K W": (1, pytest.approx(100 / 6), pytest.approx(100 * 8192 / total))}
    assert ch.streams[0].key == K("RND", "R", 4096)        # ranked by I/Os, ties by label
    assert [s.key.label for s in ch.streams[1:]] == ["RND 64K W", "RND 8K W", "SEQ 4K R",
                                                     "SEQ 64K W"]


def test_top_n_and_coverage(capture):
    ch = run(capture, top_n=2)
    assert [s.key.label for s in ch.top] == ["RND 4K R", "RND 64K W"]   # ties: by label
    assert ch.coverage_pct == pytest.approx(50.0)


def test_outstanding_ios_idle_response_times(capture):
    ch = run(capture)
    # outstanding: 0-2:1, 2-4:2, 4-6:3, 6-10:2, 10-14:1, 14-15:0, 15-16:1, 16-18:1,
    # 18-35:0, 35-40:1 (never completed: until the end, 40 ms)
    assert [round(x * 1000, 6) for x in ch.oio_seconds] == [18, 14, 6, 2]
    assert (ch.oio_median, ch.oio_p95, ch.oio_max) == (1, 3, 3)
    assert ch.oio_mean == pytest.approx((14 + 12 + 6) / 40)
    assert ch.idle_s == pytest.approx(0.018)
    assert ch.idle_pct == pytest.approx(45.0)
    assert ch.incomplete == 1
    assert ch.rt_mean_ms == pytest.approx((10 + 4 + 10 + 1 + 2) / 5)
    assert ch.rt_max_ms == pytest.approx(10)
    assert ch.iops == pytest.approx(6 / 0.04)
    assert [s.ios for s in ch.steps] == [3, 2, 0, 1]
    assert ch.lost_events == 2


def test_stream_map_gives_each_steps_top_stream_shares(capture):
    ch = run(capture, top_n=2)
    assert ch.stream_map[0] == {K("RND", "R", 4096): pytest.approx(100 / 3),
                                K("RND", "W", 65536): pytest.approx(100 / 3)}
    assert ch.stream_map[1] == {K("RND", "R", 4096): pytest.approx(50.0)}
    assert ch.stream_map[2] == {}
    assert ch.processes == {"app": 5, "kworker": 1}


def test_footprint_against_the_capacity(capture):
    fp = run(capture).footprint
    # 1 MiB chunks of a 100 MiB device: sectors 0, 8, 1000, 1128 (+ 64 KiB: < 1 MiB) start
    # in chunk 0; 4096 (2 MiB) and 5000 (2.44 MiB) in chunk 2. The discard is no I/O.
    assert (fp.chunk_bytes, fp.basis, fp.chunks, fp.touched_chunks) == (1 << 20, "capacity",
                                                                        100, 2)
    assert fp.touched_pct == pytest.approx(2.0)
    assert fp.hottest_1pct_share_pct == pytest.approx(100 * 4 / 6)     # chunk 0: 4 of 6


def test_footprint_over_the_span_without_a_capacity(tmp_path):
    mib = 2048          # sectors
    path = write(tmp_path / "s.capture", rows((0, 1, 2 * mib, 4096, R), (1, 2, 4 * mib, 4096, R),
                                              (2, 3, 4 * mib + 8, 2 << 20, W)), seconds=0.01)
    fp = characterise(path, step_s=1).footprint
    # chunks 2, 4, 4-6 (the 2 MiB write from 4 MiB + 4 KiB spans chunks 4, 5 and 6): 4 touched
    # of the 5 from the lowest (2) to the highest (6)
    assert (fp.basis, fp.touched_chunks, fp.chunks) == ("span", 4, 5)
    assert fp.touched_pct == pytest.approx(80.0)


def test_window_keeps_the_ios_issued_inside_it(capture):
    ch = run(capture, from_s=0.01, to_s=0.02)
    assert ch.ios == 2 and ch.seconds == pytest.approx(0.01)
    assert [s.ios for s in ch.steps] == [2]
    with pytest.raises(ValueError, match="empty"):
        run(capture, from_s=0.02, to_s=0.01)


def test_batches_do_not_change_the_answer(capture):
    a, b = characterise(capture, step_s=0.01, batch_rows=1), run(capture)
    assert (a.streams, a.steps, a.oio_seconds, a.footprint) == \
        (b.streams, b.steps, b.oio_seconds, b.footprint)


def test_a_corrupt_capture_is_refused(tmp_path, capture):
    bad = tmp_path / "bad.capture"
    bad.write_bytes(capture.read_bytes()[:200])
    with pytest.raises(CaptureError, match="bad.capture"):
        characterise(bad)
