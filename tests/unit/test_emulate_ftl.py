"""Unit tests of the emulated SSD's pure parts: FTL model, throttle, size parsing, CLI input.

No root, no FUSE, no devices: these run everywhere.
"""

from __future__ import annotations

import argparse
import random
from dataclasses import replace

import pytest

from pts.emulate import cli, lifecycle
from pts.emulate.ftl import FTL, MIN_SPARE_BLOCKS
from pts.emulate.profiles import PAGE_SIZE, PROFILES, Profile, get_profile
from pts.emulate.throttle import Throttle
from tests.support.helpers import FakeClock

# Small, timed geometry so that GC happens after a few thousand writes.
SMALL = Profile(name="small", op_pct=20.0, pages_per_block=16, read_us=50.0,
                program_us=500.0, erase_us=3000.0, channels=4)
CAP = 4 << 20                      # 1024 user pages


def random_writes(ftl: FTL, count: int, rng: random.Random) -> float:
    cost = 0.0
    for _ in range(count):
        cost += ftl.write(rng.randrange(ftl.user_pages) * PAGE_SIZE, PAGE_SIZE)
    return cost


@pytest.fixture
def rng() -> random.Random:
    return random.Random(1234)


def test_fresh_model_is_fob(rng):
    ftl = FTL(CAP, SMALL)
    s = ftl.stats()
    assert s["free_blocks"] == ftl.blocks
    assert s["valid_pages"] == s["host_writes"] == s["nand_writes"] == s["erases"] == 0
    assert s["waf"] == 0.0
    assert ftl.physical_pages >= ftl.user_pages * 1.2
    ftl.check_invariants()


def test_geometry_keeps_spare_blocks_even_without_op():
    ftl = FTL(CAP, replace(SMALL, op_pct=0.0))
    assert ftl.blocks - ftl.user_pages // SMALL.pages_per_block == MIN_SPARE_BLOCKS


def test_gc_keeps_every_written_page_mapped(rng):
    ftl = FTL(CAP, SMALL)
    written = set()
    for _ in range(4 * ftl.user_pages):
        lpn = rng.randrange(ftl.user_pages)
        ftl.write(lpn * PAGE_SIZE, PAGE_SIZE)
        written.add(lpn)
    assert ftl.gc_runs > 0 and ftl.relocations > 0
    assert ftl.mapped == len(written)
    mapped = {lpn for lpn in range(ftl.user_pages) if ftl.l2p[lpn] >= 0}
    assert mapped == written
    ftl.check_invariants()


def test_full_overwrite_survives_gc_with_zero_op(rng):
    # The tightest geometry: GC must still find a victim with an invalid page every time.
    ftl = FTL(CAP, replace(SMALL, op_pct=0.0))
    random_writes(ftl, 6 * ftl.user_pages, rng)
    ftl.check_invariants()
    assert ftl.waf > 2


