"""Progress lines with ETA for long runs: one line per round, and one per point when points
are long enough (>= 10 s) that a line per point stays readable."""

from __future__ import annotations

import time
from collections.abc import Callable


def _hms(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}"


class Progress:
    def __init__(self, write: Callable[[str], None], test: str, points_per_round: int,
                 point_seconds: int, window: int, max_rounds: int):
        self.write, self.test = write, test
        self.points_per_round, self.point_seconds = points_per_round, point_seconds
        self.window, self.max_rounds = window, max_rounds
        self.start = time.monotonic()
        self.points_done = 0

    def _per_point(self) -> float:
        elapsed = time.monotonic() - self.start
        return elapsed / self.points_done if self.points_done else self.point_seconds + 0.3

    def eta(self, round_no: int, index: int) -> tuple[float, float]:
        """Best case (steady at the earliest possible round) and worst case (max rounds)."""
        left_in_round = self.points_per_round - (index + 1)
        best_rounds = max(self.window - round_no, 0)
        worst_rounds = self.max_rounds - round_no
        per = self._per_point()
        return ((left_in_round + best_rounds * self.points_per_round) * per,
                (left_in_round + worst_rounds * self.points_per_round) * per)

    def message(self, text: str) -> None:
        self.write(f"[pts {self.test}] {text}")

    def point(self, round_no: int, index: int, label: str, value: str) -> None:
        self.points_done += 1
        if self.point_seconds >= 10:
            best, worst = self.eta(round_no, index)
            self.message(f"round {round_no} point {index + 1}/{self.points_per_round} {label}: "
                         f"{value} | elapsed {_hms(time.monotonic() - self.start)}, "
                         f"ETA {_hms(best)}..{_hms(worst)}")

    def round(self, round_no: int, tracking: dict[str, float], status: str,
              done: bool = False) -> None:
        best, worst = self.eta(round_no, self.points_per_round - 1)
        values = ", ".join(f"{k} {v:,.0f}" for k, v in tracking.items())
        eta = "done" if done else f"ETA {_hms(best)}..{_hms(worst)}"
        self.message(f"round {round_no}/{self.max_rounds}: {values} | {status} | "
                     f"elapsed {_hms(time.monotonic() - self.start)}, {eta}")
