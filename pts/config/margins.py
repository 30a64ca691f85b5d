"""The release gate's practical margins (issue 50 §2): per figure, the relative change that
matters; a smaller one is not a regression, however certain (pts.index.release_gate). Built-in
defaults below, each with its reason; a lab's own in a TOML file, as datasheets are
(docs/history.md "The release gate"):

    # margins in percent of firmware A's value
    default = 5                    # a figure neither table names
    [metric]                       # by the index's metric name (first)
    lat_percentile_us = 10
    iops = { percent = 3, why = "our customers' SLA" }
    [unit]                         # by the figure's unit (when no metric entry names it)
    "MB/s" = 5

Every problem is a MarginsError naming the file, the line and the fix.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

LOWEST, HIGHEST = 0.1, 50.0     # percent: outside, a typing slip (0.05 meant as 5 %?)


@dataclass(frozen=True)
class Margin:
    percent: float
    why: str
    where: str              # "built in", or "FILE line N"

    @property
    def fraction(self) -> float:
        return self.percent / 100


BUILT_IN = "built in (pts/config/margins.py)"
# Issue 50's own example: 5 % for the figures of work done per second. A drop of 5 % is about
# the step between two firmware drops a datacenter qualification notices in its fleet and
# about 2.5 times the 2 % run-to-run spread the issue assumes: a margin below the spread
# would need many runs a side to show anything within it.
_WORK = "issue 50's example for IOPS and throughput: 5 %"
# The mean response time at a fixed load (TC x QD outstanding I/Os) is outstanding / IOPS
# (Little's law), so the IOPS margin, carried over: 5 % of IOPS is 5.3 % of ART.
_ART = "mean response time = outstanding I/Os / IOPS (Little's law): the IOPS margin, 5 %"
# A percentile of the tail (99.99 % and beyond) rests on the slowest few I/Os of the window
# (99.999 %: one in 100,000) and moves more from run to run than a mean; twice the mean's
# margin. This project's choice, not a standard's: the OCP datacenter NVMe SSD specification
# sets latency percentile targets (pass/fail levels), not margins between firmwares.
_TAIL = "a tail percentile rests on its few slowest I/Os: twice the mean's margin, 10 %"
# The maximum is one I/O's time: the noisiest figure a run gives.
_MAX = "the maximum is one I/O's time, the noisiest figure: 20 %"
# WAF: media bytes per host byte; 5 % more wears the media 5 % faster (the endurance rating
# falls by as much): the same margin as the work done.
_WAF = "5 % more media writes per host write is 5 % less endurance: 5 %"
_TIME = "a recovery time (seconds) is one event's length: 10 %, as a tail"
_OTHER = "a figure no entry names: the work-done margin, 5 %"

DEFAULT_METRIC = {
    "iops": (5.0, _WORK), "mbps": (5.0, _WORK), "fob_iops": (5.0, _WORK),
    "lat_mean_us": (5.0, _ART), "lat_percentile_us": (10.0, _TAIL),
    "lat_max_us": (20.0, _MAX), "waf": (5.0, _WAF),
}
DEFAULT_UNIT = {"IOPS": (5.0, _WORK), "MB/s": (5.0, _WORK), "s": (10.0, _TIME)}
# the index's newer latency figures by name: QoS levels (qos_99.99_us ...) are tails,
# *max* ones maxima, other *lat_mean* ones means
PATTERNS = ((re.compile(r"^qos_.*_us$"), 10.0, _TAIL),
            (re.compile(r"max.*_us$"), 20.0, _MAX),
            (re.compile(r"lat_mean.*_us$"), 5.0, _ART))
KEYS = frozenset({"default", "metric", "unit"})


class MarginsError(Exception):
    """The margins file cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class Margins:
    by_metric: dict[str, Margin]
    by_unit: dict[str, Margin]
    default: Margin

    def of(self, metric: str, unit: str) -> Margin:
        """The margin of a figure: its metric's entry, else a latency pattern's (built in),
        else its unit's, else the default."""
        if metric in self.by_metric:
            return self.by_metric[metric]
        for pattern, percent, why in PATTERNS:
            if pattern.search(metric):
                return Margin(percent, why, BUILT_IN)
        return self.by_unit.get(unit, self.default)

    @property
    def key(self) -> str:
        """Which margins these are, as the results index keeps the gate's answers under
        (pts.index.gate_store): "built in", else a digest of every entry (percent, reason,
        source line), so an edited file is other margins, and the same file read twice the
        same ones."""
        if self == defaults():
            return "built in"
        entries = [sorted((k, m.percent, m.why, m.where) for k, m in table.items())
                   for table in (self.by_metric, self.by_unit)]
        entries.append([(self.default.percent, self.default.why, self.default.where)])
        return "sha256:" + hashlib.sha256(repr(entries).encode()).hexdigest()[:16]


