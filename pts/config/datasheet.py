"""A datasheet: the figures a drive must reach, read from a TOML file (docs/datasheet.md).

    [[require]]
    test = "iops"                 # the ledger test name: iops, throughput-128k, latency, wsat
    cell = "RND 4KiB 0/100"       # as the report labels cells (not for wsat's ss_iops)
    metric = "iops"               # a measured field of the test's points, or fob_ss_ratio,
                                  # ss_iops (wsat)
    at_least = 180000             # or at_most = ...

Every problem is a DatasheetError naming the file and line.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

KEYS = frozenset({"test", "cell", "metric", "at_least", "at_most", "name"})
HEADER = re.compile(r"^\s*\[\[\s*require\s*\]\]")


class DatasheetError(Exception):
    """The datasheet file cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class Vocabulary:
    """What a requirement may name. It comes from the figure catalogue
    (pts.stored.figures.datasheet_vocabulary): config/ stands below the read model that holds
    the catalogue, so the caller hands it in rather than this module keeping a copy."""

    metrics: frozenset[str]          # every metric a requirement may name
    point_metrics: frozenset[str]    # those that are measured fields of point records
    whole_test: Callable[[str, str], bool]   # (test, metric): no cell to name


@dataclass(frozen=True)
class Requirement:
    test: str
    cell: str | None
    metric: str
    bound: str             # "at_least" or "at_most"
    value: float
    where: str             # "FILE line N"
    name: str = ""         # optional, shown beside the requirement

    @property
    def id(self) -> str:
        """A pytest item id: test, cell, metric and bound."""
        cell = f" {self.cell}" if self.cell else ""
        return f"{self.test}{cell} {self.metric} {self.op} {self.value:g}"

    @property
    def op(self) -> str:
        return ">=" if self.bound == "at_least" else "<="

    def met_by(self, measured: float) -> bool:
        return measured >= self.value if self.bound == "at_least" else measured <= self.value


def load(path: str | Path, vocabulary: Vocabulary) -> tuple[Requirement, ...]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasheetError(f"cannot read datasheet {path}: {exc}") from None
    return parse(text, vocabulary, str(path))


def parse(text: str, vocabulary: Vocabulary,
          source: str = "datasheet") -> tuple[Requirement, ...]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:     # its message says "(at line N, column M)"
        raise DatasheetError(f"{source}: not valid TOML: {exc}") from None
    lines = text.splitlines()
    headers = [i + 1 for i, line in enumerate(lines) if HEADER.match(line)]
    unknown = sorted(set(data) - {"require", "name"})
    if unknown:
        raise DatasheetError(f"{source}: unknown top-level key(s) {', '.join(unknown)}; a "
                             "datasheet holds [[require]] tables (docs/datasheet.md)")
    tables = data.get("require")
    if not isinstance(tables, list) or not tables:
        raise DatasheetError(f"{source}: no [[require]] table: nothing to qualify "
                             "(docs/datasheet.md)")
    out = []
    for index, table in enumerate(tables):
        start = headers[index] if index < len(headers) else None
        end = headers[index + 1] if index + 1 < len(headers) else len(lines) + 1
        out.append(_requirement(table, vocabulary, source, lines, start, end))
    return tuple(out)


def _requirement(table: dict, vocabulary: Vocabulary, source: str, lines: list[str],
                 start: int | None, end: int) -> Requirement:
    def where(key: str | None = None) -> str:
        if start is None:
            return f"{source}: a [[require]] table"
        if key is not None:
            for n in range(start, end):
                if re.match(rf"^\s*{re.escape(key)}\s*=", lines[n - 1]):
                    return f"{source} line {n}"
        return f"{source} line {start}"

    def fail(msg: str, key: str | None = None):
        raise DatasheetError(f"{where(key)}: {msg}")

    for key in table:
        if key not in KEYS:
            fail(f"unknown key {key!r} (known: {', '.join(sorted(KEYS))})", key)
    test = table.get("test")
    if not isinstance(test, str) or not test.strip():
        fail('"test" missing or not a string (e.g. test = "iops")', "test")
    metric = table.get("metric")
    if not isinstance(metric, str) or metric not in vocabulary.metrics:
        fail(f"metric {metric!r} unknown; one of {', '.join(sorted(vocabulary.metrics))}",
             "metric")
    cell = table.get("cell")
    if cell is not None and not isinstance(cell, str):
        fail('"cell" must be a string such as "RND 4KiB 0/100"', "cell")
    if cell is None and not vocabulary.whole_test(test, metric):
        fail(f'"cell" missing: metric {metric} is per cell (e.g. cell = "RND 4KiB 0/100")')
    bounds = [k for k in ("at_least", "at_most") if k in table]
    if len(bounds) != 1:
        fail("give exactly one of at_least = N or at_most = N")
    value = table[bounds[0]]
    if isinstance(value, bool) or not isinstance(value, int | float):
        fail(f"{bounds[0]} must be a number, not {value!r}", bounds[0])
    name = table.get("name", "")
    return Requirement(test.strip(), cell, metric, bounds[0], float(value), where(),
                       str(name))
