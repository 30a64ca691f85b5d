"""A model's history from the results index (issue 41 §2): every run of the model by firmware
and sample (serial), each headline figure (the index's figures: test, metric, cell) over time
with its spread, the change points of each figure over the runs in time order
(pts.index.changepoints), and, given two firmwares A and B, a verdict per cell: "regressed",
"improved", "no change beyond noise" or "spread unknown". The one mechanism behind
`python -m pts history` (pts.index.history_cli) and the dashboard's history page.

Which runs: every run of the model (its exact name) in the index; the figures of the runs the
index calls finished, the values a cell shows ("ok": not N/A, n/r, no data or not given).
Runs without a start time cannot be placed in time and are listed apart, out of the figures.
`spec` and `host` keep only the runs of that spec (run.json's spec name) or host; without
them the runs are taken as they are, and a history whose runs span several specs or hosts
says so in its notes, naming the filter (a quick spec's figures beside a full one's are not
one drive's history). Options are not matched (docs/history.md).

The verdict of a cell, A's runs against B's (one value per run: the report's figure):
- fewer than two runs on a side: "spread unknown": one run says nothing about run-to-run
  noise, so no claim is made beyond the difference of the means;
- else Welch's t-test (scipy.stats.ttest_ind, equal_var=False; two-sided): it assumes the
  runs are independent (a run is a purge, preconditioning and rounds of its own; runs of one
  sample are taken as independent too), each side's values roughly normal, and does not
  assume equal variances. p <= the level (a setting, LEVEL by default): "regressed" or
  "improved" by the metric's better direction (the figure catalogue's, pts.stored.figures),
  "changed beyond noise" for a metric with no better direction; else "no change beyond
  noise". Both sides without any spread (every run the same value): equal means are no
  change (p = 1), different ones a change (p = 0: beyond a noise of zero).
The level holds per cell: with many cells, some cells of two identical firmwares cross it by
chance (one in twenty at 0.05).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from scipy import stats

from pts.index import changepoints, query
from pts.index.rows import FINISHED, OK
from pts.stored import figures

LEVEL = 0.05
REGRESSED, IMPROVED, NO_CHANGE = "regressed", "improved", "no change beyond noise"
CHANGED, SPREAD_UNKNOWN, MISSING = "changed beyond noise", "spread unknown", "not on both sides"
TEST_NAME = "Welch's t-test (two-sided; independent runs, each side roughly normal, " \
            "variances not assumed equal)"
CHANGE_METHOD = ("E-divisive (Matteson & James 2014) for where; Student's t-test (pooled) "
                 "at the split times the splits searched (Bonferroni) for whether; Holm's "
                 "step-down over all the figures: the level holds for the whole history")



def better(test: str, metric: str, unit: str) -> int:
    """HIGHER (1), LOWER (-1) or 0 (no better direction): the figure catalogue's
    (pts.stored.figures: the reasons are there); a metric it does not have (indexed by a newer
    reader) by its unit, where every catalogued figure of that unit agrees."""
    way = figures.better(test, metric)
    if way != figures.NONE or any(f.metric == metric for f in figures.of(test, figures.INDEX)):
        return way
    ways = {f.better for f in figures.catalogue() if f.unit == unit and figures.INDEX in f.shown}
    return ways.pop() if len(ways) == 1 else figures.NONE


@dataclass(frozen=True)
class Run:
    number: int              # 1.. in time order (0: undated)
    folder: str
    run_id: str
    serial: str
    firmware: str
    host: str
    spec: str
    started: str
    started_at: float | None
    state: str
    verdict: str
    compliant: bool | None
    ocp: str = ""           # the OCP requirement counts of the run ("": none, not NVMe)


@dataclass(frozen=True)
class Spread:
    """A set of runs' values of one figure: n, mean, sample std (n - 1; None below two)."""

    n: int
    mean: float
    std: float | None
    low: float
    high: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        return cls(len(values), statistics.fmean(values),
                   statistics.stdev(values) if len(values) > 1 else None,
                   min(values), max(values))


def label_of(test: str, metric: str, cell: str) -> str:
    """A figure's name on the page and in the CLI: its test, its metric when the test's
    name does not already say it (IOPS's metric is iops), its cell."""
    parts = (test, "" if metric == test else metric, cell)
    return " ".join(p for p in parts if p)


@dataclass(frozen=True)
class Level:
    """A change point: run `run` (its number) starts a new level."""

    run: int
    p_value: float
    mean_before: float
    mean_after: float


@dataclass(frozen=True)
class Figure:
    test: str
    metric: str
    cell: str
    unit: str
    values: tuple[tuple[int, float], ...]          # (run number, value), in time order
    by_firmware: tuple[tuple[str, Spread], ...]
    overall: Spread
    host_bound: int                                # runs whose cell the report marks
    levels: tuple[Level, ...]

    @property
    def label(self) -> str:
        return label_of(self.test, self.metric, self.cell)


