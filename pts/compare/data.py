"""What `python -m pts compare` compares: several run folders loaded (stored data only), the
differences of their specs and settings, and per test present in every run its cells side by
side with the difference to the first run in %.

The figures are those of the report and of `export --json` (pts.stored.cells): per cell
the mean over the test's measurement window; which ones, per test family, the figure
catalogue says (pts.stored.figures).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pts.report.pages import qos_text
from pts.stored import demand, figures, latency_qos, platform_rows, rwsw, rwsw_replay
from pts.stored.cells import cells, fob
from pts.stored.data import load_run
from pts.stored.model import RunView, TestResult

# Options that name where and on what a run ran, not how: they may differ between runs.
NOT_SETTINGS = frozenset({"device", "reports_dir", "destructive"})


def compared(test) -> tuple[figures.Figure, ...]:
    """The figures compared per cell: those of the test's family the catalogue
    (pts.stored.figures) shows in compare, each cell's window mean or QoS level (a stored
    test: with its --power figures where it has them; a name: without)."""
    shown = figures.of(test, figures.COMPARE)
    figures.check_readers((f.read for f in shown), (figures.CELL, figures.QOS_LEVEL),
                          "pts/compare/data.py cell_rows")
    return shown


def metrics_of(test) -> tuple[tuple[str, str, str], ...]:
    """(metric, label, unit) of each figure compared per cell (`test`: as compared())."""
    return tuple((f.name(figures.COMPARE), f.label, f.unit) for f in compared(test))


@dataclass(frozen=True)
class CellRow:
    """One cell of one test, one metric: each run's value (None: missing or N/A)."""

    test: str
    label: str
    rw_mix: str
    block_size: int
    metric: str
    unit: str
    values: tuple[float | None, ...]
    # Per run, what a missing value is ("n/r": too few I/Os for the QoS level; "n/a").
    missing: tuple[str, ...] = ()

    def missing_text(self, index: int) -> str:
        return self.missing[index] if self.missing else "n/a"

    @property
    def diffs(self) -> tuple[float | None, ...]:
        """Per run, the difference to the first run in % (None for the first run, or when
        either value is missing or the first is 0)."""
        first = self.values[0]
        return (None,) + tuple(None if v is None or not first else 100 * (v - first) / first
                               for v in self.values[1:])


@dataclass(frozen=True)
class Comparison:
    runs: tuple[RunView, ...]
    differences: tuple[str, ...]       # spec / settings differences (empty: comparable)
    common: tuple[str, ...]            # tests present in every run, first run's order
    left_out: tuple[str, ...]          # tests some runs lack: "name (not in run 2)"

    def tests(self, name: str) -> tuple[TestResult, ...]:
        return tuple(next(t for t in run.tests if t.name == name) for run in self.runs)

    def rows(self, name: str) -> list[CellRow]:
        return cell_rows(self.tests(name), self.runs)

    def label(self, index: int) -> str:
        return run_label(self.runs[index], index)


def run_label(run: RunView, index: int) -> str:
    return f"#{index + 1} {run.device.model} {run.device.serial}"


def compare(folders: Sequence[str | Path]) -> Comparison:
    """Load every run folder (RunFolderError names the one that cannot be used)."""
    return compare_views([load_run(f) for f in folders])


def compare_views(views: Sequence[RunView]) -> Comparison:
    """The comparison of runs already loaded (the dashboard's run views). UnknownFamily
    (pts.stored.figures) names a test whose figures this version does not know."""
    runs = tuple(views)
    for test in (t for run in runs for t in run.tests):
        figures.family_of(test.name)
    names = [[t.name for t in run.tests] for run in runs]
    common = tuple(n for n in names[0] if all(n in other for other in names[1:]))
    everywhere = dict.fromkeys(n for run_names in names for n in run_names)
    left_out = [f"{n} (not in run {_lacking(n, names)})" for n in everywhere if n not in common]
    return Comparison(runs, differences(runs), common, tuple(left_out))


def _lacking(name: str, names: list[list[str]]) -> str:
    return ", ".join(str(j + 1) for j, found in enumerate(names) if name not in found)


def differences(runs: Sequence[RunView]) -> tuple[str, ...]:
    """Spec and settings that are not the same in every run, one line each naming the
    value of every run."""
    out = []
    specs = [run.spec.get("name") for run in runs]
    if len(set(map(str, specs))) > 1:
        out.append("spec: " + _each(specs))
    engines = [platform_rows.engine(run.options) for run in runs]   # older runs: libaio
    if len(set(engines)) > 1:
        out.append("I/O engine (figures of one drive differ by engine on a fast drive): "
                   + _each(engines))
    keys = dict.fromkeys(k for run in runs for k in run.options
                         if k not in NOT_SETTINGS and k not in platform_rows.ENGINE_KEYS)
    for key in keys:
        values = [run.options.get(key, "(not recorded)") for run in runs]
        if len({repr(v) for v in values}) > 1:
            out.append(f"option {key}: " + _each(values))
    return tuple(out)


