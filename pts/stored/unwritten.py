"""Reads of never-written LBAs (issue 16): a read of an LBA that was purged or never written
is answered from the drive's map, not its flash, and inflates read IOPS (the emulated SSD
does the same). The suite reads such LBAs in the IOPS `--fob-sweep` (the FOB round runs on
the purged drive, before WIPC), after `--purge none` (LBAs of unknown history) and in read
points whose range WIPC did not cover. This module finds them in the stored data; the
report marks the figures and warns."""

from __future__ import annotations

from pts.results.parameters import RwswParameters
from pts.stored.model import TestResult

# A read range WIPC left unwritten below this fraction is not reported (the WIPC tail of
# less than one block is already a declared deviation).
MIN_UNCOVERED = 0.01


def read_pct(rw_mix: str) -> int:
    head = str(rw_mix).split("/", 1)[0]
    return int(head) if head.strip().isdigit() else 0


def unpurged(test: TestResult) -> bool:
    return test.purge is not None and test.purge.method == "none"


def fob_read_mixes(test: TestResult) -> list[str]:
    """The R/W mixes of the --fob-sweep round that read (their FOB figures are not device
    reads), in loop order."""
    return list(dict.fromkeys(p.rw_mix for p in test.fob_points
                              if not p.na and read_pct(p.rw_mix) > 0))


def fob_reason(test: TestResult) -> str:
    if unpurged(test):
        return ("read LBAs of unknown history (--purge none: what the drive held before the "
                "run is not known), not LBAs the test wrote")
    return ("read LBAs the purge emptied and nothing wrote since (the sweep runs before "
            "WIPC): the drive answers them from its map, not its flash")


def has_wipc(test: TestResult) -> bool:
    """Whether the test preconditions with WIPC. The RWSW tests do not: they start at FOB,
    as PTS WSAT (rwsw-digest §5; their readings rwsw_*.wipc), so their early reads of LBAs
    the ATW has not yet written are the workload's FOB, not a WIPC gap."""
    return not isinstance(test.typed, RwswParameters)


def uncovered_bytes(test: TestResult) -> tuple[int, int] | None:
    """(bytes of the read points' range WIPC did not write, the range) for a test with
    read points, or None (no read points, or the range is not recorded)."""
    if not any(read_pct(p.rw_mix) > 0 and not p.na for p in test.points):
        return None
    if not has_wipc(test):
        return None
    ar = test.typed.active_range_bytes
    if not isinstance(ar, int) or ar <= 0:
        return None
    wipc = test.wipc
    if wipc is None or not wipc.bytes_written or not wipc.block_size:
        return ar, ar
    covered = min(wipc.bytes_written, ar // wipc.block_size * wipc.block_size)
    return ar - covered, ar


def warnings(tests) -> list[str]:
    out = []
    for test in tests:
        mixes = fob_read_mixes(test)
        if mixes:
            out.append(f"{test.name}: the --fob-sweep FOB figures of R/W "
                       f"{'mix' if len(mixes) == 1 else 'mixes'} "
                       f"{', '.join(mixes)} are not device reads: they {fob_reason(test)}; "
                       "marked on the FOB vs Steady State page")
        found = uncovered_bytes(test)
        if found and found[0] >= MIN_UNCOVERED * found[1]:
            gap, ar = found
            what = ("LBAs of unknown history (--purge none)" if unpurged(test)
                    else "LBAs nothing wrote (purged or never written)")
            out.append(f"{test.name}: WIPC wrote {ar - gap:,} of the {ar:,} bytes its read "
                       f"points read ({gap / ar:.1%} not preconditioned): those reads are of "
                       f"{what}, answered from the drive's map; the read figures are "
                       "inflated")
    return out
