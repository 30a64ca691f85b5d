"""Change points in a series of runs' figures (a model's runs in time order): E-divisive with a
permutation test, on numpy.

The method is Matteson and James's E-divisive (D. S. Matteson, N. A. James, "A Nonparametric
Approach for Multiple Change Point Analysis of Multivariate Data", Journal of the American
Statistical Association 109 (505), 2014, pp. 334-345; the R package `ecp`, function
`e.divisive`, by its authors), the method Apache Otava (formerly DataStax's Hunter) and
MongoDB's performance CI build on to find where a benchmark's level changed. Written here on
numpy rather than taken from a package: PyPI's `ruptures` installs here, but its searches
(Pelt, Binseg) need a penalty per series chosen by hand and give no significance, where
E-divisive's permutation test gives each change point a p-value against a stated level, the
same kind of statement as the firmware verdicts (pts.index.history). No distribution is
assumed (the runs need not be normal), only that without a change the order of the runs is
exchangeable.

For a segment Z[s:e] split at tau into X = Z[s:tau] (m values) and Y = Z[tau:e] (n values),
with alpha = 1 (the paper's default exponent, 0 < alpha < 2):

    E(X, Y) = 2/(m n) sum |X_i - Y_j| - 1/C(m,2) sum_{i<k} |X_i - X_k|
                                      - 1/C(n,2) sum_{j<k} |Y_j - Y_k|
    Q(tau)  = m n / (m + n) * E(X, Y)

(the paper's eq. 6 with its kappa fixed at the segment's end, as the hierarchical search
starts). Each step takes, over the segments found so far, the split with the largest Q; it is
kept when the permutation test says it is significant: the values of every segment shuffled
within their segment PERMUTATIONS times (numpy's Generator seeded with SEED, so the same
series always gives the same answer), the largest Q found each time, p = (1 + #{Q_perm >=
Q}) / (PERMUTATIONS + 1); kept when p <= the level (the permutations stop early once p is
above it whatever the rest would give). Segments hold at least MIN_SIZE runs
(the within-segment means need two). Stops at the first split not significant.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

PERMUTATIONS = 199     # p-values down to 1/200 = 0.005
SEED = 41              # fixed: a series gives the same change points every time it is read
MIN_SIZE = 2           # runs in a segment, at least
# series whose answer a process keeps (find_cached): a lab's models' figures
CACHED = 8192
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


def find(values: Sequence[float], level: float, permutations: int = PERMUTATIONS,
         seed: int = SEED) -> list[ChangePoint]:
    """The change points of `values` (in order), significant at `level`, in series order."""
    z = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(z)):
        raise ValueError("change points need finite values")
    rng = np.random.default_rng(seed)
    bounds = [0, len(z)]
    found: dict[int, float] = {}
    while True:
        index, q = _strongest(z, bounds)
        if q == float("-inf"):
            break
        shuffled, at_least = z.copy(), 0
        for _ in range(permutations):
            for s, e in zip(bounds, bounds[1:], strict=False):
                shuffled[s:e] = rng.permutation(z[s:e])
            if _strongest(shuffled, bounds)[1] >= q:
                at_least += 1
                if (1 + at_least) / (permutations + 1) > level:
                    break          # not significant, whatever the permutations left say
        p = (1 + at_least) / (permutations + 1)
        if p > level:
            break
        found[index] = p
        bounds = sorted(bounds + [index])
    out = []
    for k, index in enumerate(bounds[1:-1], 1):
        out.append(ChangePoint(index, found[index], float(z[bounds[k - 1]:index].mean()),
                               float(z[index:bounds[k + 1]].mean())))
    return out


@functools.lru_cache(maxsize=CACHED)
def find_cached(values: tuple[float, ...], level: float) -> tuple[ChangePoint, ...]:
    """find(values, level), answered once per series and level in a process: its answer
    depends on nothing else (the permutations are seeded), and the dashboard's history page
    asks again for every figure at every visit (100 runs x 136 changing figures: 7.7 s)."""
    return tuple(find(values, level))

