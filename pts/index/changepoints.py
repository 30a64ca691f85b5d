"""Change points in a series of runs' figures (a model's runs in time order): where the split
falls by E-divisive, whether it is real by Student's t-test at that split with Bonferroni's
factor over the splits the search could have chosen, and over all the series of a history at
once by Holm's step-down; on numpy and scipy.

Where: Matteson and James's E-divisive (D. S. Matteson, N. A. James, "A Nonparametric
Approach for Multiple Change Point Analysis of Multivariate Data", Journal of the American
Statistical Association 109 (505), 2014, pp. 334-345; the R package `ecp`, function
`e.divisive`), the method Apache Otava (formerly DataStax's Hunter) and MongoDB's performance
CI build on. Written here on numpy rather than taken from a package: PyPI's `ruptures`
installs here, but its searches (Pelt, Binseg) need a penalty per series chosen by hand and
give no significance. For a segment Z[s:e] split at tau into X = Z[s:tau] (m values) and
Y = Z[tau:e] (n values), with alpha = 1 (the paper's default exponent, 0 < alpha < 2):

    E(X, Y) = 2/(m n) sum |X_i - Y_j| - 1/C(m,2) sum_{i<k} |X_i - X_k|
                                      - 1/C(n,2) sum_{j<k} |Y_j - Y_k|
    Q(tau)  = m n / (m + n) * E(X, Y)

(the paper's eq. 6 with its kappa fixed at the segment's end); each step takes, over the
segments found so far, the split with the largest Q.

Whether (issue 50 §1: the level held over the whole history): the paper's permutation test
gives p no smaller than about 2 / C(n, n/2) with n runs, and no smaller than 1 / (B + 1)
with B permutations: 199 stop at 0.005, and 10 runs (5 + 5) cannot go below about 0.008
however many permutations, so a level shared by 136 figures (0.05 / 136 = 0.00037) could
never be reached. Here the split's p is analytic: Student's two-sided t-test of X against Y
with the pooled variance (both sides without spread: p 0 if their means differ, else 1)
times K, the number of splits the search chose among in that segment (Bonferroni: whichever
split the search picks, the chance that any of the K has p <= level / K is at most level,
so the choice by Q costs nothing beyond K). Pooled, not Welch's: without a change both sides
are one distribution, so their variances are equal under the null and the pooled test is
exact for normal runs, where Welch's, with 2 runs on a side, is far too bold in the tail
(flat series of 10 runs at 4 %: two close values gave p = 4e-5). It assumes runs
independent and roughly normal (as the firmware verdicts do), no longer only
exchangeability.
A segment holds at least MIN_SIZE runs (the t-test needs two a side). `find` stops at the
first split not significant at its level.

Over the figures of a history (`holm`): each series' first split's p, Holm's step-down over
them (the smallest against level / m, the next against level / (m - 1), ... until one is
above its bound; Holm 1979): the chance that any series without a change gets a change point
is at most the level, however many series, under any dependence between them. A series kept
is split further at the bound Holm gave it. Holm rather than Benjamini-Hochberg for the same
reason as the release gate (docs/history.md): a change point sends someone to look at that
figure's runs, so what counts is histories with any false one.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

MIN_SIZE = 2           # runs in a segment, at least
ALPHA = 1.0            # the distance's exponent (Matteson & James: 0 < alpha < 2)


@dataclass(frozen=True)
class ChangePoint:
    """The series' level changes at `index` (the first value of the new level)."""

    index: int
    p_value: float
    mean_before: float     # the segments either side of it, as finally split
    mean_after: float


def _prefix(d: np.ndarray) -> np.ndarray:
    """2D prefix sums: P[i, j] = sum of d[:i, :j]."""
    p = np.zeros((d.shape[0] + 1, d.shape[1] + 1))
    p[1:, 1:] = d.cumsum(0).cumsum(1)
    return p


