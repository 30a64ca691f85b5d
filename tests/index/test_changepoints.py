"""Change points under one level for the whole history (issue 50 §1, pts.index.changepoints):
a split's p is Student's (pooled) at the split times the splits searched (Bonferroni), computed here
by hand with scipy.stats; Holm's step-down over the series' first splits. Each threshold
with values on both sides: the level at 0.99 and 1.01 x a split's p; Holm's bounds level / 2
and level / 1 for two series, and a series that the level alone would keep but Holm does
not."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from pts.index import changepoints

STEP = [100.0, 102.0, 99.0, 101.0, 100.5, 95.0, 96.5, 94.0, 95.5, 96.0]     # -5 % at run 6


def hand_p(values, tau: int) -> float:
    """Student's pooled two-sided p at tau times the 10 - 2 x 2 + 1 = 7 splits searched."""
    p = stats.ttest_ind(values[tau:], values[:tau], equal_var=True).pvalue
    return min(1.0, (len(values) - 2 * changepoints.MIN_SIZE + 1) * p)


def test_a_split_s_p_is_student_s_times_the_splits_by_hand():
    p = hand_p(STEP, 5)
    assert changepoints.first_p(STEP) == pytest.approx(p, rel=1e-9) and 1e-6 < p < 0.01
    (c,) = changepoints.find(STEP, p * 1.01)
    assert (c.index, c.mean_before, c.mean_after) == (5, pytest.approx(100.5),
                                                        pytest.approx(95.4))
    assert c.p_value == pytest.approx(p, rel=1e-9)
    assert changepoints.find(STEP, p * 0.99) == []
    assert changepoints.find([3.0] * 8, 0.05) == [] and changepoints.first_p([1, 2, 3]) == 1.0
    assert [c.index for c in changepoints.find([5.0] * 4 + [6.0] * 4, 1e-12)] == [4]  # exact


def test_holm_over_the_series_by_hand():
    """Three series, first-split p's p1 < p2 < p3 (= 1, flat): Holm keeps the smallest if
    p1 <= level / 3, then the next if p2 <= level / 2, each bound with levels on both sides;
    at level 2 x p2 x 0.99 the second series is held back though p2 is below the level."""
    weak = [100.0, 101.0, 99.5, 100.5, 100.0, 98.5, 99.0, 98.0, 99.2, 98.6]
    flat = [50.0, 51.0, 49.0, 50.5, 49.5, 50.2, 49.8, 50.4, 49.6, 50.0]
    p1, p2 = hand_p(STEP, 5), hand_p(weak, 5)
    assert changepoints.first_p(weak) == pytest.approx(p2, rel=1e-9)
    assert changepoints.first_p(flat) == 1.0
    assert 0 < 3 * p1 < 2 * p2 < 0.05                   # the bounds below fall in order
    three = [STEP, weak, flat]

    def kept(level: float) -> list[int]:
        return [len(f) for f in changepoints.holm(three, level)]
    assert kept(3 * p1 * 0.99) == [0, 0, 0]             # p1 above level / 3: none at all
    assert kept(3 * p1 * 1.01) == [1, 0, 0]
    assert kept(2 * p2 * 0.99) == [1, 0, 0]             # p2 above level / 2
    assert kept(2 * p2 * 1.01) == [1, 1, 0]
    assert changepoints.find(weak, 2 * p2 * 0.99)       # alone at that level: kept


def test_flat_series_give_none_and_a_step_is_found_among_them():
    rng = np.random.default_rng(50)
    flat = [list(1000 * np.exp(0.04 * rng.standard_normal(10))) for _ in range(136)]
    assert all(f == [] for f in changepoints.holm(flat, 0.05))
    stepped = flat[:135] + [[1000.0] * 5 + [800.0] * 5]
    found = changepoints.holm(stepped, 0.05)
    assert [c.index for c in found[135]] == [5] and all(f == [] for f in found[:135])
