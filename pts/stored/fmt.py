"""How numbers, sizes and times are written on the report.

PTS 2.0.2 §2.4.1: capacities and rates in decimal units (GB, MB/s), transfer sizes in binary
units (KiB). Text is kept to the WinAnsi character set of the PDF base fonts ("<=" not "≤").
"""

from __future__ import annotations

import math
from datetime import UTC, datetime


def block_size(nbytes: int | None) -> str:
    """1048576 -> "1024 KiB", 512 -> "0.5 KiB" (the spec's own way of naming block sizes)."""
    if nbytes is None:
        return "n/a"
    return f"{nbytes / 1024:g} KiB"


def num(value: float | None) -> str:
    """About four significant digits, thousands separated: 10240 -> "10,240", 2.4121 -> "2.412"."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    if value == 0:
        return "0"
    decimals = min(6, max(0, 3 - math.floor(math.log10(abs(value)))))
    return f"{value:,.{decimals}f}"


def pct(fraction: float | None) -> str:
    return "n/a" if fraction is None else f"{fraction * 100:.2f} %"


def capacity(nbytes: int | None) -> str:
    if nbytes is None:
        return "unknown"
    return f"{num(nbytes / 1e9)} GB ({nbytes:,} bytes)"


def utc(ts: float | None) -> str:
    if ts is None:
        return "n/a"
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def iso_utc(text: str | None) -> str:
    """run.json "started" (ISO 8601) in the same form as utc()."""
    if not text:
        return "n/a"
    try:
        return utc(datetime.fromisoformat(text).timestamp())
    except ValueError:
        return text


def text(value) -> str:
    """Any stored value as report text: None -> "n/a", bools as yes/no, lists comma-joined."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(text(v) for v in value) if value else "(none)"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)

