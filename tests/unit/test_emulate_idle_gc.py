"""Background GC in host idle time (pts.emulate.idle + FTL.collect_idle): deterministic, on
the pure model with a fake clock; no FUSE, no devices."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from pts.emulate.ftl import FTL
from pts.emulate.idle import IdleGC
from pts.emulate.profiles import PAGE_SIZE, PROFILES, Profile

SMALL = Profile(name="small", op_pct=20.0, pages_per_block=16, read_us=50.0,
                program_us=500.0, erase_us=3000.0, channels=4,
                idle_gc_blocks_per_s=10.0, idle_gc_delay_s=0.5)
CAP = 4 << 20                      # 1024 user pages


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def steady(ftl: FTL, rng: random.Random, fills: int = 3) -> None:
    for _ in range(fills * ftl.user_pages):
        ftl.write(rng.randrange(ftl.user_pages) * PAGE_SIZE, PAGE_SIZE)


def burst_cost(ftl: FTL, rng: random.Random, writes: int) -> float:
    return sum(ftl.write(rng.randrange(ftl.user_pages) * PAGE_SIZE, PAGE_SIZE)
               for _ in range(writes))


def test_collect_idle_frees_blocks_and_keeps_the_data():
    ftl, rng = FTL(CAP, SMALL), random.Random(7)
    steady(ftl, rng)
    free_before, mapped = len(ftl.free), ftl.mapped
    taken = ftl.collect_idle(20)
    assert taken == 20 and ftl.idle_gc_runs == 20
    assert len(ftl.free) > free_before
    assert ftl.mapped == mapped
    ftl.check_invariants()


def test_collect_idle_stops_at_full_compaction():
    ftl, rng = FTL(CAP, SMALL), random.Random(7)
    steady(ftl, rng)
    ftl.collect_idle(10_000)
    # Nothing left to gain: every closed block is full of valid pages (or the GC frontier
    # has no room), and another call collects nothing.
    assert ftl.collect_idle(10_000) == 0
    ftl.check_invariants()
    # Free space is (almost) all the spare space: physical - mapped pages, in blocks.
    spare_blocks = (ftl.physical_pages - ftl.mapped) // ftl.ppb
    assert len(ftl.free) >= spare_blocks - 3


def test_fob_drive_has_nothing_to_collect():
    ftl = FTL(CAP, SMALL)
    assert ftl.collect_idle(100) == 0
    ftl.write(0, 64 * PAGE_SIZE)     # written once, nothing invalid yet
    assert ftl.collect_idle(100) == 0


def test_idle_gc_rate_and_delay_with_a_fake_clock():
    ftl, rng, clock = FTL(CAP, SMALL), random.Random(7), Clock()
    steady(ftl, rng)
    idle = IdleGC(ftl, clock)
    assert idle.before() == 0        # first command ever: no idle time known
    idle.after()
    clock.t += 0.4                   # shorter than the 0.5 s delay: not idle
    assert idle.before() == 0
    idle.after()
    clock.t += 2.5                   # 2.0 s beyond the delay x 10 blocks/s
    assert idle.before() == 20
    idle.after()
    clock.t += 0.55                  # 0.05 s x 10 = 0.5 victims: carried over ...
    assert idle.before() == 0
    idle.after()
    clock.t += 0.6                   # ... and paid with the next 1.0 (1.5 -> 1)
    assert idle.before() == 1
    idle.after()
    # Idle starts only once the device has finished its queued work.
    clock.t += 1.0
    assert idle.before(busy_until=clock.t - 0.2) == 0
    assert idle.idle_s == pytest.approx(2.15)


def test_more_idle_gives_a_faster_write_burst():
    """What HIR measures: the NAND cost of the same write burst after 5 s and after 50 s of
    idle, against no idle at all (the steady-state baseline). Default timings; the rate is
    scaled down with the device (16 MiB, 77 blocks, instead of the 256 MiB the default's
    20 blocks/s is meant for)."""
    costs = {}
    for idle_s in (0.0, 5.0, 50.0):
        profile = replace(PROFILES["default"], name="t", idle_gc_blocks_per_s=1.0)
        ftl, rng, clock = FTL(16 << 20, profile), random.Random(11), Clock()
        steady(ftl, rng)
        gc = IdleGC(ftl, clock)
        gc.before()
        gc.after()
        clock.t += idle_s
        gc.before()
        costs[idle_s] = burst_cost(ftl, rng, 1000)
    assert costs[50.0] < 0.7 * costs[5.0]
    assert costs[5.0] < costs[0.0]


def test_no_idle_gc_when_the_rate_is_zero():
    ftl, rng, clock = FTL(CAP, replace(SMALL, idle_gc_blocks_per_s=0.0)), random.Random(7), \
        Clock()
    steady(ftl, rng)
    idle = IdleGC(ftl, clock)
    idle.after()
    clock.t += 100
    assert idle.before() == 0 and ftl.idle_gc_runs == 0


def test_fast_profile_has_no_idle_gc_and_timed_ones_do():
    assert PROFILES["fast"].idle_gc_blocks_per_s == 0
    assert PROFILES["default"].idle_gc_blocks_per_s > 0
