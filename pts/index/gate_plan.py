"""How many runs a side a comparison needs (issue 50 §5): given the spread the runs show,
the runs a side that detect a given change with a given power, for the one-sided t-tests of
the release gate (pts.index.release_gate).

Exact for the t-test under its own model, not a normal approximation: the power of a
one-sided t-test whose true effect lies `distance` beyond its null bound is the noncentral
t's tail, P(T' > t_{1 - level, df}) with T' ~ t(df, ncp) (scipy.stats.nct):
- unpaired, n runs a side, one spread sd on both sides: df = 2 n - 2,
  ncp = distance / (sd x sqrt(2 / n)) (the pooled-variance test's; Welch's df is at most
  this, so with unequal spreads the runs found are a little few);
- paired, n drives that run both firmwares, sd the spread of their differences:
  df = n - 1, ncp = distance / (sd / sqrt(n)).
The normal approximation (z instead of t) asks for one or two runs fewer than needed at the
few runs a lab makes (3 to 10): the t's heavier tail at small df is the whole question here.
Distances and spreads on the gate's scale (the log of the figures: 0.02 is about 2 %).
"""

from __future__ import annotations

import math

from scipy import stats

N_MAX = 200             # runs a side: beyond this the question is the margin, not the runs


def power(distance: float, sd: float, n: int, level: float, paired: bool = False) -> float:
    """The chance that a one-sided t-test at `level` with n runs a side (paired: n drives)
    rejects when the truth lies `distance` beyond its null bound, at spread `sd`."""
    if n < 2:
        return 0.0
    if sd <= 0:
        return 1.0 if distance > 0 else 0.0
    df = n - 1 if paired else 2 * n - 2
    ncp = distance / (sd / math.sqrt(n) if paired else sd * math.sqrt(2 / n))
    return float(stats.nct.sf(stats.t.ppf(1 - level, df), df, ncp))


def runs_a_side(distance: float, sd: float, level: float, goal: float,
                paired: bool = False, n_max: int = N_MAX) -> int | None:
    """The fewest runs a side (paired: drives) with power(...) >= goal; None above n_max
    (the change is about the size of the margin: runs do not tell it apart)."""
    if distance <= 0:
        return None
    lo, hi = 2, n_max
    if power(distance, sd, hi, level, paired) < goal:
        return None
    while lo < hi:                      # power grows with n: the first n that reaches goal
        mid = (lo + hi) // 2
        if power(distance, sd, mid, level, paired) >= goal:
            hi = mid
        else:
            lo = mid + 1
    return lo
