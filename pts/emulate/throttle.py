"""Turn NAND work (microseconds) into wall-clock time, so that fio measures the model.

The FUSE daemon is single-threaded, so a command is answered only when its handler returns,
and commands are answered in order. The device is therefore modelled as one virtual clock
("busy until") that advances by cost / channels per command: with `channels` dies working
in parallel, sustained throughput is channels / cost, which is what IOPS and bandwidth
tests see. Per-command latency is the queueing delay on that clock, not the die time of
the command itself (a QD1 write completes in program_us / channels, not program_us); a
real SSD's write cache hides most of that difference too.

The clock may lag the wall clock by at most `burst_s` (a token bucket): this absorbs
time.sleep() overshoot (tens of microseconds on Linux) and FUSE jitter, which would
otherwise be lost time and make throughput depend on the host's timer slack.
"""

from __future__ import annotations

import time
from collections.abc import Callable

DEFAULT_BURST_S = 0.002


class Throttle:
    def __init__(self, channels: int, burst_s: float = DEFAULT_BURST_S,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if channels < 1:
            raise ValueError(f"channels must be >= 1, got {channels}")
        self.channels = channels
        self.burst_s = burst_s
        self._clock = clock
        self._sleep = sleep
        self._busy_until = 0.0
        self.busy_s = 0.0       # total device time charged
        self.slept_s = 0.0      # total time the daemon slept to enforce it

    @property
    def clock(self) -> Callable[[], float]:
        return self._clock

    @property
    def busy_until(self) -> float:
        """When the virtual device finishes the work charged so far (clock time)."""
        return self._busy_until

    def charge(self, nand_us: float) -> None:
        """Account `nand_us` of die time; block until the virtual device has done it."""
        if nand_us <= 0:
            return
        cost = nand_us / 1e6 / self.channels
        now = self._clock()
        busy = max(self._busy_until, now - self.burst_s) + cost
        self._busy_until = busy
        self.busy_s += cost
        lead = busy - now
        if lead > 0:
            self._sleep(lead)
            self.slept_s += lead

    def stats(self) -> dict:
        return {"channels": self.channels, "busy_s": round(self.busy_s, 6),
                "slept_s": round(self.slept_s, 6)}
