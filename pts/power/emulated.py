"""The emulated SSD's power model as a source (issue 51 §2): an energy counter that measures
the drive, read from the daemon's live stats (pts.emulate.lifecycle.read_stats) and turned
into joules by the profile's model (pts.emulate.power_model): idle power over the monotonic
seconds since the source started, plus the energy of the NAND operations counted since."""

from __future__ import annotations

import time
from collections.abc import Callable

from pts.emulate.power_model import PowerModel, model_for
from pts.power.energy import ENERGY, Sample
from pts.power.source import DRIVE, PowerSourceError, SourceInfo

# The stats file is a FUSE read (a JSON snapshot of the model): cheap, so read it often
# enough that the edges of a round are well placed even without a read at each edge.
EMULATED_INTERVAL_S = 0.5
# The stats read waits in the FUSE daemon behind the I/O queued before it: under a 1 MiB QD 32
# load, readings came 3-6 s apart (the demo's round 2, 05:10 UTC 2026-11-29), which the
# default 2.5 intervals called gaps. The counter's difference between two readings is exact
# (idle x the monotonic seconds + the operations counted; it never wraps), so readings up to
# this many intervals (60 s) apart are joined; a daemon silent for longer is a gap.
EMULATED_GAP_INTERVALS = 120.0


class EmulatedSource:
    def __init__(self, device: str, read_stats: Callable[[str], dict] | None = None,
                 interval_s: float = EMULATED_INTERVAL_S, name: str = "emulated") -> None:
        self.device = device
        self._read_stats = read_stats
        self.model: PowerModel | None = None
        self._t0 = 0.0
        self._ops0 = 0.0
        self.info = SourceInfo(name, DRIVE, interval_s, kind=ENERGY,
                               detail=f"the emulated SSD's power model ({device})",
                               gap_intervals=EMULATED_GAP_INTERVALS)

    def _stats(self) -> dict:
        if self._read_stats is None:
            # lazily, as pts.emulate's own names (its daemon forks before numpy is loaded)
            from pts.emulate import lifecycle
            self._read_stats = lifecycle.read_stats
        try:
            return self._read_stats(self.device)
        except Exception as exc:
            raise PowerSourceError(f"{self.info.name}: cannot read the emulated SSD's stats "
                                   f"({self.device}): {exc}") from None

    def start(self) -> None:
        stats = self._stats()
        self.model = model_for(stats.get("profile", "default"))
        m = self.model
        self.info = SourceInfo(self.info.name, DRIVE, self.info.interval_s, kind=ENERGY,
                               detail=f"the emulated SSD's power model ({self.device}, profile "
                                      f"{stats.get('profile', 'default')}: idle {m.idle_w} W, "
                                      f"read {m.read_page_uj} µJ/page, program "
                                      f"{m.program_page_uj} µJ/page, erase "
                                      f"{m.erase_block_uj} µJ/block)",
                               gap_intervals=EMULATED_GAP_INTERVALS)
        self._t0, self._ops0 = time.monotonic(), self.model.operations_j(stats)

    def read(self) -> list[Sample]:
        stats = self._stats()
        mono, wall = time.monotonic(), time.time()
        joules = self.model.idle_w * (mono - self._t0) + self.model.operations_j(stats) \
            - self._ops0
        return [Sample(mono, wall, joules)]

    def stop(self) -> None:
        pass