@dataclass(frozen=True)
class Verdict:
    """One cell, firmware A against B."""

    test: str
    metric: str
    cell: str
    unit: str
    a: Spread | None
    b: Spread | None
    change_pct: float | None       # (B - A) / A, of the means
    p_value: float | None
    verdict: str
    why: str

    @property
    def label(self) -> str:
        return label_of(self.test, self.metric, self.cell)


@dataclass(frozen=True)
class History:
    model: str
    level: float
    runs: tuple[Run, ...]                 # dated, oldest first, then undated
    firmwares: tuple[str, ...]            # in order of their first run
    figures: tuple[Figure, ...]
    a: str | None
    b: str | None
    verdicts: tuple[Verdict, ...]
    notes: tuple[str, ...]


class HistoryError(Exception):
    """The question cannot be answered; the message says why and what to ask instead."""


def history(conn, model: str, firmwares: Sequence[str] = (), level: float = LEVEL,
            root: str | None = None, spec: str | None = None,
            host: str | None = None, changes: bool = True) -> History:
    """The history of `model` in the index `conn` (under `root`; None: all of it); with one
    firmware, that firmware's runs only; with two, A (the first) against B; with `spec` or
    `host`, the runs of that spec or host only."""
    if not 0 < level < 1:
        raise HistoryError(f"the significance level must be between 0 and 1, not {level:g}")
    if len(firmwares) > 2:
        raise HistoryError(f"{len(firmwares)} firmwares given: give one (its history) or two "
                           "(A against B)")
    if len(firmwares) == 2 and firmwares[0] == firmwares[1]:
        raise HistoryError(f"firmware {firmwares[0]} given twice: A and B must differ")
    rows = query.model_runs(conn, model, root)
    if not rows:
        known = ", ".join(f"{m} ({n})" for m, n in query.models(conn, root)) or "none"
        raise HistoryError(f"no run of model {model!r} in the index (the model as the runs "
                           f"list shows it, exactly; models indexed, with their runs: {known})")
    for key, name, want in (("spec_name", "spec", spec), ("host", "host", host)):
        if want is None:
            continue
        kept = [r for r in rows if (r[key] or "") == want]
        if not kept:
            have = ", ".join(sorted({r[key] or "(none)" for r in rows}))
            raise HistoryError(f"model {model!r} has no run of {name} {want!r} in the index "
                               f"(its {name}s: {have})")
        rows = kept
    present = {r["firmware"] for r in rows}
    absent = [f for f in firmwares if f not in present]
    if absent:
        raise HistoryError(f"model {model!r} has no run of firmware {', '.join(absent)} in "
                           f"the index (its firmwares: {', '.join(sorted(present))})")
    if len(firmwares) == 1:
        rows = [r for r in rows if r["firmware"] == firmwares[0]]
    runs = _numbered(rows)
    notes = []
    undated = [r for r in runs if r.number == 0]
    if undated:
        notes.append(f"{len(undated)} run(s) without a start time (run.json's `started`) "
                     "cannot be placed in time: listed, not in the figures")
    left = [r for r in runs if r.number and r.state != FINISHED]
    if left:
        notes.append(f"{len(left)} run(s) not finished (unfinished or unreadable): listed, "
                     "not in the figures")
    counted = {r.folder: r for r in runs if r.number and r.state == FINISHED}
    notes += _mixed(counted.values())
    figures = _figures(query.model_figures(conn, model, root), counted, level, changes)
    firmware_order = tuple(dict.fromkeys(r.firmware for r in runs))
    a, b = (firmwares[0], firmwares[1]) if len(firmwares) == 2 else (None, None)
    firmware_of = {r.number: r.firmware for r in counted.values()}
    verdicts = tuple(judge(f, firmware_of, a, b, level) for f in figures) \
        if a is not None else ()
    return History(model, level, tuple(runs), firmware_order, tuple(figures), a, b, verdicts,
                   tuple(notes))


def firmwares(conn, model: str, root: str | None = None) -> tuple[str, ...]:
    """The model's firmwares in the order of their first run (dated runs first)."""
    return tuple(dict.fromkeys(r.firmware for r in _numbered(query.model_runs(conn, model,
                                                                              root))))


def narrowed(h: History, test: str | None, metric: str | None) -> History:
    """`h` with only the figures and verdicts of `test` and `metric` (None: any)."""
    def keep(x) -> bool:
        return (test is None or x.test == test) and (metric is None or x.metric == metric)
    return dataclasses.replace(h, figures=tuple(f for f in h.figures if keep(f)),
                               verdicts=tuple(v for v in h.verdicts if keep(v)))


def _mixed(runs) -> list[str]:
    """A note per attribute (spec, host) on which the counted runs differ."""
    out = []
    for name, of in (("spec", lambda r: r.spec), ("host", lambda r: r.host)):
        counts: dict[str, int] = {}
        for r in runs:
            counts[of(r) or "(none)"] = counts.get(of(r) or "(none)", 0) + 1
        if len(counts) > 1:
            each = ", ".join(f"{k} ({n})" for k, n in sorted(counts.items()))
            out.append(f"the figures mix runs of {len(counts)} {name}s: {each}; give "
                       f"--{name} (the page: {name}=) to keep one")
    return out


