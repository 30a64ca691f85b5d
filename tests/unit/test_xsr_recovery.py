"""The XSR recovery-time rule (pts.testdefs.xsr_recovery) on constructed TP series."""

import random

from pts.testdefs.xsr_recovery import final_level, recovery_time


def rule(tp, interval_s=60.0):
    return recovery_time(tp, interval_s, band_pct=10.0, sustain=5, final_fraction=0.25)


def test_fall_then_settle_recovers_at_the_first_settled_interval():
    # SEQ -> RND: TP falls from 500 to 100 MB/s over 6 intervals, then holds 100.
    tp = [500, 420, 340, 260, 180, 120] + [100] * 14
    r = rule(tp)
    assert r.final_level == 100 and r.recovered
    assert r.interval == 6 and r.seconds == 360.0


def test_rise_back_recovers_as_well():
    tp = [100, 150, 250, 350, 440, 495] + [500] * 14
    r = rule(tp)
    assert r.recovered and r.interval == 5            # 495 is within 10 % of 500
    assert r.seconds == 300.0


def test_already_settled_recovers_at_zero():
    r = rule([300.0] * 12)
    assert r.recovered and r.seconds == 0.0


def test_never_settles_is_stated():
    # A steady drift: no 5 intervals in a row within 10 % of the last quarter's mean.
    tp = [1000 - 60 * k for k in range(16)]
    r = rule(tp)
    assert not r.recovered and r.seconds is None and r.interval is None
    assert r.text().startswith("never")


def test_noisy_spike_inside_the_run_restarts_the_count():
    # Settled at 200 from interval 3 but interval 6 dips 30 %: the sustained run begins at 7.
    tp = [50, 100, 150, 200, 200, 200, 140, 200, 200, 200, 200, 200, 200, 200, 200, 200]
    r = rule(tp)
    assert r.recovered and r.interval == 7 and r.seconds == 420.0


def test_noise_within_the_band_does_not_stop_recovery():
    rng = random.Random(3)
    tp = [20.0, 60.0] + [200 * (1 + rng.uniform(-0.05, 0.05)) for _ in range(30)]
    r = rule(tp)
    assert r.recovered and r.interval == 2


def test_too_short_a_group_never_recovers_and_final_level_uses_at_least_one():
    assert not rule([100, 100, 100]).recovered               # fewer than `sustain` intervals
    assert final_level([10, 20, 30], 0.01) == 30
    assert not rule([]).recovered
