"""A power source, declared once (issue 51 §1, §5), and the recorder that samples it.

Every source (pts.power.bmc, pts.power.host, pts.power.emulated, pts.power.drive) says what it
measures (the drive, the whole server, the CPU package, whatever a lab meter is clipped to),
how often it can be read, and whether its values are power readings (W) or an energy counter
(J). The recorder reads it on its own thread every `interval_s`, keeps every reading with both
clocks, keeps a failed read as a gap (a Sample without a value), says a failure once and a
recovery once, and never raises into the run: a source that fails mid-run leaves a gap.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pts.power.energy import ENERGY, POWER, Sample, Window, window

DRIVE, SERVER, CPU_PACKAGE, METER = "drive", "server", "cpu package", "meter"
# Two readings further apart than this many intervals are not joined: the time between
# them is a gap (a slow read or a stalled meter is not interpolated over).
GAP_INTERVALS = 2.5


class PowerSourceError(RuntimeError):
    """A source could not be started or read: the message names the source and the fix."""


@dataclass(frozen=True)
class SourceInfo:
    name: str              # as given to --power, e.g. "ipmi:10.0.0.5"
    measures: str          # DRIVE, SERVER, CPU_PACKAGE or METER (+ what it is clipped to)
    interval_s: float      # how often it is read (a meter: how often it prints)
    kind: str = POWER      # POWER (W readings) or ENERGY (a cumulative counter, J)
    range_j: float | None = None     # an energy counter's wrap range
    detail: str = ""       # what exactly is read (the command, the URL, the sysfs file)
    gap_intervals: float = GAP_INTERVALS   # readings further apart: a gap between them
    # A reading that is an average the source made (the drive's C0h: of the second before
    # it): over how many seconds, and the sampling period it was made of as the source
    # states it (None: an instant, a counter, or not stated). The OCP power verdicts ask for
    # 1 s averages sampled at 2 ms or less (PCM-1; pts.stored.power_rules).
    window_s: float | None = None
    sample_s: float | None = None

    @property
    def max_gap_s(self) -> float:
        return self.interval_s * self.gap_intervals


@runtime_checkable
class PowerSource(Protocol):
    """start(), then read() as often as info.interval_s says (a polled source returns its
    one reading of now; a streaming one, the readings it received since the last call),
    then stop(). start() and read() raise PowerSourceError; stop() never raises."""

    info: SourceInfo

    def start(self) -> None: ...

    def read(self) -> list[Sample]: ...

    def stop(self) -> None: ...


def now_sample(value: float | None, error: str = "") -> Sample:
    return Sample(time.monotonic(), time.time(), value, error)


class Recorder:
    """Reads one source on a thread; `say` gets each failure and recovery once."""

    def __init__(self, source: PowerSource, say: Callable[[str], None] = print) -> None:
        self.source, self.say = source, say
        self._samples: list[Sample] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failing = False
        self.failures = 0

    def start(self) -> None:
        """Start the source (a PowerSourceError here is for the session start to report)
        and its sampling thread."""
        self.source.start()
        self._thread = threading.Thread(target=self._loop, name=f"power {self.source.info.name}",
                                        daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.source.info.interval_s):
            self.read_now()

    def read_now(self) -> None:
        """One read, now (also at a window's edges, so a round's ends are covered)."""
        try:
            got = self.source.read()
        except Exception as exc:       # whatever a source raises is a gap, never the run's end
            got = [now_sample(None, str(exc))]
            self.failures += 1
            if not self._failing:
                self.say(f"power source {self.source.info.name} failed: {exc}; the run goes "
                         f"on and its readings show a gap until it answers again")
            self._failing = True
        else:
            if self._failing and got:
                self.say(f"power source {self.source.info.name} answers again")
                self._failing = False
        with self._lock:
            self._samples.extend(got)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.source.stop()

    def samples(self) -> list[Sample]:
        with self._lock:
            return list(self._samples)

    def window(self, t0: float, t1: float) -> Window:
        info = self.source.info
        return window(self.samples(), t0, t1, info.kind, max_gap_s=info.max_gap_s,
                      range_j=info.range_j if info.kind == ENERGY else None)
