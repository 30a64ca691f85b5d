"""pts.power.energy: a window's energy, mean W, coverage and gaps from timestamped samples."""

from __future__ import annotations

import pytest

from pts.power.energy import ENERGY, POWER, Sample, counter_delta, per_watt, window


def power(*points: tuple[float, float | None]) -> list[Sample]:
    return [Sample(t, 1_700_000_000 + t, w) for t, w in points]


def test_trapezoid_is_exact_on_a_ramp_and_cut_at_the_window_edges():
    # 100 W at t=0 rising to 200 W at t=10: the power is linear, so the trapezoid is exact,
    # also over [2.5, 7.5] which cuts both segments (150 W mean, 5 s -> 750 J).
    samples = power((0, 100), (5, 150), (10, 200))
    win = window(samples, 2.5, 7.5, POWER, max_gap_s=6)
    assert win.energy_j == pytest.approx(750.0)
    assert win.covered_s == pytest.approx(5.0)
    assert win.coverage == pytest.approx(1.0) and win.gaps == ()
    assert win.mean_w == pytest.approx(150.0)
    assert win.samples == 1                     # the reading at t=5


def test_aligned_by_timestamps_never_by_count():
    # The same power (a constant 40 W) read 3 times in the first half and 30 times in the
    # second: each half is 5 s, each has 200 J, whatever the number of samples.
    first = [(t, 40.0) for t in (0.0, 2.5, 5.0)]
    second = [(5.0 + i * 5 / 29, 40.0) for i in range(1, 30)]
    samples = power(*first, *second)
    a = window(samples, 0, 5, POWER, max_gap_s=3)
    b = window(samples, 5, 10, POWER, max_gap_s=3)
    assert a.energy_j == pytest.approx(200.0) and b.energy_j == pytest.approx(200.0)
    assert (a.samples, b.samples) == (3, 30)


def test_a_failed_read_is_a_gap_never_filled():
    samples = power((0, 100), (1, 100), (2, None), (3, 100), (4, 100))
    win = window(samples, 0, 4, POWER, max_gap_s=2.5)
    # [1, 3] is unknown: the failed read at 2 breaks the pair (1, 3)
    assert win.gaps == ((1.0, 3.0),)
    assert win.covered_s == pytest.approx(2.0) and win.coverage == pytest.approx(0.5)
    assert win.energy_j == pytest.approx(200.0)      # 2 covered seconds at 100 W, no more
    assert win.mean_w == pytest.approx(100.0)


def test_readings_too_far_apart_are_a_gap():
    samples = power((0, 10), (1, 10), (9, 10), (10, 10))
    win = window(samples, 0, 10, POWER, max_gap_s=2.5)
    assert win.gaps == ((1.0, 9.0),) and win.coverage == pytest.approx(0.2)


def test_the_window_before_the_first_reading_is_uncovered():
    win = window(power((2, 50), (4, 50)), 0, 4, POWER, max_gap_s=3)
    assert win.gaps == ((0.0, 2.0),) and win.energy_j == pytest.approx(100.0)


def test_nothing_covered_has_no_mean_and_no_per_watt():
    win = window(power((20, 50), (21, 50)), 0, 10, POWER, max_gap_s=3)
    assert win.mean_w is None and win.coverage == 0 and per_watt(1000.0, win) is None


def test_energy_counter_difference_with_a_wrap():
    # A counter wrapping at 1000 J: 900 -> 100 is 200 J, not -800 J.
    assert counter_delta(900.0, 100.0, 1000.0) == pytest.approx(200.0)
    samples = power((0, 700.0), (1, 800.0), (2, 900.0), (3, 0.0), (4, 100.0))
    win = window(samples, 0, 4, ENERGY, max_gap_s=2, range_j=1000.0)
    assert win.energy_j == pytest.approx(400.0)
    assert win.mean_w == pytest.approx(100.0)
    # half of a segment's step: [0.5, 1.5] holds half of 0->1 and half of 1->2
    assert window(samples, 0.5, 1.5, ENERGY, max_gap_s=2, range_j=1000.0).energy_j == \
        pytest.approx(100.0)


def test_a_counter_going_down_without_a_range_is_an_error():
    with pytest.raises(ValueError, match="no wrap range"):
        counter_delta(10.0, 5.0, None)


def test_iops_and_mbps_per_watt_use_the_windows_mean():
    win = window(power((0, 8.0), (10, 12.0)), 0, 10, POWER, max_gap_s=20)
    assert win.mean_w == pytest.approx(10.0)
    assert per_watt(50_000.0, win) == pytest.approx(5000.0)      # IOPS/W
    assert per_watt(1200.0, win) == pytest.approx(120.0)         # MB/s/W


def test_bad_windows_and_kinds_are_refused():
    with pytest.raises(ValueError, match="ends before it starts"):
        window([], 5, 1, POWER, max_gap_s=1)
    with pytest.raises(ValueError, match="unknown sample kind"):
        window([], 0, 1, "volts", max_gap_s=1)
