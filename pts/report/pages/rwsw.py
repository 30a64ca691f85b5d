"""RWSW test pages (issue 32 §4): the workload pages of the ATW the test applied (once per
run and ATW), then per test:

- rwsw-wsat (Multi-WSAT): IOPS per round vs time and vs data written (TGBW), the ATW target
  vs achieved table, the steady-state convergence and window (the shared builders);
- rwsw-streams (Individual Streams): the per-stream table and IOPS per round per stream, the
  steady-state windows (the shared builders).

Numbers come from pts.stored.rwsw. A test of the family without a page function of its own
(rwsw-replay, rwsw-dirth until theirs are written) gets the workload pages and the shared
round-test pages (`generic`): add `def <test>(run, test)` here and its line in
pts.report.pages.registry.
"""

from __future__ import annotations

from reportlab.lib.units import mm
from reportlab.platypus import Flowable

from pts.report.pages import workload
from pts.report.pages.steady import convergence_page, page_info, window_pages
from pts.report.renderers import charts
from pts.report.renderers.layout import CONTENT_WIDTH, grid_table, h2, image, new_page, para
from pts.stored import fmt, rwsw
from pts.stored.model import RunView, TestResult
from pts.stored.workload_view import from_parameters

US = "µs"


def workload_pages(run: RunView, test: TestResult) -> list[Flowable]:
    """The ATW's pages, in the first RWSW test of the run that applied it; later ones refer."""
    view = from_parameters(test.parameters)
    if view is None:
        return []
    sha = (test.parameters.get("atw") or {}).get("sha256")
    first = next(t for t in run.tests if (t.parameters.get("atw") or {}).get("sha256") == sha)
    if first is not test:
        return [para(f"Workload {view.atw_name!r}: the same ATW as {first.title}, whose pages "
                     "show it.", "small")]
    return workload.pages(view, lambda sub, foot: page_info(test, sub, foot))


def wsat(run: RunView, test: TestResult) -> list[Flowable]:
    return (convergence_page(test, "IOPS") + workload_pages(run, test)
            + iops_pages(test) + shares_page(test) + window_pages(test, "IOPS"))


def streams(run: RunView, test: TestResult) -> list[Flowable]:
    return (convergence_page(test, "IOPS") + workload_pages(run, test)
            + stream_table_page(test) + window_pages(test, "IOPS"))


def generic(run: RunView, test: TestResult) -> list[Flowable]:
    """An RWSW test without its own pages yet: the workload and the round-test pages."""
    return (convergence_page(test, "IOPS") + workload_pages(run, test)
            + window_pages(test, "IOPS"))


def iops_pages(test: TestResult) -> list[Flowable]:
    rounds = rwsw.round_points(test)
    story: list[Flowable] = []
    for axis, xlabel, name in (("end_min", "Time (minutes)", "IOPS vs Time"),
                               ("tgbw_gb", "Total GB written (TGBW, decimal GB)",
                                "IOPS vs TGBW")):
        title = f"{test.title}: {name}"
        story += new_page(page_info(test, name, f"Plot: {title}")) + [h2(name)]
        got = [r for r in rounds if getattr(r, axis) is not None]
        if not got:
            story.append(para(f"No round recorded {xlabel.lower()}: nothing to plot."))
            continue
        png = charts.lines({f"ATW IOPS per {test.typed.point_seconds} s round":
                            ([getattr(r, axis) for r in got], [r.iops for r in got])},
                           xlabel, "IOPS", title, log_y=False)
        story += [image(png), para(
            f"One point per round (rounds {got[0].round}..{got[-1].round}); TGBW: the "
            "write bytes fio reported for the rounds, summed.", "small")]
    return story


def shares_page(test: TestResult) -> list[Flowable]:
    name = "ATW Target vs Achieved"
    story = new_page(page_info(test, name, f"Table: {test.title} {name}")) + [h2(name)]
    rows = rwsw.shares(test)
    limit = rwsw.tolerance(test)
    table = [[r.stream, f"{r.target_pct:.2f}", _pct(r.achieved_pct), _pct(r.max_miss_pts),
              str(r.rounds), "n/a" if r.within is None else "yes" if r.within else "NO"]
             for r in rows]
    widths = [40 * mm] + [(CONTENT_WIDTH - 40 * mm) / 5] * 5
    story += [para(f"Per stream of the ATW: the target share of I/Os and the share fio's own "
                   f"per-stream results achieved, averaged over the recorded rounds; max miss "
                   f"is the largest |achieved - target| of any round (percentage points); "
                   f"tolerance {fmt.text(limit)} points (rwsw_atw.share_tolerance_pct)."),
              grid_table(("IO stream", "Target %", "Achieved % (mean)", "Max miss (pts)",
                          "Rounds", "Within tolerance"), table, widths, align_right_from=1)]
    bad = rwsw.outside(rows)
    if bad:
        story.append(para(
            '<font color="#b00020"><b>DECLARED: the applied workload did not reproduce the '
            f"ATW within {fmt.text(limit)} points for "
            + ", ".join(f"{r.stream} (max miss {r.max_miss_pts:.2f})" for r in bad)
            + ".</b></font>", markup=True))
    return story


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def stream_table_page(test: TestResult) -> list[Flowable]:
    name = "Per-Stream Results"
    story = new_page(page_info(test, name, f"Table: {test.title} {name}")) + [h2(name)]
    results = rwsw.stream_results(test)
    w = test.window
    span = "no measurement window" if w is None else f"rounds {w[0]}..{w[1]}"
    steady_round = test.end.steady_round if test.end else None
    table = [[r.stream, fmt.num(r.iops), fmt.num(r.lat_mean_us),
              "not recorded" if r.lat_percentile_us is None else fmt.num(r.lat_percentile_us),
              "n/a" if r.steady is None else "yes" if r.steady else "NO"] for r in results]
    widths = [40 * mm] + [(CONTENT_WIDTH - 40 * mm) / 4] * 4
    story += [para(f"Each stream alone at the ATW's OIO; means over the measurement window "
                   f"({span}). Steady round of the test: {fmt.text(steady_round)}."),
              grid_table(("IO stream", "SS IOPS", f"ART ({US})", f"5 9s ({US})",
                          "Steady in the window"), table, widths, align_right_from=1)]
    if test.rounds:
        series = {t.label: [r.tracking.get(t.label) for r in test.rounds]
                  for t in test.tracking}
        story.append(image(charts.convergence([r.number for r in test.rounds], series,
                                              test.window, "IOPS",
                                              f"{test.title}: IOPS per round per stream")))
    return story