def _best_split(d: np.ndarray) -> tuple[int, float]:
    """The split of a segment (its distance matrix `d`) with the largest Q: (tau, Q), tau the
    size of the left part; (0, -inf) when the segment is too short to split."""
    size = d.shape[0]
    taus = np.arange(MIN_SIZE, size - MIN_SIZE + 1)
    if len(taus) == 0:
        return 0, float("-inf")
    p = _prefix(d)
    total = p[size, size]
    left = p[taus, taus]                       # sum over X x X (both orders)
    between = p[taus, size] - left             # sum over X x Y
    right = total - left - 2 * between         # sum over Y x Y (both orders)
    m, n = taus.astype(float), (size - taus).astype(float)
    # sum_{i<k} = half the full double sum (the diagonal is 0); C(m,2) = m (m - 1) / 2
    e = 2 * between / (m * n) - left / (m * (m - 1)) - right / (n * (n - 1))
    q = m * n / (m + n) * e
    best = int(np.argmax(q))
    return int(taus[best]), float(q[best])


def _distances(z: np.ndarray) -> np.ndarray:
    return np.abs(z[:, None] - z[None, :]) ** ALPHA


def _strongest(z: np.ndarray, bounds: list[int]) -> tuple[int, float]:
    """Over the segments bounds[k]..bounds[k+1], the split with the largest Q: (index, Q)."""
    found = (0, float("-inf"))
    for s, e in zip(bounds, bounds[1:], strict=False):
        tau, q = _best_split(_distances(z[s:e]))
        if q > found[1]:
            found = (s + tau, q)
    return found


def split_p(z: np.ndarray, s: int, e: int, tau: int) -> float:
    """Student's two-sided p (pooled variance) of Z[s:tau] against Z[tau:e], times the
    splits the segment had (Bonferroni), at most 1."""
    x, y = z[s:tau], z[tau:e]
    splits = (e - s) - 2 * MIN_SIZE + 1
    df = len(x) + len(y) - 2
    pooled = (((x - x.mean()) ** 2).sum() + ((y - y.mean()) ** 2).sum()) / df
    diff = y.mean() - x.mean()
    if pooled == 0:
        p = 0.0 if diff != 0 else 1.0
    else:
        t = abs(diff) / np.sqrt(pooled * (1 / len(x) + 1 / len(y)))
        p = 2 * float(special.stdtr(df, -t))
    return min(1.0, splits * p)


def _series(values: Sequence[float]) -> np.ndarray:
    z = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(z)):
        raise ValueError("change points need finite values")
    return z


def first_p(values: Sequence[float]) -> float:
    """The p of the series' first split (1.0: too short to split)."""
    z = _series(values)
    tau, q = _best_split(_distances(z))
    return 1.0 if q == float("-inf") else split_p(z, 0, len(z), tau)


def holm(series: Sequence[Sequence[float]], level: float) -> list[list[ChangePoint]]:
    """The change points of every series, the level held for all of them together (the
    module's docstring); a list per series, in input order."""
    m = len(series)
    order = sorted(range(m), key=lambda i: first_p(series[i]))
    out: list[list[ChangePoint]] = [[] for _ in range(m)]
    for rank, i in enumerate(order):
        bound = level / (m - rank)
        found = find(series[i], bound)
        if not found:
            break                   # its first split is above its bound: Holm stops here
        out[i] = found
    return out


def find(values: Sequence[float], level: float) -> list[ChangePoint]:
    """The change points of `values` (in order), significant at `level`, in series order."""
    z = _series(values)
    bounds = [0, len(z)]
    found: dict[int, float] = {}
    while True:
        index, q = _strongest(z, bounds)
        if q == float("-inf"):
            break
        s_ = max(b for b in bounds if b < index)
        p = split_p(z, s_, min(b for b in bounds if b > index), index)
        if p > level:
            break
        found[index] = p
        bounds = sorted(bounds + [index])
    out = []
    for k, index in enumerate(bounds[1:-1], 1):
        out.append(ChangePoint(index, found[index], float(z[bounds[k - 1]:index].mean()),
                               float(z[index:bounds[k + 1]].mean())))
    return out


@functools.lru_cache(maxsize=64)
def holm_cached(series: tuple[tuple[float, ...], ...], level: float
                ) -> tuple[tuple[ChangePoint, ...], ...]:
    """holm(series, level), answered once per history and level in a process: the dashboard
    asks again at every visit."""
    return tuple(tuple(found) for found in holm(series, level))
