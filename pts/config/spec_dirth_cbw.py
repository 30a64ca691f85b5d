"""Spec sections of DIRTH and CBW: [dirth] (Demand Intensity / Response Time Histogram,
pts-digest §7.7) and [cbw] (Composite Block Size Workload, §7.8; ECW in PTS-E 1.1).

Both tables have the same keys; CBW differs by its block-size mix (JESD219) and its access
zones. Values the digest marks "(unconfirmed)" are named fields, commented in the spec files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# pts.config.spec reads these tables through read_dirth_cbw and hands it its converters (RwMix,
# sizes): this module does not import pts.config.spec, which imports it.


def format_size(nbytes: int) -> str:
    """As pts.config.spec.format_size: 512 -> '0.5 KiB'."""
    return f"{nbytes / 1024:g} KiB"

DIRTH_CBW_KEYS = {"clause", "rw_mix", "block_size_mix", "access_zones", "thread_counts",
            "queue_depths", "tracking_thread_count", "tracking_queue_depth",
            "precondition_round_seconds", "prewrite_seconds", "operating_prewrite_seconds",
            "capture_seconds", "art_ceiling_us", "percentiles", "block_align",
            "precondition_sample", "midiops_candidates"}
FIO_DEFAULT_ALIGN = "bs"     # block_align: fio's default (the smallest block size of the job)
# Readings that disagree (pts-digest §13), chosen in the spec file and recorded in the run's
# parameters: which minute of a preconditioning round is tracked, and which grid points
# MidIOPS is chosen from.
PRECONDITION_SAMPLES = ("first", "last")
MIDIOPS_CANDIDATES = ("under_ceiling", "all")


@dataclass(frozen=True)
class SizeShare:
    block_size: int     # bytes
    pct: int            # share of the I/Os, percent

    def __str__(self) -> str:
        return f"{format_size(self.block_size).replace(' ', '')}:{self.pct}%"


@dataclass(frozen=True)
class Zone:
    io_pct: int         # share of the I/Os ...
    lba_pct: int        # ... that go to the next lba_pct % of the ActiveRange


@dataclass(frozen=True)
class DirthCbwTest:
    """DIRTH or CBW: preconditioning to steady state, demand-variation rounds over the
    TC x QD grid, operating points, pre-write + histogram capture per operating point."""
    clause: str
    rw_mix: Any                          # pts.config.spec.RwMix: the test loop's
    block_size_mix: tuple[SizeShare, ...]  # one entry (DIRTH) or the JESD219 mix (CBW)
    access_zones: tuple[Zone, ...]       # () = uniform random over the ActiveRange
    thread_counts: tuple[int, ...]       # outer loop, spec order (32 .. 1)
    queue_depths: tuple[int, ...]        # inner loop, spec order (32 .. 1)
    tracking_thread_count: int           # the tracking point: IOPS at TC32/QD32
    tracking_queue_depth: int
    precondition_round_seconds: int      # one preconditioning round (writes + 1 point)
    prewrite_seconds: int                # the inter-round pre-write
    operating_prewrite_seconds: int      # the pre-write before each histogram capture
    capture_seconds: int                 # each histogram capture
    art_ceiling_us: float                # MaxIOPS: highest IOPS whose ART is below this
    percentiles: tuple[float, ...]       # response-time confidence levels reported
    # Random offsets aligned to this many bytes (fio blockalign), or None: fio's default,
    # the smallest block size (512 B under the JESD219 mix). A reading (digest §13).
    block_align: int | None = None
    precondition_sample: str = "first"   # PRECONDITION_SAMPLES: the tracked point of a round
    midiops_candidates: str = "under_ceiling"   # MIDIOPS_CANDIDATES

    @property
    def mixed_sizes(self) -> bool:
        return len(self.block_size_mix) > 1

    @property
    def workload(self) -> str:
        """'8KiB' or 'JESD219 mix' (a point's block-size label)."""
        if self.mixed_sizes:
            return "JESD219-mix"
        return format_size(self.block_size_mix[0].block_size).replace(" ", "")

    @property
    def nominal_block_size(self) -> int:
        """The block size a point record carries: the one size, or the mix's largest share
        (the record's `bssplit` parameter says the rest)."""
        return max(self.block_size_mix, key=lambda s: s.pct).block_size


def read_dirth_cbw(reader, data: dict, key: str, parse_mix: Callable[[str], Any],
             parse_size: Callable[[str], int]) -> DirthCbwTest:
    """[dirth] or [cbw] through the spec reader (pts.config.spec._Reader), with its R/W mix
    and size converters: every error names the file and the key."""
    t = reader.table(data, key, DIRTH_CBW_KEYS)
    pos = (lambda v: v >= 1, " (>= 1)")
    tcs = reader.items(t, key, "thread_counts", _positive_int)
    qds = reader.items(t, key, "queue_depths", _positive_int)
    tc = reader.value(t, key, "tracking_thread_count", int, *pos)
    qd = reader.value(t, key, "tracking_queue_depth", int, *pos)
    if tc not in tcs or qd not in qds:
        raise reader.fail(f"{key}.tracking_thread_count", f"TC{tc}/QD{qd} is not in the "
                          "thread_counts x queue_depths grid")
    if 1 not in tcs or 1 not in qds:
        raise reader.fail(f"{key}.thread_counts", "the grid must hold TC1/QD1 (MinIOPS)")
    return DirthCbwTest(
        clause=reader.value(t, key, "clause", str),
        rw_mix=reader.convert(f"{key}.rw_mix", [reader.value(t, key, "rw_mix", str)],
                              parse_mix)[0],
        block_size_mix=_size_mix(reader, t, key, parse_size), access_zones=_zones(reader, t, key),
        thread_counts=tcs, queue_depths=qds, tracking_thread_count=tc,
        tracking_queue_depth=qd,
        precondition_round_seconds=reader.value(t, key, "precondition_round_seconds", int,
                                                *pos),
        prewrite_seconds=reader.value(t, key, "prewrite_seconds", int, *pos),
        operating_prewrite_seconds=reader.value(t, key, "operating_prewrite_seconds", int,
                                                *pos),
        capture_seconds=reader.value(t, key, "capture_seconds", int, *pos),
        art_ceiling_us=reader.value(t, key, "art_ceiling_us", float, lambda v: v > 0,
                                    " (> 0)"),
        percentiles=reader.items(t, key, "percentiles", _percentile),
        block_align=_align(reader, t, key, parse_size),
        precondition_sample=_choice(reader, t, key, "precondition_sample",
                                    PRECONDITION_SAMPLES),
        midiops_candidates=_choice(reader, t, key, "midiops_candidates", MIDIOPS_CANDIDATES))


def _align(reader, t: dict, key: str, parse_size) -> int | None:
    text = reader.value(t, key, "block_align", str)
    if text == FIO_DEFAULT_ALIGN:
        return None
    return reader.convert(f"{key}.block_align", [text], parse_size)[0]


def _choice(reader, t: dict, key: str, name: str, allowed: tuple[str, ...]) -> str:
    return reader.value(t, key, name, str, lambda v: v in allowed,
                        " (one of " + ", ".join(f'"{a}"' for a in allowed) + ")")


def _positive_int(v) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise ValueError(f"{v!r} must be a whole number >= 1")
    return v


def _percentile(v) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not 0 < v < 100:
        raise ValueError(f"{v!r} must be a percentile between 0 and 100")
    return float(v)


def _size_mix(reader, t: dict, key: str, parse_size) -> tuple[SizeShare, ...]:
    where = f"{key}.block_size_mix"
    items = t["block_size_mix"]
    if not isinstance(items, list) or not items:
        raise reader.fail(where, "must be a non-empty list")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or set(item) != {"block_size", "pct"}:
            raise reader.fail(f"{where}[{i}]", 'must be { block_size = "4KiB", pct = 67 }')
        bs = reader.convert(f"{where}[{i}].block_size", [item["block_size"]], parse_size)[0]
        pct = item["pct"]
        if not isinstance(pct, int) or isinstance(pct, bool) or not 0 < pct <= 100:
            raise reader.fail(f"{where}[{i}].pct", f"{pct!r} must be a whole percent 1..100")
        out.append(SizeShare(bs, pct))
    if sum(s.pct for s in out) != 100:
        raise reader.fail(where, f"the shares add up to {sum(s.pct for s in out)} %, not 100")
    if len({s.block_size for s in out}) != len(out):
        raise reader.fail(where, "lists a block size twice")
    return tuple(out)


def _zones(reader, t: dict, key: str) -> tuple[Zone, ...]:
    where = f"{key}.access_zones"
    items = t["access_zones"]
    if not isinstance(items, list):
        raise reader.fail(where, "must be a list ([] = uniform random)")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or set(item) != {"io_pct", "lba_pct"}:
            raise reader.fail(f"{where}[{i}]", "must be { io_pct = 50, lba_pct = 5 }")
        z = Zone(*(reader.value(item, f"{where}[{i}]", k, int, lambda v: 0 < v <= 100,
                                " (1..100)") for k in ("io_pct", "lba_pct")))
        out.append(z)
    for what in ("io_pct", "lba_pct"):
        if out and sum(getattr(z, what) for z in out) != 100:
            raise reader.fail(where, f"the zones' {what} add up to "
                                     f"{sum(getattr(z, what) for z in out)}, not 100")
    return tuple(out)
