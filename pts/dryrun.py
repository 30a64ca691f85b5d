"""`--dry-run`: print each selected PTS test's plan — purge method and command, WIPC bytes
and job file, rounds x points, every fio job, write cache, estimated duration — and touch
nothing (the device is only resolved, read-only).

A test module takes part by defining `pts_plan(settings, device) -> list[str]`.
"""

from __future__ import annotations

from pts.device import BlockDevice
from pts.settings import Settings

FIO_OVERHEAD_S = 0.3   # measured per fio job on our machines (design.md, Speed)


def hms(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def purge_plan(settings: Settings, dev: BlockDevice) -> str:
    if settings.purge == "none":
        return "none (declared deviation)"
    if settings.purge == "trim":
        return f"trim (declared deviation): blkdiscard -v {dev.path}"
    if dev.emulated:
        return f"auto: discard of the emulated SSD: blkdiscard -v {dev.path}"
    return ("auto: REFUSED at run time — no PTS purge method is implemented for transport "
            f"{dev.transport} yet; use --purge trim (deviation) or --purge none")


def duration_lines(points: int, point_seconds: int, window: int, max_rounds: int,
                   wipc_bytes: int) -> list[str]:
    per_round = points * (point_seconds + FIO_OVERHEAD_S)
    wipc = ", ".join(f"{hms(wipc_bytes / rate)} at {rate / 1e9:g} GB/s" for rate in (0.5e9, 3e9))
    return [f"estimated duration: WIPC {wipc} (depends on the drive's SEQ write speed); "
            f"rounds {hms(per_round)} each: best case {hms(window * per_round)} "
            f"(steady by round {window}), worst case {hms(max_rounds * per_round)} "
            f"({max_rounds} rounds)"]
