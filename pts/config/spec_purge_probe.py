"""The `[purge_probe]` table of a spec file: the short FOB write probe right after the purge
and the FOB/SS ratio below which the purge is called ineffective.

Not a PTS step: an addition to the PTS flow (a few seconds of RND 4 KiB writes on the purged
drive, then WIPC overwrites the drive anyway). The values are this suite's choice, not the
spec's (unconfirmed in the PTS: the PTS only says a purge returns the drive to FOB, §3.2)."""

from __future__ import annotations

from dataclasses import dataclass

KEYS = {"seconds", "block_size", "fob_ss_min_ratio"}


@dataclass(frozen=True)
class PurgeProbeSpec:
    seconds: int                  # probe duration (RND writes at the test's TC/QD)
    block_size: int               # bytes; 4 KiB: compared with SS RND 4 KiB write IOPS
    fob_ss_min_ratio: float       # probe IOPS / SS IOPS below this: purge warning


def read(reader, data: dict, parse_size) -> PurgeProbeSpec:
    """`reader`: pts.config.spec._Reader (names file and key in every error); `parse_size`:
    pts.config.spec.parse_size (passed in: spec imports this module)."""
    w = "purge_probe"
    t = reader.table(data, w, KEYS)
    bs = reader.convert(f"{w}.block_size", [reader.value(t, w, "block_size", str)],
                        parse_size)[0]
    return PurgeProbeSpec(
        seconds=reader.value(t, w, "seconds", int, lambda v: 1 <= v <= 600, " (1..600)"),
        block_size=bs,
        fob_ss_min_ratio=reader.value(t, w, "fob_ss_min_ratio", float, lambda v: v >= 1,
                                      " (>= 1: FOB is at least as fast as steady state)"))
