"""The spec's units: a R/W mix ("65/35", read/write percent) and a block size ("4KiB",
binary units, PTS 2.0.2 §2.4.1), as the spec files write them and as the report prints them.
pts.config.spec gives them to its readers (and re-exports them: callers import them there)."""

from __future__ import annotations

import re
from dataclasses import dataclass

KIB = 1024


@dataclass(frozen=True)
class RwMix:
    """A read/write mix in percent, written "65/35" (read/write) as in the spec."""

    read_pct: int

    @property
    def write_pct(self) -> int:
        return 100 - self.read_pct

    def __str__(self) -> str:
        return f"{self.read_pct}/{self.write_pct}"

    @classmethod
    def parse(cls, text: str) -> RwMix:
        m = re.fullmatch(r"\s*(\d{1,3})\s*/\s*(\d{1,3})\s*", str(text))
        if not m or int(m[1]) + int(m[2]) != 100:
            raise ValueError(f"{text!r} is not a R/W mix like '65/35' (read/write %, sum 100)")
        return cls(int(m[1]))


def parse_size(text: str) -> int:
    """'4KiB' -> 4096, '0.5KiB' -> 512, '1MiB' -> 1048576 (binary units, PTS 2.0.2 §2.4.1)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB)\s*", str(text))
    if not m:
        raise ValueError(f"{text!r} is not a size like '4KiB', '0.5KiB' or '1MiB'")
    factor = {"B": 1, "KiB": KIB, "MiB": KIB**2, "GiB": KIB**3}[m[2]]
    value = float(m[1]) * factor
    if value != int(value) or value <= 0:
        raise ValueError(f"{text!r} is not a whole, positive number of bytes")
    return int(value)


def format_size(nbytes: int) -> str:
    """Block size as the spec writes it, always in KiB: 512 -> '0.5 KiB', 1 MiB -> '1024 KiB'."""
    return f"{nbytes / KIB:g} KiB"
