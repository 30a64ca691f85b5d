"""The resolvability rule of the Latency QoS levels (pts.stored.latency_qos): a p % level of
N I/Os is only given when N >= 1 / (1 - p/100); otherwise it is "n/r", never the slowest I/O."""

from __future__ import annotations

import pytest

from pts.stored import latency_qos
from pts.stored.latency_qos import NO_BINS, NOT_RESOLVABLE, OK, PointBins


@pytest.mark.parametrize(("pct", "needed"), [(99.99, 10_000), (99.999, 100_000),
                                             (99.9999, 1_000_000)])
def test_a_level_needs_one_over_one_minus_p_ios(pct, needed):
    assert latency_qos.resolvable(needed, pct)
    assert not latency_qos.resolvable(needed - 1, pct)


def _bins(ios: int, base: int = 20_000) -> dict[int, int]:
    return {base: ios - 3, 3 * base: 2, 10 * base: 1}


def test_level_is_fios_percentile_capped_at_the_maximum():
    bins = _bins(1_000_000)
    assert latency_qos.level_us(bins, 99.99, None) == 20.0
    assert latency_qos.level_us(bins, 99.9999, None) == 60.0
    assert latency_qos.level_us(bins, 99.9999, max_ns=45_000) == 45.0


def test_unresolvable_level_has_no_value():
    assert latency_qos.level_us(_bins(999_999), 99.9999, None) is None
    assert latency_qos.level_us({}, 99.99, None) is None


class _Test:
    """The few TestResult fields latency_qos.cells reads."""
    rw_mixes = ("0/100",)
    block_sizes = (4096,)
    cells = ()


def test_one_short_window_point_makes_the_cell_not_resolvable():
    found = [PointBins(3, "0/100", 4096, _bins(2_000_000), None),
             PointBins(4, "0/100", 4096, _bins(150_000), None)]
    (cell,) = latency_qos.cells(_Test(), found)
    states = {lv.pct: lv.state for lv in cell.levels}
    assert states == {99.99: OK, 99.999: OK, 99.9999: NOT_RESOLVABLE}
    assert cell.fewest_ios == 150_000 and cell.points == 2
    assert next(lv for lv in cell.levels if lv.pct == 99.9999).us is None


def test_a_cell_without_bins_is_na():
    (cell,) = latency_qos.cells(_Test(), [])
    assert {lv.state for lv in cell.levels} == {NO_BINS}
    assert cell.fewest_ios is None
