"""Pages every round-based PTS test shares: steady-state convergence, and the measurement
window (plot + evidence table) of each tracking variable (PTS digest §6.3).
"""

from __future__ import annotations

from reportlab.lib.units import mm
from reportlab.platypus import Flowable

from pts.procedure.steady_state import SteadyStateResult
from pts.report.renderers import charts
from pts.report.renderers.layout import (
    PageInfo,
    grid_table,
    h1,
    h2,
    image,
    new_page,
    para,
    verdict_cell,
)
from pts.stored import fmt
from pts.stored.model import COMPLETE, STEADY, RunView, TestResult, TrackingView


def page_info(test: TestResult, subtitle: str, footer: str) -> PageInfo:
    return PageInfo(test.title, subtitle, footer, test.status,
                    alarm=test.state not in (STEADY, COMPLETE))


def generic(run: RunView, test: TestResult) -> list[Flowable]:
    """Pages for a test without its own builder: what every round-based test has."""
    return convergence_page(test, "value") + window_pages(test, "value")


def convergence_page(test: TestResult, ylabel: str, metric: str | None = None,
                     cells: list[tuple[str, int]] | None = None, name: str = "",
                     first: bool = True) -> list[Flowable]:
    """Tracking variables per round; or, with `metric`, that point field per round for each
    (R/W mix, block size) of `cells` (e.g. read and write MB/s, maximum latency). `first`:
    the test's first page (with its heading)."""
    subtitle = f"Steady State Convergence{f': {name}' if name else ''}"
    title = f"{test.title} {subtitle}"
    story = new_page(page_info(test, subtitle, f"Plot: {title}"))
    if first:
        story += [h1(f"{test.title} test")]
    story += [h2(subtitle), para(test.status)]
    if first:
        story += [para(line, "small") for line in round_mode_lines(test)]
    if not test.rounds:
        return story + [para("No round was completed: nothing to plot.")]
    rounds = [r.number for r in test.rounds]
    if metric is None:
        series = {t.label: [r.tracking.get(t.label) for r in test.rounds]
                  for t in test.tracking}
        what = "Tracking variables"
    else:
        series = {label: [_point_value(test, r, mix, bs, metric) for r in rounds]
                  for label, (mix, bs) in _labelled(test, cells or [])}
        what = f"{name or metric}"
    png = charts.convergence(rounds, series, test.window, ylabel, title)
    story += [image(png), para(
        f"{what} per round, rounds {rounds[0]}..{rounds[-1]}. The shaded band is "
        "the measurement window whose rounds give the reported results.", "small")]
    return story


def round_mode_lines(test: TestResult) -> list[str]:
    """How the points ran against each other (pts.tools.fio_round): the largest overlap of a
    point's I/O with the previous point's, and every fallback to stonewalled rounds."""
    overlaps = [(p.get("overlap_ms"), p) for p in test.points
                if isinstance(p.get("overlap_ms"), float | int)]
    lines = []
    if overlaps:
        worst, point = max(overlaps, key=lambda o: o[0])
        seconds = test.typed.point_seconds
        limit = f" (limit: 1 % of a point = {10 * seconds:g} ms)" if seconds else ""
        what = (f"overlapped the previous point's by {worst:.0f} ms at most (round "
                f"{point.round}, {point.rw_mix} {fmt.block_size(point.block_size)}){limit}"
                if worst > 0 else f"never overlapped the previous point's (smallest gap "
                                   f"{-worst:.0f} ms)")
        lines.append(f"Point timing from fio's own logs: a point's I/O {what}.")
    for change in test.round_modes:
        lines.append(f"Round mode {change.mode}: {change.reason}.")
    return lines


def _labelled(test: TestResult, cells: list[tuple[str, int]]):
    steady = test.steady_parameters
    access = str(steady and steady.access or "RND")
    return [(f"{access} {fmt.block_size(bs).replace(' ', '')} {mix}", (mix, bs))
            for mix, bs in cells]


def _point_value(test: TestResult, round_no: int, mix: str, bs: int, metric: str):
    for p in test.points:
        if p.round == round_no and p.rw_mix == mix and p.block_size == bs and not p.na:
            return p.get(metric)
    return None


def window_pages(test: TestResult, ylabel: str) -> list[Flowable]:
    story: list[Flowable] = []
    for t in test.tracking:
        title = f"Steady State Measurement Window: {t.label}"
        story += new_page(page_info(test, title,
                                    f"Plot and table: {test.title} {title}"))
        story.append(h2(title))
        ev = test.window_evidence.get(t.label)
        if ev is None:
            story.append(para("No steady-state evidence: fewer rounds than a measurement "
                              "window were completed."))
            continue
        story += [image(charts.measurement_window(ev, t.label, ylabel)),
                  evidence_table(t, ev)]
    return story


def evidence_table(t: TrackingView, ev: SteadyStateResult):
    """The spec's Steady State Verification block, from the stored evidence."""
    avg = ev.average
    values = "; ".join(f"R{r}: {fmt.num(v)}" for r, v in zip(ev.rounds, ev.values, strict=True))
    where = "" if t.rw_mix is None else f" (R/W {t.rw_mix}, {fmt.block_size(t.block_size)})" \
        if t.block_size else f" (R/W {t.rw_mix})"     # RWSW's whole ATW: block size 0
    rows = [
        ("Tracking variable", f"{t.label}{where}", ""),
        ("Measurement window", f"rounds {ev.window_first}..{ev.window_last}", ""),
        ("Round values", values, ""),
        ("Average", fmt.num(avg), ""),
        ("Minimum / maximum", f"{fmt.num(ev.minimum)} / {fmt.num(ev.maximum)}", ""),
        ("110 % / 90 % of average", f"{fmt.num(1.1 * avg)} / {fmt.num(0.9 * avg)}", ""),
        ("Data excursion (max - min)",
         f"{fmt.num(ev.data_excursion)} = {_of(ev.data_excursion, avg)} of average; limit "
         f"{fmt.pct(ev.data_excursion_limit)} = {fmt.num(ev.max_data_excursion)}",
         verdict_cell(ev.data_excursion_ok)),
        ("Least-squares slope", f"{fmt.num(ev.slope)} per round", ""),
        ("Least-squares intercept", fmt.num(ev.intercept), ""),
        ("Slope excursion |slope| x (last - first round)",
         f"{fmt.num(ev.slope_excursion)} = {_of(ev.slope_excursion, avg)} of average; limit "
         f"{fmt.pct(ev.slope_excursion_limit)} = {fmt.num(ev.max_slope_excursion)}",
         verdict_cell(ev.slope_excursion_ok)),
        ("Correlation coefficient r", "n/a (constant values)" if ev.correlation is None
         else f"{ev.correlation:.4f}", ""),
        ("Fit formula", fit_formula(ev), ""),
        ("Steady state in this window", "yes" if ev.steady else "NO", verdict_cell(ev.steady)),
    ]
    return grid_table(("Item", "Value", "Result"), rows, [60 * mm, 105 * mm, 15 * mm])


def fit_formula(ev: SteadyStateResult) -> str:
    """The least-squares line as the spec writes it, y = b·R + a (R = round number)."""
    sign = "-" if ev.intercept < 0 else "+"
    return f"y = {fmt.num(ev.slope)}·R {sign} {fmt.num(abs(ev.intercept))}"


def _of(part: float, whole: float) -> str:
    return "n/a" if not whole else fmt.pct(part / whole)
