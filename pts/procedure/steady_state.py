"""Steady-state maths of the PTS (pure numpy, no I/O).

Definition (PTS 2.0.2 §2.1.24, p.17; PTS-E 1.0 §2.1.18): a tracking variable y is in steady
state over a measurement window of 5 consecutive rounds x-4..x when both hold:

  (a) data excursion:  max(y) - min(y)            <= 20 % of mean(y)
  (b) slope excursion: |b| * (x_last - x_first)   <= 10 % of mean(y)

where b is the least-squares slope of y against the round number:
  b = sum((x - xbar)(y - ybar)) / sum((x - xbar)^2),  a = ybar - b * xbar.
|b| * (x_last - x_first) is the difference between the highest and the lowest value of the
fitted line inside the window.

"No more than" is read as inclusive (<=): the clause body says "no more than 20 %" and
"within 10 %" (the headings say "less than"; see pts-digest §11.1). The boundary is tested.
Nothing is rounded before comparing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

WINDOW_ROUNDS = 5          # PTS 2.0.2 §2.1.24: measurement window of 5 rounds
MAX_DATA_EXCURSION = 0.20  # PTS 2.0.2 §2.1.24 (a): range within 20 % of the window average
MAX_SLOPE_EXCURSION = 0.10  # PTS 2.0.2 §2.1.24 (b): fitted-line excursion within 10 %


class SteadyStateError(ValueError):
    """The input cannot be judged (too few rounds, non-numbers, bad limits)."""


@dataclass(frozen=True)
class SteadyStateResult:
    """All the evidence of one steady-state check over one measurement window."""

    steady: bool
    window_first: int          # 1-based round number of the first round in the window
    window_last: int
    rounds: tuple[int, ...]
    values: tuple[float, ...]
    average: float
    minimum: float
    maximum: float
    data_excursion: float      # max - min
    slope: float               # least-squares slope, per round
    intercept: float           # least-squares intercept (y at round 0)
    slope_excursion: float     # |slope| * (window_last - window_first)
    correlation: float | None  # Pearson r of (round, value); reported, not a criterion
    data_excursion_limit: float    # fraction of the average
    slope_excursion_limit: float   # fraction of the average
    max_data_excursion: float      # absolute: fraction * average
    max_slope_excursion: float     # absolute: fraction * average
    data_excursion_ok: bool
    slope_excursion_ok: bool

    def as_dict(self) -> dict:
        d = asdict(self)
        d["rounds"] = list(self.rounds)
        d["values"] = list(self.values)
        return d


def _as_float_array(values: Sequence[float], what: str) -> np.ndarray:
    try:
        arr = np.asarray([float(v) for v in values], dtype=float)
    except (TypeError, ValueError) as exc:
        raise SteadyStateError(f"{what} must be numbers: {exc}") from None
    if not np.all(np.isfinite(arr)):
        raise SteadyStateError(f"{what} must be finite numbers, got {list(values)!r}")
    return arr


def check(
    values: Sequence[float],
    rounds: Sequence[int] | None = None,
    window: int = WINDOW_ROUNDS,
    max_data_excursion: float = MAX_DATA_EXCURSION,
    max_slope_excursion: float = MAX_SLOPE_EXCURSION,
) -> SteadyStateResult:
    """Judge the last `window` values of a tracking variable.

    `values` are per-round values in round order; `rounds` their 1-based round numbers
    (default 1..len(values)). Only the last `window` values are judged.
    """
    if window < 2:
        raise SteadyStateError(f"window must be at least 2 rounds, got {window}")
    for name, lim in (("max_data_excursion", max_data_excursion),
                      ("max_slope_excursion", max_slope_excursion)):
        if not (isinstance(lim, int | float) and 0 <= lim and np.isfinite(lim)):
            raise SteadyStateError(f"{name} must be a fraction >= 0, got {lim!r}")
    y_all = _as_float_array(values, "round values")
    if len(y_all) < window:
        raise SteadyStateError(
            f"need at least {window} round values for a {window}-round window, got {len(y_all)}")
    if rounds is None:
        x_all = np.arange(1, len(y_all) + 1, dtype=float)
    else:
        x_all = _as_float_array(rounds, "round numbers")
        if len(x_all) != len(y_all):
            raise SteadyStateError(f"{len(x_all)} round numbers for {len(y_all)} values")
    x, y = x_all[-window:], y_all[-window:]
    if np.any(np.diff(x) <= 0):
        raise SteadyStateError(f"round numbers must increase, got {list(x)}")

    xbar, ybar = x.mean(), y.mean()
    sxx = float(np.sum((x - xbar) ** 2))
    sxy = float(np.sum((x - xbar) * (y - ybar)))
    slope = sxy / sxx
    intercept = float(ybar - slope * xbar)
    syy = float(np.sum((y - ybar) ** 2))
    correlation = sxy / np.sqrt(sxx * syy) if syy > 0 else None

    data_excursion = float(y.max() - y.min())
    slope_excursion = abs(slope) * float(x[-1] - x[0])
    abs_data_limit = max_data_excursion * float(ybar)
    abs_slope_limit = max_slope_excursion * float(ybar)
    data_ok = data_excursion <= abs_data_limit
    slope_ok = slope_excursion <= abs_slope_limit
    return SteadyStateResult(
        steady=bool(data_ok and slope_ok),
        window_first=int(x[0]),
        window_last=int(x[-1]),
        rounds=tuple(int(r) for r in x),
        values=tuple(float(v) for v in y),
        average=float(ybar),
        minimum=float(y.min()),
        maximum=float(y.max()),
        data_excursion=data_excursion,
        slope=float(slope),
        intercept=intercept,
        slope_excursion=float(slope_excursion),
        correlation=None if correlation is None else float(correlation),
        data_excursion_limit=float(max_data_excursion),
        slope_excursion_limit=float(max_slope_excursion),
        max_data_excursion=abs_data_limit,
        max_slope_excursion=abs_slope_limit,
        data_excursion_ok=bool(data_ok),
        slope_excursion_ok=bool(slope_ok),
    )


def check_all(
    series: Mapping[str, Sequence[float]],
    rounds: Sequence[int] | None = None,
    **limits,
) -> tuple[bool, dict[str, SteadyStateResult]]:
    """Judge several tracking variables over the same window (PTS 2.0.2 IOPS: all three
    tracking variables must be steady in the same measurement window)."""
    results = {label: check(vals, rounds, **limits) for label, vals in series.items()}
    return all(r.steady for r in results.values()), results
