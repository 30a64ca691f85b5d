"""The emulated SSD's drive models: NAND geometry and timing per profile, and the
behaviours of real drives the suite must handle, each a switch of 'default' (issue 23 §3, §4).
`--device emulated:SIZE:PROFILE` picks one; pts/emulate/README.md tabulates them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

PAGE_SIZE = 4096


@dataclass(frozen=True)
class Profile:
    """NAND geometry and timing of one emulated drive model (capacity comes separately)."""

    name: str
    op_pct: float            # spare physical space, in % of the user capacity
    pages_per_block: int
    read_us: float           # page read (tR)
    program_us: float        # page program (tPROG)
    erase_us: float          # block erase (tBERS)
    channels: int            # independent dies working in parallel
    page_size: int = PAGE_SIZE
    description: str = ""
    # Background GC while the host is idle (pts.emulate.idle): once no host command has
    # arrived for `idle_gc_delay_s`, idle time collects `idle_gc_blocks_per_s` victim blocks
    # per second (greedy, as foreground GC), at no host-visible cost. 0: no idle GC.
    idle_gc_blocks_per_s: float = 0.0
    idle_gc_delay_s: float = 0.5
    # A write cliff (an SLC-cache-like fast region, issue 23 §4): from FOB, the first
    # `cliff_after_capacity` x the user capacity of host writes program at
    # `cache_program_us` a page, the rest at program_us. 0: no cliff. A return to FOB (a
    # whole-device trim) makes the fast region whole again.
    cliff_after_capacity: float = 0.0
    cache_program_us: float = 0.0
    # False: a discard erases the data (it reads back as zeros: pts.emulate.fusefs) and leaves
    # the mapping as it was, as a purge that erases keys and not the FTL's state: the drive
    # stays in steady state, the purge's marker check passes, the purge probe must warn.
    trim_unmaps: bool = True
    # The loop device's logical sector size: 512, or 4096 for a 4Kn drive.
    logical_block_size: int = 512
    # Write errors (issue 23 §3, a drive failing its writes; pts.emulate.fusefs): once
    # `eio_after_capacity` x the user capacity has been written since FOB (a whole-device
    # discard), one write command in every `eio_every` fails with EIO (the data is not
    # written). 0: never.
    eio_every: int = 0
    eio_after_capacity: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


# Tuned on the project's 2-core VM so that every rate is throttle-bound, not CPU-bound
# (the daemon alone does ~40k 4 KiB writes/s and ~50k reads/s unthrottled): 4 KiB random
# writes at QD32 run 6.7k IOPS FOB (4 / 600 us) and settle near 1.5k IOPS once greedy GC
# amplifies writes ~3x; mapped 4 KiB reads are capped at 20k IOPS. Blocks are small
# (256 KiB) and erases slow so that GC costs show on a 128-512 MiB device.
DEFAULT = Profile(
    name="default", op_pct=20.0, pages_per_block=64, read_us=200.0, program_us=600.0,
    erase_us=8000.0, channels=4, idle_gc_blocks_per_s=20.0, idle_gc_delay_s=0.5,
    description="20 % OP; 4 KiB random writes 6.7k IOPS FOB, ~1.5k IOPS steady state; "
                "idle GC 20 blocks/s after 0.5 s idle")

PROFILES: dict[str, Profile] = {
    "default": DEFAULT,
    # No timing at all: for functional tests (data integrity, lifecycle) that must be fast.
    "fast": Profile(
        name="fast", op_pct=20.0, pages_per_block=64, read_us=0.0, program_us=0.0,
        erase_us=0.0, channels=1, description="no timing: functional tests only"),
    # Client drives ship with ~7 % OP: greedy GC then amplifies random writes ~6x.
    "client": replace(
        DEFAULT, name="client", op_pct=7.0,
        description="7 % OP; deeper fall from FOB to steady state than 'default'; "
                    "idle GC as 'default'"),
    # The behaviours of real drives the suite must handle (issue 23 §3, §4), each 'default'
    # with one switch:
    "cliff": replace(
        DEFAULT, name="cliff", cliff_after_capacity=1.0, cache_program_us=60.0,
        description="'default' with a write cliff: the first 1 x capacity written from FOB "
                    "programs 10x faster (an SLC-cache-like region), then 'default'"),
    # Without idle GC: what a fill left stays however long the host idles before the next
    # command (with it, a filled 32 MiB drive idle 60 s before the suite's probe read FOB/SS
    # 1.10 where 2 s read 0.94: the probe's verdict on it depended on the start-up's length)
    "purge-keeps-mapping": replace(
        DEFAULT, name="purge-keeps-mapping", trim_unmaps=False, idle_gc_blocks_per_s=0.0,
        description="'default' whose discards erase the data and keep the mapping, without "
                    "idle GC: a purge by discard leaves it in steady state (the purge probe "
                    "must warn)"),
    "no-idle-gc": replace(
        DEFAULT, name="no-idle-gc", idle_gc_blocks_per_s=0.0,
        description="'default' without idle GC: a filled drive stays filled however long "
                    "it idles (the purge probe of a drive run with --purge none must warn)"),
    "4kn": replace(
        DEFAULT, name="4kn", logical_block_size=4096,
        description="'default' with 4096-byte logical sectors (a 4Kn drive)"),
    # 3 capacities: the WIPC's 2 x capacity passes (with --no-purge-probe), the rounds fail.
    "eio": replace(
        DEFAULT, name="eio", eio_every=50, eio_after_capacity=3.0,
        description="'default' whose writes fail: after 3 x capacity written from FOB, "
                    "one write command in 50 ends in EIO"),
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise ValueError(f"unknown emulator profile {name!r}; choose one of: {known}") from None