def _numbered(rows: list[dict]) -> list[Run]:
    dated = sorted((r for r in rows if r["started_at"] is not None),
                   key=lambda r: (r["started_at"], r["folder"]))
    undated = sorted((r for r in rows if r["started_at"] is None), key=lambda r: r["folder"])
    return [Run(n, r["folder"], r["run_id"], r["serial"], r["firmware"], r["host"] or "",
                r["spec_name"] or "", r["started"] or "", r["started_at"], r["state"],
                r["verdict"] or "", None if r["compliant"] is None else bool(r["compliant"]),
                _ocp(r))
            for n, r in [(i, r) for i, r in enumerate(dated, 1)] + [(0, r) for r in undated]]


def _ocp(row: dict) -> str:
    """'OCP 2.7: n PASS, n FAIL, n NOT APPLICABLE, n NOT CHECKED', or '' (not indexed)."""
    if row.get("ocp_version") is None:
        return ""
    counts = (row["ocp_pass"], row["ocp_fail"], row["ocp_not_applicable"],
              row["ocp_not_checked"])
    return f"OCP {row['ocp_version']}: " + ", ".join(
        f"{n} {w}" for n, w in zip(counts, ("PASS", "FAIL", "NOT APPLICABLE", "NOT CHECKED"),
                                   strict=True))


def _figures(rows: list[dict], counted: dict[str, Run], level: float,
             with_changes: bool = True) -> list[Figure]:
    kept = [r for r in rows if r["folder"] in counted and r["shown"] == OK
            and r["value"] is not None and math.isfinite(r["value"])]
    kept.sort(key=lambda r: (counted[r["folder"]].number, r["test_position"], r["position"]))
    series: dict[tuple[str, str, str], list[dict]] = {}
    for r in kept:
        series.setdefault((r["test"], r["metric"], r["cell"]), []).append(r)
    out = []
    # change points: Holm over every series of the history at once (changepoints.holm)
    changes = changepoints.holm_cached(tuple(tuple(float(r["value"]) for r in found)
                                             for found in series.values()), level) \
        if with_changes else ((),) * len(series)
    for ((test, metric, cell), found), points_changed in zip(series.items(), changes,
                                                             strict=True):
        values = tuple((counted[r["folder"]].number, float(r["value"])) for r in found)
        groups: dict[str, list[float]] = {}
        for r in found:
            groups.setdefault(counted[r["folder"]].firmware, []).append(float(r["value"]))
        points = [v for _, v in values]
        levels = tuple(Level(values[c.index][0], c.p_value, c.mean_before, c.mean_after)
                       for c in points_changed)
        out.append(Figure(test, metric, cell, found[0]["unit"], values,
                          tuple((fw, Spread.of(v)) for fw, v in groups.items()),
                          Spread.of(points), sum(bool(r["host_bound"]) for r in found),
                          levels))
    return out


def judge(f: Figure, firmware_of: dict[int, str], a: str, b: str, level: float) -> Verdict:
    """The verdict of figure `f`, firmware `a` against `b` (`firmware_of`: run number ->
    firmware), at `level` (the module's docstring says how)."""
    sides = dict(f.by_firmware)
    sa, sb = sides.get(a), sides.get(b)
    base = {"test": f.test, "metric": f.metric, "cell": f.cell, "unit": f.unit, "a": sa,
            "b": sb}
    if sa is None or sb is None:
        return Verdict(**base, change_pct=None, p_value=None, verdict=MISSING,
                       why=f"no value on {a if sa is None else b}")
    change = (sb.mean - sa.mean) / sa.mean * 100 if sa.mean else None
    if sa.n < 2 or sb.n < 2:
        return Verdict(**base, change_pct=change, p_value=None, verdict=SPREAD_UNKNOWN,
                       why="one run on a side: its run-to-run spread is unknown, no claim "
                           "beyond the difference of the means")
    va = [v for n, v in f.values if firmware_of[n] == a]
    vb = [v for n, v in f.values if firmware_of[n] == b]
    p = welch_p(va, vb)
    if p > level:
        return Verdict(**base, change_pct=change, p_value=p, verdict=NO_CHANGE,
                       why=f"p = {p:.3g} > {level:g}")
    way = better(f.test, f.metric, f.unit)
    if way == 0:
        verdict, why = CHANGED, f"p = {p:.3g} <= {level:g}; no better direction for {f.metric}"
    else:
        verdict = IMPROVED if (sb.mean - sa.mean) * way > 0 else REGRESSED
        why = f"p = {p:.3g} <= {level:g}; {'higher' if way > 0 else 'lower'} is better"
    return Verdict(**base, change_pct=change, p_value=p, verdict=verdict, why=why)


def welch_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Welch's t-test's two-sided p-value (scipy); p = 1 or 0 when neither side varies."""
    if statistics.pvariance(a) == 0 and statistics.pvariance(b) == 0:
        return 1.0 if statistics.fmean(a) == statistics.fmean(b) else 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # nearly equal values: scipy warns
        return float(stats.ttest_ind(a, b, equal_var=False).pvalue)