def _each(values) -> str:
    return ", ".join(f"run {i + 1} {v!r}" for i, v in enumerate(values))


def cell_rows(tests: Sequence[TestResult], runs: Sequence[RunView] = ()) -> list[CellRow]:
    """The first run's cells (loop order), each metric of the test family, every run's
    window mean of it; a QoS level ("qos_P") from each run's json+ bins (`runs` needed)."""
    per_run = [{(c["rw_mix"], c["block_size"]): c for c in cells(t)} for t in tests]
    shown = compared(tests[0])
    qos = _qos_levels(tests, runs) if any(f.read == figures.QOS_LEVEL for f in shown) else []
    out = []
    for f in shown:
        for key, cell in per_run[0].items():
            if f.read == figures.QOS_LEVEL and cell.get("na"):
                continue                     # as on the QoS table: no row for an N/A cell
            if f.read == figures.QOS_LEVEL:
                levels = [q.get(key, {}).get(f.level) for q in qos]
                values = tuple(None if lv is None else lv.us for lv in levels)
                missing = tuple("n/a" if lv is None else
                                qos_text.NR if lv.state == latency_qos.NOT_RESOLVABLE
                                else "n/a" for lv in levels)
            else:
                values = tuple((run.get(key) or {}).get("metrics", {}).get(f.field)
                               for run in per_run)
                missing = ()
            out.append(CellRow(tests[0].name, cell["label"], key[0], key[1],
                               f.name(figures.COMPARE), f.unit, values, missing))
    return out


def rwsw_rows(tests: Sequence[TestResult]) -> list[CellRow]:
    """RWSW, per stream of the first run's ATW: rwsw-streams its window IOPS and ART alone,
    rwsw-wsat its achieved share of I/Os (the same workload on another drive may not mix the
    same); every run's value by stream name (None: that run's ATW lacks the stream)."""
    name = tests[0].name
    if name == "rwsw-replay":
        return _replay_rows(tests)
    if name == "rwsw-dirth":
        return _demand_rows(tests)
    if name == "rwsw-streams":
        per_run = [{r.stream: r for r in rwsw.stream_results(t)} for t in tests]
        metrics = (("iops", "IOPS", "IOPS"), ("lat_mean_us", "ART", "us"))
    else:
        per_run = [{r.stream: r for r in rwsw.shares(t)} for t in tests]
        metrics = (("achieved_pct", "achieved share of I/Os", "%"),)
    return [CellRow(name, f"{stream} {title}", "", 0, metric, unit,
                    tuple(getattr(run.get(stream), metric, None) for run in per_run))
            for metric, title, unit in metrics for stream in per_run[0]]


def _replay_rows(tests: Sequence[TestResult]) -> list[CellRow]:
    """rwsw-replay, per capture step of the first run: each run's replay IOPS and ART."""
    per_run = [{r.step: r for r in rwsw_replay.steps(t)} for t in tests]
    return [CellRow(tests[0].name, f"step {step} {title}", "", 0, metric, unit,
                    tuple(getattr(run.get(step), metric, None) for run in per_run))
            for metric, title, unit in (("iops", "IOPS", "IOPS"), ("lat_mean_us", "ART", "us"))
            for step in per_run[0]]


def _demand_rows(tests: Sequence[TestResult]) -> list[CellRow]:
    """rwsw-dirth, per (TC, QD) of the first run: each run's window mean IOPS and ART."""
    per_run = [demand.grid(t) for t in tests]
    return [CellRow(tests[0].name, f"TC{tc}/QD{qd} {title}", "", 0, metric, unit,
                    tuple((run.get((tc, qd)) or {}).get(metric) for run in per_run))
            for metric, title, unit in (("iops", "IOPS", "IOPS"), ("lat_mean_us", "ART", "us"))
            for tc, qd in per_run[0]]


def _qos_levels(tests: Sequence[TestResult], runs: Sequence[RunView]) -> list[dict]:
    """Per run: {(R/W mix, block size): {pct: latency_qos.Level}}."""
    out = []
    for test, run in zip(tests, runs, strict=True):
        found = latency_qos.cells(test, latency_qos.load_bins(run, test))
        out.append({c.key: {lv.pct: lv for lv in c.levels} for c in found})
    return out


def fob_rows(comparison: Comparison) -> list[tuple[int, str, str, float | None,
                                                    float | None, float | None]]:
    """Per run and test, its FOB vs steady-state figures where it holds them:
    (run index, test, cell, FOB IOPS, steady-state IOPS, FOB / SS)."""
    out = []
    for i, run in enumerate(comparison.runs):
        for test in run.tests:
            for f in fob(test):
                out.append((i, test.name, f["label"], f["fob_iops"], f["ss_iops"],
                            f["fob_ss_ratio"]))
            r = test.result
            if r.get("fob_iops") is not None:
                out.append((i, test.name, "WSAT (first sample vs window)", r.get("fob_iops"),
                            r.get("ss_average"), r.get("fob_ss_ratio")))
    return out