def defaults() -> Margins:
    return Margins({k: Margin(p, w, BUILT_IN) for k, (p, w) in DEFAULT_METRIC.items()},
                   {k: Margin(p, w, BUILT_IN) for k, (p, w) in DEFAULT_UNIT.items()},
                   Margin(5.0, _OTHER, BUILT_IN))


def load(path: str | Path) -> Margins:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MarginsError(f"cannot read margins file {path}: {exc}") from None
    return parse(text, str(path))


def parse(text: str, source: str = "margins") -> Margins:
    """The built-in margins with the file's entries over them."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:     # its message says "(at line N, column M)"
        raise MarginsError(f"{source}: not valid TOML: {exc}") from None
    lines = text.splitlines()
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise MarginsError(f"{source} line {_line(lines, unknown[0], None)}: unknown key(s) "
                           f"{', '.join(unknown)}; a margins file holds default = N, [metric] "
                           "and [unit] tables (docs/history.md)")
    base = defaults()
    found = {"metric": dict(base.by_metric), "unit": dict(base.by_unit)}
    default = base.default
    if "default" in data:
        default = _margin(data["default"], "default", None, source, lines)
    for table in ("metric", "unit"):
        entries = data.get(table, {})
        if not isinstance(entries, dict):
            raise MarginsError(f"{source} line {_line(lines, table, None)}: {table} must be a "
                               f"table ([{table}] with name = percent lines)")
        for name, value in entries.items():
            found[table][name] = _margin(value, name, table, source, lines)
    return Margins(found["metric"], found["unit"], default)


def _line(lines: list[str], key: str, table: str | None) -> int:
    """The line of `key` (within [table] when given), or of the table's header; 1."""
    inside = table is None
    for n, line in enumerate(lines, 1):
        if table is not None and re.match(r"^\s*\[", line):
            inside = re.match(rf"^\s*\[\s*{re.escape(table)}\s*\]", line) is not None
            continue
        if inside and re.match(rf'^\s*"?{re.escape(key)}"?\s*=', line):
            return n
    return 1


def _margin(value, name: str, table: str | None, source: str, lines: list[str]) -> Margin:
    where = f"{source} line {_line(lines, name, table)}"
    label = f"[{table}] {name}" if table else name
    why = "set in the margins file"
    if isinstance(value, dict):
        extra = sorted(set(value) - {"percent", "why"})
        if extra or "percent" not in value:
            raise MarginsError(f"{where}: {label}: give {{ percent = N, why = \"...\" }}"
                               + (f" (unknown: {', '.join(extra)})" if extra else ""))
        why = str(value.get("why", why))
        value = value["percent"]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MarginsError(f"{where}: {label} = {value!r}: a margin is a number of percent "
                           "(e.g. 5 for 5 %)")
    if not LOWEST <= value <= HIGHEST:
        hint = f" (did you mean {value * 100:g} for {value:.0%}?)" if 0 < value < 1 else ""
        raise MarginsError(f"{where}: {label} = {value:g} %: a margin is between {LOWEST:g} "
                           f"and {HIGHEST:g} percent{hint}")
    return Margin(float(value), why, where)
