"""RWSW test pages (issue 32 §4): the workload pages of the ATW the test applied (once per
run and ATW), then per test:

- rwsw-wsat (Multi-WSAT): IOPS per round vs time and vs data written (TGBW), the ATW target
  vs achieved table, the steady-state convergence and window (the shared builders);
- rwsw-streams (Individual Streams): the per-stream table and IOPS per round per stream, the
  steady-state windows (the shared builders);
- rwsw-replay (Replay-Native): per capture step the replay's IOPS and mean response time
  overlaid on the capture's in-situ figures, the step table with the totals of both
  (pts.stored.rwsw_replay); no convergence page: one pass, no steady state;
- rwsw-dirth: PTS DIRTH's demand pages (pts.report.pages.dirth_cbw.demand_pages: IOPS vs QD,
  the demand-intensity curve, every TC x QD point, CPU, the operating points and their
  histograms) with the declared histogram choice ([rwsw_dirth] histograms).

Numbers come from pts.stored.rwsw and pts.stored.rwsw_replay. The preconditioning tests
("<test>-preconditioning") and any test of the family without a page function of its own get
the workload pages and the shared round-test pages (`generic`): add `def <test>(run, test)`
here and its line in pts.report.pages.registry.
"""

from __future__ import annotations

from reportlab.lib.units import mm
from reportlab.platypus import Flowable

from pts.report.pages import dirth_cbw, workload
from pts.report.pages.steady import convergence_page, page_info, window_pages
from pts.report.renderers import charts, dirth_cbw_charts
from pts.report.renderers.layout import CONTENT_WIDTH, grid_table, h2, image, new_page, para
from pts.results.parameters import Atw, RwswParameters
from pts.stored import fmt, rwsw, rwsw_replay
from pts.stored.model import RunView, TestResult
from pts.stored.workload_view import from_atw

US = "µs"


def workload_pages(run: RunView, test: TestResult) -> list[Flowable]:
    """The ATW's pages, in the first RWSW test of the run that applied it; later ones refer."""
    view = from_atw(_atw(test))
    if view is None:
        return []
    sha = _atw(test).sha256
    first = next(t for t in run.tests if (_atw(t) or Atw()).sha256 == sha)
    if first is not test:
        return [para(f"Workload {view.atw_name!r}: the same ATW as {first.title}, whose pages "
                     "show it.", "small")]
    return workload.pages(view, lambda sub, foot: page_info(test, sub, foot))


def _atw(test: TestResult) -> Atw | None:
    """The ATW an RWSW test applied (None: another family's test)."""
    return test.typed.atw if isinstance(test.typed, RwswParameters) else None


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


def replay(run: RunView, test: TestResult) -> list[Flowable]:
    return workload_pages(run, test) + replay_chart_pages(test) + replay_table_page(test)


def dirth(run: RunView, test: TestResult) -> list[Flowable]:
    found = list(test.records)
    choice = test.typed.histograms
    capture = (f"histograms: {HISTOGRAMS.get(choice, 'as recorded')} ([rwsw_dirth] "
               f"histograms = {fmt.text(choice)!r}, a reading).")
    return (convergence_page(test, "IOPS") + workload_pages(run, test)
            + window_pages(test, "IOPS")
            + dirth_cbw.demand_pages(test, found, capture,
                                     "longer points ([rwsw_dirth] round_seconds or "
                                     "--point-seconds)"))


# what each [rwsw_dirth] histograms choice means (the declared choice, on the page)
HISTOGRAMS = {"last-round": "each operating point's histogram is the json+ bins of its own "
                            "demand point in the last round measured; no pre-write and no "
                            "separate capture as PTS DIRTH runs"}


def replay_chart_pages(test: TestResult) -> list[Flowable]:
    rows = rwsw_replay.steps(test)
    story: list[Flowable] = []
    for name, unit, what, mine, theirs in (
            ("IOPS per Step", "IOPS", "IOPS", "iops", "insitu_iops"),
            ("Response Time per Step", f"Mean response time ({US})", "mean response time",
             "lat_mean_us", "insitu_rt_us")):
        title = f"Replay vs In-Situ: {name}"
        story += new_page(page_info(test, title, f"Plot: {test.title} {title}")) + [h2(title)]
        if not rows:
            story.append(para("No capture step was recorded: nothing to plot."))
            continue
        steps = [r.step for r in rows]
        series = {"Replay": (steps, [getattr(r, mine) for r in rows]),
                  "In-situ (capture)": (steps, [getattr(r, theirs) for r in rows])}
        story += [image(dirth_cbw_charts.xy(series, "Capture step", unit, title,
                                            x_ticks=steps, log_x=False)),
                  para(f"One point per capture step, in the capture's order: the replay's "
                       f"{what} (fio) beside the capture's in-situ figure from the ATW's "
                       f"[[step]]{_lacking(rows)}.", "small")]
    return story


