"""The readings of the specification a run used (issue 21 §2), from its stored data only:
the `readings` list each test_start recorded (pts.config.spec_readings: the spec file's
[provenance.*] entries of status "reading" or "choice" in the sections that test ran with).
A value read by several tests is listed once, with the tests that used it; the same key with
another value (a resumed run on an edited spec file) is its own row."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

READING, CHOICE = "reading", "choice"
TITLE = "Readings of the specification"       # the report section's heading


@dataclass(frozen=True)
class ReadingView:
    key: str                        # "hir.idle_seconds"
    value: object                   # as the spec file gave it
    status: str                     # "reading" or "choice"
    source: str
    alternatives: tuple[str, ...]
    tests: tuple[str, ...]          # the tests that ran with it ("dirth", "throughput")


def collect(tests: Sequence) -> tuple[ReadingView, ...]:
    """Every reading/choice recorded in the tests' test_start parameters, in first-seen
    order. `tests`: pts.stored.model.TestResult (name, parameters)."""
    found: dict[tuple[str, str], dict] = {}
    users: dict[tuple[str, str], list[str]] = {}
    for test in tests:
        for item in (test.parameters or {}).get("readings") or ():
            ident = (str(item.get("key")), json.dumps(item.get("value"), sort_keys=True))
            found.setdefault(ident, item)
            users.setdefault(ident, [])
            base = test.name.split("-")[0]      # dirth-precondition + dirth: "dirth"
            if base not in users[ident]:
                users[ident].append(base)
    return tuple(ReadingView(str(i.get("key")), i.get("value"), str(i.get("status")),
                             str(i.get("source") or ""),
                             tuple(str(a) for a in i.get("alternatives") or ()),
                             tuple(users[ident]))
                 for ident, i in found.items())


def count(readings: Sequence[ReadingView]) -> int:
    """How many values are readings of the specification (the suite's own choices, such as
    the purge probe, are not values of the specification and are not counted)."""
    return sum(1 for r in readings if r.status == READING)
