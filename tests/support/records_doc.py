"""What the checks of docs/results-format.md read: the document, a recorded fio output whose
summary gives the measured fields, the fields the runner adds to every measured point, and
the parser of a table cell's documented names (tests/unit/test_records_doc.py and a test
per test family use them)."""

from __future__ import annotations

import re

from tests.support.helpers import DATA, REPO

DOC = REPO / "docs" / "results-format.md"
RECORDED = DATA / "fio-3.33-jsonplus-randrw-65-35-4k-qd1.json"
# added to every measured point by the runner
TIMING = {"start", "end", "overlap_ms", "raw", "host_bound"}


def top_level_names(text: str) -> set[str]:
    """Backticked names of a table cell, leaving out what is nested in {...} and the
    quoted examples in (...)."""
    depth, flat = 0, []
    for ch in text:
        depth += ch == "{"
        if depth == 0:
            flat.append(ch)
        depth -= ch == "}"
    flat_text = re.sub(r"\([^()]*\)", "", "".join(flat))
    return set(re.findall(r"`([a-z_]+)`", flat_text))