def _lacking(rows) -> str:
    none = rwsw_replay.without_insitu(rows)
    return "" if not none else (
        f"; {'step' if len(none) == 1 else 'steps'} {', '.join(map(str, none))} of the ATW "
        "recorded no in-situ figures (no in-situ point)")


def replay_table_page(test: TestResult) -> list[Flowable]:
    name = "Replay Steps"
    story = new_page(page_info(test, name, f"Table: {test.title} {name}")) + [h2(name)]
    rows = rwsw_replay.steps(test)
    limit = rwsw.tolerance(test)
    table = [[str(r.step), fmt.text(r.seconds), fmt.text(r.replay_seconds),
              fmt.text(r.oio_target), fmt.num(r.oio_achieved), fmt.num(r.iops),
              fmt.num(r.insitu_iops), fmt.num(r.lat_mean_us), fmt.num(r.insitu_rt_us),
              "not run" if not r.ran else "n/a" if r.within is None
              else ("yes" if r.within else "NO") + ("*" if r.of_log else "")] for r in rows]
    replay_t, insitu_t = rwsw_replay.replay_total(rows), rwsw_replay.insitu_total(rows)
    table += [["Replay total", "", fmt.text(replay_t.seconds), "", "", fmt.num(replay_t.iops),
               "", fmt.num(replay_t.rt_us), "", ""],
              ["In-situ total", fmt.text(insitu_t.seconds), "", "", "", "",
               fmt.num(insitu_t.iops), "", fmt.num(insitu_t.rt_us), ""]]
    head = ("Step", "Capture s", "Replay s", "OIO target", "OIO achieved", "IOPS",
            "In-situ IOPS", f"ART {US}", f"In-situ RT {US}", "Shares within tol.")
    widths = [22 * mm] + [(CONTENT_WIDTH - 22 * mm) / 9] * 9
    story += [grid_table(head, table, widths, align_right_from=1), para(
        f"Per capture step: its native length (capture s) and its replay length (x time scale "
        f"{fmt.text(test.typed.time_scale)}, at least "
        f"{fmt.text(test.typed.min_step_seconds)} s); the OIO of the step and "
        f"the mean outstanding I/Os fio achieved; IOPS and mean response time (ART) of the "
        f"replay beside the capture's; shares within {fmt.text(limit)} points "
        f"(rwsw_atw.share_tolerance_pct) for every stream of the step{_of_log(rows)}. "
        f"Totals: IOPS "
        f"time-weighted, response time I/O-weighted; the replay over steps "
        f"{_steps(replay_t)}, the capture over steps {_steps(insitu_t)}"
        f"{_lacking(rows)}.", "small")]
    story += _declared_misses(
        "the replay did not reproduce its steps' shares", limit, "in step",
        [(r.step, r.miss_pts) for r in rows if r.within is False
         and r.miss_pts is not None and limit is not None and r.miss_pts > limit])
    if rwsw_replay.log_mismatches(rows):
        story.append(para(
            '<font color="#b00020"><b>DECLARED: fio\'s I/Os or bytes per direction are not '
            "those of the replayed log in step "
            + ", ".join(map(str, rwsw_replay.log_mismatches(rows)))
            + ": the shares of the log are not what the drive was given.</b></font>",
            markup=True))
    return story


def _of_log(rows) -> str:
    """What the shares of the steps replayed from their iolog are (pts.stored.rwsw_replay)."""
    steps = rwsw_replay.log_steps(rows)
    return "" if not steps else (
        f"; * {'step' if len(steps) == 1 else 'steps'} {', '.join(map(str, steps))}: the "
        "shares of the replayed log (the part of the step's iolog fio completed; one fio job "
        "cannot tell the streams apart), its I/Os and bytes per direction compared with "
        "fio's")


def _declared_misses(what: str, limit, where: str, misses: list[tuple]) -> list[Flowable]:
    """The red DECLARED line naming each (name, max miss in points) outside the share
    tolerance `limit`; none: nothing."""
    if not misses:
        return []
    return [para(
        f'<font color="#b00020"><b>DECLARED: {what} within {fmt.text(limit)} points {where} '
        + ", ".join(f"{name} (max miss {miss:.2f})" for name, miss in misses)
        + ".</b></font>", markup=True)]


def _steps(total: rwsw_replay.Total) -> str:
    return ", ".join(map(str, total.steps)) or "none"


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
    return story + _declared_misses(
        "the applied workload did not reproduce the ATW", limit, "for",
        [(r.stream, r.max_miss_pts) for r in rwsw.outside(rows)])


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
