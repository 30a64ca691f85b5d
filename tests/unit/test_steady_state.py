"""Steady-state maths against hand-computed cases (pts-digest §6.6) and scipy.stats."""

import numpy as np
import pytest
from scipy import stats

from pts.procedure.steady_state import SteadyStateError, check, check_all


def test_constant_series_is_steady_with_zero_excursions():
    r = check([1000.0] * 5)
    assert r.steady and r.data_excursion == 0 and r.slope == 0 and r.slope_excursion == 0
    assert (r.window_first, r.window_last) == (1, 5)
    assert r.correlation is None          # undefined for a constant series


def test_example_b_hand_computed():
    # rounds 6..10: avg 47500, range 4000 (8.42 %), slope -950, 4|b| = 3800 (8 %), a = 55100
    r = check([50000, 48000, 47000, 46500, 46000], rounds=[6, 7, 8, 9, 10])
    assert r.steady
    assert r.average == 47500 and r.data_excursion == 4000
    assert r.slope == pytest.approx(-950) and r.intercept == pytest.approx(55100)
    assert r.slope_excursion == pytest.approx(3800)
    assert r.max_data_excursion == pytest.approx(9500) and r.max_slope_excursion == 4750
    assert (r.window_first, r.window_last) == (6, 10)


def test_ramp_just_inside_slope_limit():
    # slope 2.45/round on avg 100: excursion 9.8 % (range 9.8 % too) -> steady
    r = check([100 - 4.9, 100 - 2.45, 100, 102.45, 104.9])
    assert r.slope_excursion == pytest.approx(9.8) and r.slope_excursion_ok and r.steady


def test_ramp_just_outside_slope_limit():
    # example C: 100..112 step 3: excursion 12 = 11.32 % of 106 -> not steady, range passes
    r = check([100, 103, 106, 109, 112])
    assert r.data_excursion_ok and not r.slope_excursion_ok and not r.steady
    r = check([100 - 5.1, 100 - 2.55, 100, 102.55, 105.1])   # 10.2 %
    assert not r.slope_excursion_ok


def test_range_exactly_20_percent_passes_inclusive_limit():
    # example F: 1000,1100,1000,900,1000 -> range 200 = exactly 20 % -> steady (<=)
    r = check([1000, 1100, 1000, 900, 1000], rounds=range(21, 26))
    assert r.data_excursion == 200 and r.max_data_excursion == 200
    assert r.data_excursion_ok and r.steady
    assert not check([1000, 1100.5, 1000, 900, 1000]).data_excursion_ok


def test_single_spike_passes_definition_late_spike_fails():
    assert check([100, 100, 119, 100, 100]).steady          # example D
    r = check([100, 100, 100, 100, 119])                     # example E: slope 14.6 %
    assert r.data_excursion_ok and not r.slope_excursion_ok


def test_only_the_last_window_is_judged():
    r = check([10, 500, 900, 1000, 1000, 1000, 1000, 1000])
    assert r.steady and (r.window_first, r.window_last) == (4, 8)


@pytest.mark.parametrize("seed", range(20))
def test_against_scipy_linregress(seed):
    rng = np.random.default_rng(seed)
    y = 50000 + rng.normal(0, 1500, 5) + rng.uniform(-800, 800) * np.arange(5)
    x = np.arange(11, 16)
    r = check(list(y), rounds=list(x))
    ref = stats.linregress(x, y)
    assert r.slope == pytest.approx(ref.slope, rel=1e-9)
    assert r.intercept == pytest.approx(ref.intercept, rel=1e-9)
    assert r.correlation == pytest.approx(ref.rvalue, rel=1e-9)
    assert r.slope_excursion == pytest.approx(abs(ref.slope) * 4)
    assert r.steady == (np.ptp(y) <= 0.2 * y.mean() and abs(ref.slope) * 4 <= 0.1 * y.mean())


def test_noisy_series_passes():
    rng = np.random.default_rng(7)
    y = 80000 * (1 + rng.uniform(-0.04, 0.04, 5))
    assert check(list(y)).steady


@pytest.mark.parametrize("values", [[], [1, 2, 3, 4], [1, 2, "x", 4, 5],
                                    [1, 2, float("nan"), 4, 5]])
def test_bad_input_is_an_error(values):
    with pytest.raises(SteadyStateError):
        check(values)


def test_all_variables_must_be_steady_in_the_same_window():
    steady, results = check_all({"a": [100] * 5, "b": [100, 103, 106, 109, 112]})
    assert not steady and results["a"].steady and not results["b"].steady
    assert check_all({"a": [100] * 5, "b": [7] * 5})[0]


def test_result_is_frozen():
    r = check([1, 1, 1, 1, 1])
    with pytest.raises(AttributeError):
        r.steady = False