def test_waf_rises_as_the_device_fills(rng):
    ftl = FTL(CAP, SMALL)
    windows = []
    for _ in range(8):                       # 8 windows of half the capacity each
        before = ftl.nand_writes
        random_writes(ftl, ftl.user_pages // 2, rng)
        windows.append((ftl.nand_writes - before) / (ftl.user_pages // 2))
    assert windows[0] == windows[1] == 1.0   # FOB: free blocks, no GC
    assert windows[-1] > 1.8 > windows[1]
    assert ftl.waf == ftl.nand_writes / ftl.host_writes


def test_cost_is_programs_plus_gc_work(rng):
    ftl = FTL(CAP, SMALL)
    fob_cost = ftl.write(0, PAGE_SIZE)
    assert fob_cost == SMALL.program_us
    total = fob_cost + random_writes(ftl, 3 * ftl.user_pages, rng)
    expected = (ftl.host_writes * SMALL.program_us
                + ftl.relocations * (SMALL.read_us + SMALL.program_us)
                + ftl.gc_runs * SMALL.erase_us)
    assert total == pytest.approx(expected)
    assert ftl.nand_writes == ftl.host_writes + ftl.relocations


def test_whole_device_trim_restores_fob(rng):
    ftl = FTL(CAP, SMALL)
    random_writes(ftl, 3 * ftl.user_pages, rng)
    gc_before, erases_before = ftl.gc_runs, ftl.erases
    assert ftl.trim(0, CAP) == 0.0
    s = ftl.stats()
    assert s["free_blocks"] == ftl.blocks and s["valid_pages"] == 0 and s["formats"] == 1
    assert s["erases"] > erases_before          # the written blocks were erased
    ftl.check_invariants()
    # FOB again: a whole physical space of writes needs no GC and costs programs only.
    costs = [ftl.write(lpn * PAGE_SIZE, PAGE_SIZE) for lpn in range(ftl.user_pages)]
    assert set(costs) == {SMALL.program_us}
    assert ftl.gc_runs == gc_before


def test_partial_trim_unmaps_and_reclaims_empty_blocks():
    ftl = FTL(CAP, SMALL)
    for lpn in range(ftl.user_pages):                # sequential: block k holds pages 16k..
        ftl.write(lpn * PAGE_SIZE, PAGE_SIZE)
    free_before = len(ftl.free)
    ftl.trim(0, CAP // 2)
    assert ftl.mapped == ftl.user_pages // 2
    # Half the full blocks became empty and went back to the pool, without any GC.
    assert len(ftl.free) == free_before + ftl.user_pages // 2 // SMALL.pages_per_block
    assert ftl.gc_runs == 0 and ftl.trims == 1
    ftl.check_invariants()


def test_trim_only_unmaps_whole_pages():
    ftl = FTL(CAP, SMALL)
    ftl.write(0, 2 * PAGE_SIZE)
    ftl.trim(512, PAGE_SIZE)                         # covers no whole page
    assert ftl.mapped == 2 and ftl.trimmed_pages == 0 and ftl.trims == 1
    ftl.trim(PAGE_SIZE - 512, PAGE_SIZE + 512)       # covers page 1 only
    assert ftl.mapped == 1 and ftl.l2p[0] >= 0 and ftl.l2p[1] == -1


def test_sub_page_writes_program_whole_pages():
    ftl = FTL(CAP, SMALL)
    assert ftl.write(512, 512) == SMALL.program_us                 # inside page 0
    assert ftl.write(PAGE_SIZE - 512, 1024) == 2 * SMALL.program_us  # spans pages 0 and 1
    assert ftl.host_writes == 3 and ftl.host_write_bytes == 1536 and ftl.mapped == 2


def test_reads_cost_only_mapped_pages():
    ftl = FTL(CAP, SMALL)
    assert ftl.read(0, 8 * PAGE_SIZE) == 0.0          # unmapped: answered from the map
    ftl.write(0, 2 * PAGE_SIZE)
    assert ftl.read(0, PAGE_SIZE) == SMALL.read_us
    assert ftl.read(0, 8 * PAGE_SIZE) == 2 * SMALL.read_us
    assert ftl.reads == 17 and ftl.nand_reads == 3


@pytest.mark.parametrize("offset,length", [(-PAGE_SIZE, PAGE_SIZE), (CAP, 1), (CAP - 1, 2)])
def test_io_outside_the_device_is_refused(offset, length):
    ftl = FTL(CAP, SMALL)
    for op in (ftl.write, ftl.read, ftl.trim):
        with pytest.raises(ValueError, match="outside the device"):
            op(offset, length)


def test_capacity_must_be_whole_pages():
    with pytest.raises(ValueError, match="multiple of 4096"):
        FTL(CAP + 512, SMALL)


def test_maps_stay_small_for_a_1_gib_device():
    ftl = FTL(1 << 30, PROFILES["default"])
    assert ftl.user_pages == 262144
    map_bytes = sum(a.itemsize * len(a) for a in (ftl.l2p, ftl.p2l, ftl.valid))
    assert map_bytes < 3 << 20


def test_profiles_are_usable():
    assert {"default", "fast"} <= set(PROFILES)
    for name, profile in PROFILES.items():
        assert profile.name == name and profile.channels >= 1
        FTL(16 << 20, profile).check_invariants()
    assert PROFILES["fast"].program_us == 0       # the functional-test profile is untimed
    with pytest.raises(ValueError, match="choose one of: 4kn, client, cliff, default, eio, "
                                         "fast, no-idle-gc, purge-keeps-mapping"):
        get_profile("nope")


def test_a_write_cliff_after_its_capacity_of_fast_writes(rng):
    """'cliff': from FOB, 1 x capacity of writes at cache_program_us a page, then program_us
    (and GC); a whole-device trim makes the fast region whole again."""
    cliff = replace(SMALL, cliff_after_capacity=1.0, cache_program_us=50.0)
    ftl = FTL(CAP, cliff)
    costs = [ftl.write(lpn * PAGE_SIZE, PAGE_SIZE) for lpn in range(ftl.user_pages)]
    assert set(costs) == {50.0} and ftl.stats()["cache_pages_left"] == 0
    assert ftl.write(0, 2 * PAGE_SIZE) >= 2 * SMALL.program_us       # over the cliff
    ftl.trim(0, CAP)
    assert ftl.write(0, PAGE_SIZE) == 50.0                           # FOB again
    straddle = FTL(CAP, cliff)
    straddle.cache_pages = 1                     # one fast page left: a 2-page write pays both
    assert straddle.write(0, 2 * PAGE_SIZE) == 50.0 + SMALL.program_us
    assert PROFILES["cliff"].cliff_after_capacity == 1.0 and \
        PROFILES["cliff"].cache_program_us * 10 == PROFILES["cliff"].program_us


def test_a_trim_that_keeps_the_mapping(rng):
    """'purge-keeps-mapping': a whole-device trim is counted and changes nothing in the model:
    every page stays mapped, GC keeps its cost (the drive stays in steady state)."""
    keeps = replace(SMALL, trim_unmaps=False)
    ftl = FTL(CAP, keeps)
    random_writes(ftl, 3 * ftl.user_pages, rng)
    before = (ftl.mapped, len(ftl.free), ftl.formats)
    assert ftl.trim(0, CAP) == 0.0
    assert (ftl.mapped, len(ftl.free), ftl.formats) == before
    assert ftl.stats()["ignored_trims"] == 1 and ftl.trims == 1
    ftl.check_invariants()
    gc = ftl.gc_runs
    random_writes(ftl, ftl.user_pages, rng)
    assert ftl.gc_runs > gc                      # still collecting: not FOB
    assert PROFILES["purge-keeps-mapping"].trim_unmaps is False
    assert PROFILES["4kn"].logical_block_size == 4096 and \
        PROFILES["default"].logical_block_size == 512


def test_default_profile_model_falls_to_under_40_percent_of_fob(rng):
    # The model alone (no FUSE): after a sequential fill, random 4 KiB writes cost
    # >= 2.5x more NAND time each than fresh out of the box.
    ftl = FTL(16 << 20, PROFILES["default"])
    fob = ftl.write(0, PAGE_SIZE)
    for lpn in range(0, ftl.user_pages, 32):
        ftl.write(lpn * PAGE_SIZE, 32 * PAGE_SIZE)
    random_writes(ftl, ftl.user_pages, rng)
    steady = random_writes(ftl, ftl.user_pages, rng) / ftl.user_pages
    assert fob / steady <= 0.40


# ------------------------------------------------------------------------- throttle

def test_throttle_enforces_channels_over_cost():
    clock = FakeClock(now=100.0)
    throttle = Throttle(channels=4, burst_s=0.001, clock=clock, sleep=clock.sleep)
    start = clock.now
    for _ in range(1000):
        throttle.charge(400.0)                       # 400 us of die time, 4 dies
    # 1000 x 100 us = 0.1 s of device time; the burst allowance is at most 1 ms of it.
    assert clock.now - start == pytest.approx(0.1, abs=0.0011)
    assert throttle.busy_s == pytest.approx(0.1)


def test_throttle_does_not_bank_idle_time_beyond_the_burst():
    clock = FakeClock(now=100.0)
    throttle = Throttle(channels=1, burst_s=0.001, clock=clock, sleep=clock.sleep)
    clock.now += 10.0                                # long idle period
    start = clock.now
    for _ in range(100):
        throttle.charge(1000.0)                      # 100 x 1 ms
    assert clock.now - start == pytest.approx(0.099)


def test_throttle_free_commands_never_sleep():
    clock = FakeClock(now=100.0)
    throttle = Throttle(channels=1, clock=clock, sleep=clock.sleep)
    throttle.charge(0.0)
    assert clock.now == 100.0 and throttle.slept_s == 0.0
    with pytest.raises(ValueError):
        Throttle(channels=0)


# ------------------------------------------------------------------ sizes and CLI input

@pytest.mark.parametrize("text,expected", [
    ("256M", 256 << 20), ("1G", 1 << 30), ("512MiB", 512 << 20), ("1.5GiB", 3 << 29),
    ("268435456", 268435456), ("64 m", 64 << 20), ("1GB", 10**9), (4096, 4096)])
def test_parse_size(text, expected):
    assert lifecycle.parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "M", "12x", "-1G", "1 G B", "1e9"])
def test_parse_size_rejects_nonsense(text):
    with pytest.raises(lifecycle.EmulateError, match="e.g. 256M"):
        lifecycle.parse_size(text)


def _cli(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    return parser.parse_args(argv)


@pytest.mark.parametrize("argv,message", [
    (["start", "--size", "12x"], "cannot read size '12x'"),
    (["start", "--size", "1M"], "at least 16 MiB"),
    (["start", "--size", "16781313"], "whole 4096-byte pages"),
    (["start", "--size", "64M", "--profile", "nope"], "unknown profile 'nope'"),
    (["stop", "/dev/not-an-emulated-ssd"], "is not an emulated SSD"),
])
def test_cli_bad_input_exits_2_with_the_fix(argv, message, capsys):
    assert cli.run(_cli(argv)) == cli.EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert message in err


def test_cli_profiles_lists_parameters(capsys):
    import json

    assert cli.run(_cli(["profiles"])) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["default"]["program_us"] == PROFILES["default"].program_us
