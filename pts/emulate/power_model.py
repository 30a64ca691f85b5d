"""The emulated SSD's power model (issue 51 §2): a known truth for the suite's power figures.

The drive draws `idle_w` whenever it is powered, plus a fixed energy for each NAND operation
the FTL model counts (pts.emulate.ftl): a page read (host reads of mapped pages and GC
relocations: `nand_reads`), a page program (host pages and relocations: `nand_writes`) and a
block erase (`erases`). Energy to time t is then idle_w x t + the operations' energy, so the
energy of any window is exactly known from the counters at its two ends.

The figures are chosen for the emulated drive's scale (a few thousand IOPS on a 2-core VM),
not taken from a datasheet: its writes then show a clear rise in W from idle, and steady
state (GC's relocations and erases) costs more energy per host write than FOB. One model per
profile name; the profiles that change no NAND behaviour share 'default's.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PowerModel:
    idle_w: float
    read_page_uj: float
    program_page_uj: float
    erase_block_uj: float

    def operations_j(self, stats: dict) -> float:
        """Joules of the NAND operations counted in `stats` (FTL.stats(), as read_stats gives
        it) since the model was created."""
        return (stats["nand_reads"] * self.read_page_uj + stats["nand_writes"]
                * self.program_page_uj + stats["erases"] * self.erase_block_uj) / 1e6

    def energy_j(self, before: dict, after: dict, seconds: float) -> float:
        """The truth for a window: idle over its `seconds` plus its operations."""
        return self.idle_w * seconds + self.operations_j(after) - self.operations_j(before)


DEFAULT_MODEL = PowerModel(idle_w=1.5, read_page_uj=100.0, program_page_uj=400.0,
                           erase_block_uj=5000.0)
# 'fast' has no timing: its operations are free in power as in time (functional tests).
MODELS = {"fast": PowerModel(idle_w=1.5, read_page_uj=0.0, program_page_uj=0.0,
                             erase_block_uj=0.0)}


def model_for(profile: str) -> PowerModel:
    return MODELS.get(profile, DEFAULT_MODEL)
