"""What the device-run tests check of --power's phase windows (issue 51 §3) on the emulated
SSD: the power model's truth of an interval from the emulator's counters at its two ends
(pts.emulate.power_model: idle W x the seconds plus the NAND operations: page reads = GC
relocations for a write-only interval, page programs, block erases), and a test's
phase_power records by phase."""

from __future__ import annotations

from pts.emulate.power_model import PowerModel


def truth_j(model: PowerModel, before: dict, after: dict, seconds: float,
            host_read_pages: int = 0) -> float:
    """The model's energy over `seconds` whose counters went from `before` to `after`."""
    return model.idle_w * seconds + (
        (host_read_pages + after["relocations"] - before["relocations"]) * model.read_page_uj
        + (after["nand_writes"] - before["nand_writes"]) * model.program_page_uj
        + (after["erases"] - before["erases"]) * model.erase_block_uj) / 1e6


def phases(run, name: str) -> dict[int, dict]:
    """{number: the phase_power record} of phase `name` (one source: the emulated SSD's)."""
    found = [r for r in run.of_type("phase_power") if r["phase"] == name]
    assert all(r["source"] == "emulated" for r in found), found
    return {r["number"]: r for r in found}


def coverage(rec: dict) -> float:
    return rec["covered_s"] / (rec["end"] - rec["start"])
