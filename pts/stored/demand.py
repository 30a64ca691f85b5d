"""A demand-variation test's points (DIRTH, CBW, rwsw-dirth) per (TC, QD): the mean of each
recorded field over the measurement window rounds, and the fewest I/Os of one of those points
(whether a QoS level is resolvable). The DIRTH/CBW pages and `python -m pts compare` read it.
"""

from __future__ import annotations

from pts.stored.model import TestResult

FEWEST = "fewest_ios"      # grid key: the fewest I/Os of a window point (QoS resolvability)


def grid(test: TestResult) -> dict[tuple[int, int], dict[str, float | None]]:
    """(TC, QD) -> {field: mean over the measurement window rounds (every round when the
    test has no window), FEWEST: the fewest I/Os of one of those points}."""
    rounds = set(test.window_rounds) or {p.round for p in test.points}
    acc: dict[tuple[int, int], list] = {}
    for p in test.points:
        tc, qd = p.get("thread_count"), p.get("queue_depth")
        if p.round in rounds and not p.na and tc is not None:
            acc.setdefault((int(tc), int(qd)), []).append(p.values)
    out = {}
    for key, rows in acc.items():
        names = {k for r in rows for k in r}
        out[key] = {k: _mean([r.get(k) for r in rows]) for k in names}
        out[key][FEWEST] = min((r["ios"] for r in rows if r.get("ios") is not None),
                               default=None)
    return out


def _mean(values) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None
