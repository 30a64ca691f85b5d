"""Latency percentiles from fio's latency histograms (pure, no I/O).

fio counts every latency in a log-linear histogram: values below 128 ns have a bin each;
above, each power of two is split into 64 bins, so a bin is at most 1/64 of its value wide.
fio reports a bin by its midpoint (`plat_idx_to_val` in fio's stat.c); json+ output gives
{midpoint_ns: count} ("bins"), the histogram log (write_hist_log) one count per bin index.

The percentile rule is fio's own (stat.c, calc_clat_percentiles): the p-th percentile is the
first bin, in ascending order, where the running count reaches p/100 x N. Applied to one
direction's bins this reproduces fio's reported percentiles exactly (tests/unit/test_histogram.py),
and applied to read + write bins merged it gives the percentile of a mixed workload, which
fio does not report.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

PLAT_BITS = 6                 # FIO_IO_U_PLAT_BITS
PLAT_VAL = 1 << PLAT_BITS     # FIO_IO_U_PLAT_VAL: bins per power of two
PLAT_GROUPS = 29              # FIO_IO_U_PLAT_GROUP_NR (fio >= 3.x, nanoseconds)
PLAT_NR = PLAT_GROUPS * PLAT_VAL   # 1856 bins


def bin_value(index: int) -> int:
    """fio's plat_idx_to_val: the midpoint (ns, truncated as fio does) of bin `index`."""
    if not 0 <= index < PLAT_NR:
        raise ValueError(f"histogram bin index {index} is outside 0..{PLAT_NR - 1}")
    if index < 2 * PLAT_VAL:
        return index
    error_bits = (index >> PLAT_BITS) - 1
    base = 1 << (error_bits + PLAT_BITS)
    return int(base + (index % PLAT_VAL + 0.5) * (1 << error_bits))


def from_counts(counts: Sequence[int]) -> dict[int, int]:
    """A histogram-log line's per-index counts as {midpoint_ns: count} (non-zero bins)."""
    return {bin_value(i): int(c) for i, c in enumerate(counts) if c}


def merge(*histograms: Mapping[int, int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for hist in histograms:
        for value, count in hist.items():
            out[int(value)] = out.get(int(value), 0) + int(count)
    return out


def total(hist: Mapping[int, int]) -> int:
    return sum(hist.values())


def percentile(hist: Mapping[int, int], pct: float) -> int | None:
    """fio's p-th percentile of a {value_ns: count} histogram; None if it is empty."""
    if not 0 < pct <= 100:
        raise ValueError(f"percentile {pct} is outside (0, 100]")
    n = total(hist)
    if n == 0:
        return None
    threshold, running = pct / 100.0 * n, 0
    for value in sorted(hist):
        running += hist[value]
        if running >= threshold:
            return value
    return max(hist)   # not reached: float rounding at 100 %


def maximum(hist: Mapping[int, int]) -> int | None:
    """The highest non-empty bin's midpoint (the maximum to histogram resolution)."""
    values = [v for v, c in hist.items() if c]
    return max(values) if values else None


def mean(hist: Mapping[int, int]) -> float | None:
    n = total(hist)
    return None if n == 0 else sum(v * c for v, c in hist.items()) / n


def parse_bins(bins: Mapping[str, int] | Iterable) -> dict[int, int]:
    """json+ "bins" ({"12992": 5, ...}) as {int ns: count}."""
    return {int(k): int(v) for k, v in dict(bins).items()}
