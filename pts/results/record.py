"""What a ledger record is: the base every record type of pts.results.records extends (its
`type` and `time`, the fields this version does not know in `extra`, and how it is written).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True, kw_only=True)
class Record:
    TYPE: ClassVar[str] = ""
    test: str | None
    time: float | None = None         # set by Ledger.append; None in a record not yet written
    extra: dict = field(default_factory=dict, compare=False)   # fields this version lacks

    def to_json(self) -> dict:
        out: dict[str, Any] = {"type": self.TYPE}
        if self.time is not None:
            out["time"] = self.time
        for f in dataclasses.fields(self):
            if f.name not in ("time", "extra", "measured"):
                out[f.name] = getattr(self, f.name)
        return out | getattr(self, "measured", {}) | self.extra

    @classmethod
    def fixed_fields(cls) -> list[str]:
        """The record's own fields as written (besides type, time and measured fields)."""
        return [f.name for f in dataclasses.fields(cls) if f.name not in ("time", "extra",
                                                                           "measured")]
