"""The emulated SSD's power model (pts.emulate.power_model) and its source
(pts.power.emulated), on the FTL model in this process: the counters the daemon reports
turned into joules, checked against energies worked out by hand. The same source on a real
emulated SSD under fio: tests/e2e/test_emulate_device.py (energy per window within 1 % of
the model's truth, steady state against FOB)."""

from __future__ import annotations

import random
import time
from itertools import pairwise

import pytest

from pts.emulate.ftl import FTL
from pts.emulate.power_model import DEFAULT_MODEL, model_for
from pts.emulate.profiles import get_profile
from pts.power.emulated import EmulatedSource
from pts.power.energy import ENERGY
from pts.power.source import DRIVE, PowerSourceError, Recorder
from tests.support import readings

PAGE = 4096


def ftl_source(profile: str = "default", size: int = 4 << 20, interval_s: float = 0.5):
    ftl = FTL(size, get_profile(profile))
    source = EmulatedSource("/dev/loop-test", interval_s=interval_s,
                            read_stats=lambda dev: dict(ftl.stats(), profile=profile))
    return ftl, source


def test_each_nand_operation_costs_its_energy_and_idle_its_power():
    ftl, source = ftl_source()
    source.start()
    assert source.info.measures == DRIVE and source.info.kind == ENERGY
    assert "idle 1.5 W" in source.info.detail and "program 400.0" in source.info.detail
    (a,) = source.read()
    for page in range(100):                      # 100 pages programmed: 100 x 400 uJ
        ftl.write(page * PAGE, PAGE)
    (b,) = source.read()
    assert b.value - a.value == pytest.approx(100 * 400e-6 + 1.5 * (b.mono - a.mono))
    ftl.read(0, 50 * PAGE)                       # 50 mapped pages read: 50 x 100 uJ
    ftl.read(200 * PAGE, 10 * PAGE)              # unmapped: answered from the map, free
    (c,) = source.read()
    assert c.value - b.value == pytest.approx(50 * 100e-6 + 1.5 * (c.mono - b.mono))


def test_garbage_collection_costs_its_reads_programs_and_erases():
    ftl, source = ftl_source()
    source.start()
    rng = random.Random(51)
    for _ in range(3 * ftl.user_pages):           # 3 x capacity of random writes: GC runs
        ftl.write(rng.randrange(ftl.user_pages) * PAGE, PAGE)
    assert ftl.erases > 0 and ftl.relocations > 0
    (s,) = source.read()
    by_hand = (ftl.nand_reads * 100 + ftl.nand_writes * 400 + ftl.erases * 5000) / 1e6
    assert s.value - 1.5 * (s.mono - source._t0) == pytest.approx(by_hand)  # noqa: SLF001


def test_a_recorded_window_matches_the_models_truth():
    """Energy of a window from the recorder (reads at its edges, as the round runner
    takes them), against PowerModel.energy_j from stats read apart from the source."""
    ftl, source = ftl_source(interval_s=0.05)
    rec = Recorder(source, say=lambda m: None)
    rec.start()
    try:
        before, t0 = ftl.stats(), time.monotonic()
        rec.read_now()
        for page in range(3000):                  # 3 x capacity: GC's share too
            ftl.write((page * 7919 % ftl.user_pages) * PAGE, PAGE)
            if page % 500 == 0:
                time.sleep(0.05)
        rec.read_now()
        after, t1 = ftl.stats(), time.monotonic()
    finally:
        rec.stop()
    # Read every 0.05 s, a gap when two readings are more than 2.5 intervals apart (this
    # process's Python writes hold the CPU; a loaded host delays the recorder's thread): the
    # window holds what the readings cover, and the counter's steps across its gaps are
    # what it leaves out, so the two together are the model's truth.
    win = rec.window(t0, t1)
    truth = DEFAULT_MODEL.energy_j(before, after, t1 - t0)
    max_gap = source.info.max_gap_s
    assert win.coverage == pytest.approx(
        readings.covered_s(rec.samples(), t0, t1, max_gap) / (t1 - t0))
    inside = sorted((s for s in rec.samples() if s.value is not None and t0 <= s.mono <= t1),
                    key=lambda s: s.mono)
    left_out = sum(b.value - a.value for a, b in pairwise(inside) if b.mono - a.mono > max_gap)
    assert win.energy_j + left_out == pytest.approx(truth, rel=0.01)
    assert win.coverage > 0


def test_the_fast_profile_costs_idle_only_and_a_lost_device_is_said():
    assert model_for("fast").program_page_uj == 0 and model_for("client") is DEFAULT_MODEL

    def gone(device):
        raise FileNotFoundError(f"{device}: no such emulated SSD")
    with pytest.raises(PowerSourceError, match="cannot read the emulated SSD's stats"):
        EmulatedSource("/dev/loop-test", read_stats=gone).start()
