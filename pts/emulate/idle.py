"""Background garbage collection while the host is idle (what HIR measures on real drives).

Real SSDs reclaim blocks when the host stops sending commands: after a short delay their
firmware runs GC in the background, so the next burst of writes finds erased blocks and runs
at near FOB speed until they are used up. The model gets no timer of its own (the FUSE
daemon is single-threaded and only runs when a command arrives), so the idle time is
settled when the next host command comes: `IdleGC.before()` sees how long the device has
had nothing to do since the last command finished, and lets the FTL collect
`idle_gc_blocks_per_s` victims per second of it beyond `idle_gc_delay_s`, before the new
command is served. The work costs no host-visible time (it happened during the idle time).
The clock is passed in, so tests drive it with a fake one.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from pts.emulate.ftl import FTL


class IdleGC:
    def __init__(self, ftl: FTL, clock: Callable[[], float] = time.monotonic) -> None:
        self.ftl = ftl
        self.rate = ftl.profile.idle_gc_blocks_per_s
        self.delay = ftl.profile.idle_gc_delay_s
        self._clock = clock
        self._last: float | None = None    # when the device last finished a host command
        self._credit = 0.0                 # fractional victims carried over
        self.idle_s = 0.0                  # idle time that counted (beyond the delay)

    def before(self, busy_until: float = 0.0) -> int:
        """Called when a host command arrives; runs the GC the idle time since the last
        one paid for. `busy_until`: when the throttle's virtual device finishes its queued
        work (idle starts only after that). Returns the victims collected."""
        now = self._clock()
        if self._last is None or self.rate <= 0:
            return 0
        idle = now - max(self._last, busy_until) - self.delay
        if idle <= 0:
            return 0
        self.idle_s += idle
        self._credit += idle * self.rate
        whole = int(self._credit)
        self._credit -= whole
        return self.ftl.collect_idle(whole) if whole else 0

    def after(self) -> None:
        """Called when a host command has been served."""
        self._last = self._clock()

    def stats(self) -> dict:
        return {"idle_gc_blocks_per_s": self.rate, "idle_gc_delay_s": self.delay,
                "idle_s": round(self.idle_s, 3)}
