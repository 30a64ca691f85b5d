"""XSR recovery time (pts-digest §7.6; the spec's own definition is unconfirmed, the suite's
is in specs/*.toml [xsr] with its justification): after a switch of stimulus, the time until
throughput (TP) has settled at the new access group's own final level.

  final level  = mean TP of the group's last `final_fraction` of intervals (at least one);
  recovered at = the start of the first interval of the first run of `sustain` consecutive
                 intervals whose TP all lie within `band_pct` % of the final level;
  recovery time = (that interval's index) x interval seconds, from the switch.

A group whose TP never holds inside the band for `sustain` intervals (it drifts to the end,
or is too short) has no recovery time: `recovered` False, stated as such on the report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Recovery:
    final_level: float
    recovered: bool
    interval: int | None        # 0-based index of the first interval of the settled run
    seconds: float | None       # interval x interval_s

    def text(self) -> str:
        if not self.recovered:
            return "never (not settled within the group)"
        return f"{self.seconds:,.0f} s ({self.seconds / 60:,.1f} min)"


def final_level(tp: Sequence[float], final_fraction: float) -> float:
    n = max(1, math.ceil(len(tp) * final_fraction))
    tail = list(tp[-n:])
    return sum(tail) / len(tail)


def recovery_time(tp: Sequence[float], interval_s: float, band_pct: float, sustain: int,
                  final_fraction: float) -> Recovery:
    if not tp:
        return Recovery(0.0, False, None, None)
    level = final_level(tp, final_fraction)
    band = abs(level) * band_pct / 100
    run = 0
    for k, v in enumerate(tp):
        run = run + 1 if abs(v - level) <= band else 0
        if run >= sustain:
            first = k - sustain + 1
            return Recovery(level, True, first, first * interval_s)
    return Recovery(level, False, None, None)
