"""DIRTH / CBW pages (pts-digest §7.7 P1-P14, §7.8):

  "<kind>-precondition": preconditioning convergence and its steady-state check (P1, P2);
  "<kind>": demand-variation convergence (the tracking point, and TC32 at every QD) and
  steady-state check (P4, P5); Demand Variation: IOPS vs QD, one series per TC (P6);
  Demand Intensity: ART vs IOPS, one series per TC (P7; log axes where they span decades);
  system CPU % over TC x QD (P8, as a table); the pre-writes (P3); a table of every point
  and of the operating points; the response-time histogram of each operating point (P9-P14).

Values per point are means over the measurement window rounds. The operating points,
pre-writes and histograms are read from their own ledger records.
"""

from __future__ import annotations

from reportlab.platypus import Flowable

from pts.report.pages import histogram, qos_text
from pts.report.pages.steady import convergence_page, page_info, window_pages
from pts.report.renderers import dirth_cbw_charts
from pts.report.renderers.layout import grid_table, h2, image, new_page, para
from pts.results import records
from pts.stored import demand, fmt
from pts.stored.model import RunView, TestResult

US = "µs"


def precondition(run: RunView, test: TestResult) -> list[Flowable]:
    return convergence_page(test, "IOPS") + window_pages(test, "IOPS") + _prewrites(run, test)


def build(run: RunView, test: TestResult) -> list[Flowable]:
    found = list(test.records)
    story = convergence_page(test, "IOPS") + _tc32_page(run, test) + window_pages(test, "IOPS")
    story += demand_pages(test, found, "capture: the histogram capture after the point's "
                          "pre-write.", "longer captures (a larger --time-scale)")
    return story + _prewrites(run, test, found)


def demand_pages(test: TestResult, found: list, capture: str, fix: str) -> list[Flowable]:
    """Demand Variation (IOPS vs QD per TC), Demand Intensity (ART vs IOPS per TC), every
    point, system CPU, the operating points and their histograms; `found`: the test's
    ledger records; `capture`: what the operating points' histograms are (the table's
    footnote); `fix`: what resolves more QoS levels (the histogram pages' footnote)."""
    grid = _grid(test)
    return (_variation_page(test, grid) + _intensity_page(test, grid)
            + _table_page(test, grid) + _cpu_page(test, grid)
            + _operating_page(test, found, capture)
            + histogram.pages(test, list(test.histograms), fix))


FEWEST, _grid = demand.FEWEST, demand.grid


def _order(values: list | None) -> list[int]:
    return [int(v) for v in values or []]


def _window_text(test: TestResult) -> str:
    w = test.window
    return "no completed round" if w is None else f"means over rounds {w[0]}..{w[1]}"


def _page(test: TestResult, subtitle: str) -> list[Flowable]:
    return new_page(page_info(test, subtitle, f"{test.title} {subtitle}")) + [h2(subtitle)]


def _tc32_page(run: RunView, test: TestResult) -> list[Flowable]:
    """The tracking TC (test_start thread_count) at every QD; without it, no page but a
    note (never a guessed TC)."""
    tc, qd_track = test.typed.thread_count, test.typed.queue_depth
    if tc is None:
        story = _page(test, "Demand Variation Convergence: tracking TC, every QD")
        return story + [para("The tracking thread count was not recorded (test_start "
                             "parameters lack thread_count): no per-QD convergence plot.")]
    story = _page(test, f"Demand Variation Convergence: TC{tc}, every QD")
    rounds = sorted({p.round for p in test.points})
    series = {}
    for qd in _order(test.typed.queue_depths):
        by_round = {p.round: p.iops for p in test.points
                    if p.get("thread_count") == tc and p.get("queue_depth") == qd}
        series[f"QD{qd}"] = (rounds, [by_round.get(r) for r in rounds])
    if not rounds:
        return story + [para("No round was completed.")]
    return story + [image(dirth_cbw_charts.xy(series, "Round", "IOPS",
                                        f"TC{tc}: IOPS per round for each QD",
                                        x_ticks=rounds, log_x=False)),
                    para(f"Each demand-variation round starts with the inter-round pre-write "
                         f"({_prewrite_text(run, test)}); the tracking variable is the "
                         f"TC{tc}/QD{fmt.text(qd_track)} IOPS.", "small")]


def _prewrite_text(run: RunView, test: TestResult) -> str:
    """The inter-round pre-writes as recorded (prewrite records "before round N")."""
    found = [r for r in test.records_of(records.Prewrite)
             if str(r.when).startswith("before round")]
    if not found:
        return "none recorded"
    kinds = sorted({(r.thread_count, r.queue_depth, r.seconds) for r in found})
    return "; ".join(f"RND 0/100 at TC{tc}/QD{qd} for {s} s" for tc, qd, s in kinds)


def _variation_page(test: TestResult, grid) -> list[Flowable]:
    story = _page(test, "Demand Variation: IOPS vs QD per TC")
    qds = sorted(_order(test.typed.queue_depths))
    series = {f"TC{tc}": (qds, [grid.get((tc, qd), {}).get("iops") for qd in qds])
              for tc in _order(test.typed.thread_counts)}
    return story + [image(dirth_cbw_charts.xy(series, "Queue depth (outstanding I/Os per thread)",
                                        "IOPS", "Demand Variation", x_ticks=qds,
                                        log_x=len(qds) > 1 and max(qds) / min(qds) > 10)),
                    para(f"IOPS at each TC and QD ({_window_text(test)}).", "small")]


def _intensity_page(test: TestResult, grid) -> list[Flowable]:
    story = _page(test, "Demand Intensity: ART vs IOPS")
    series = {}
    for tc in _order(test.typed.thread_counts):
        pts = [(grid[(tc, qd)].get("iops"), grid[(tc, qd)].get("lat_mean_us"))
               for qd in sorted(_order(test.typed.queue_depths)) if (tc, qd) in grid]
        series[f"TC{tc}"] = ([p[0] for p in pts], [p[1] for p in pts])
    ceiling = test.typed.art_ceiling_us
    return story + [image(dirth_cbw_charts.xy(series, "IOPS", f"ART ({US})", "Demand Intensity")),
                    para(f"Average response time (fio total latency) against IOPS, one series "
                         f"per TC, joined in order of rising QD ({_window_text(test)}); the "
                         f"knee is where ART rises without IOPS following. MaxIOPS ceiling: "
                         f"ART below {fmt.num(ceiling)} {US}.", "small")]


def _pct_fields(test: TestResult) -> list[tuple[float, str]]:
    return [(float(p), "lat_" + f"{float(p):g}".replace(".", "_") + "_us")
            for p in test.typed.percentiles or []]


def _table_page(test: TestResult, grid) -> list[Flowable]:
    story = _page(test, "All Points")
    pcts = _pct_fields(test)
    header = ["TC", "QD", "IOPS (mean)", f"ART {US} (mean)", f"MRT {US} (mean of maxima)",
              *[f"{p:g} % {US} (mean)" for p, _ in pcts], "I/Os (fewest)"]
    rows = []
    for tc in _order(test.typed.thread_counts):
        for qd in _order(test.typed.queue_depths):
            v = grid.get((tc, qd), {})
            fewest = v.get(FEWEST)
            rows.append([str(tc), str(qd), fmt.num(v.get("iops")), fmt.num(v.get("lat_mean_us")),
                         fmt.num(v.get("lat_max_us")),
                         *[qos_text.level(v.get(key), not qos_text.short(fewest, p))
                           for p, key in pcts],
                         fmt.num(fewest)])
    notes = [f"Each value is over the window rounds ({_window_text(test)}): IOPS and ART "
             "are the means of the rounds' points; MRT is the mean of the rounds' maxima "
             "(not the largest response time seen); each percentile is the mean of the "
             "rounds' own percentiles (not a percentile of all their I/Os together). I/Os: "
             "the fewest of a window point."]
    if any(qos_text.short(v.get(FEWEST), p) for v in grid.values() for p, _ in pcts):
        notes.append(qos_text.nr_note([p for p, _ in pcts], "a window point of each such row",
                                      "longer points (--point-seconds)"))
    return story + [grid_table(header, rows, align_right_from=2),
                    *[para(n, "small") for n in notes]]


def _cpu_page(test: TestResult, grid) -> list[Flowable]:
    story = _page(test, "System CPU Utilisation (%)")
    qds = _order(test.typed.queue_depths)
    rows = [[f"TC{tc}", *[fmt.num(grid.get((tc, qd), {}).get("sys_cpu_pct")) for qd in qds]]
            for tc in _order(test.typed.thread_counts)]
    return story + [grid_table(["", *[f"QD{q}" for q in qds]], rows, align_right_from=1),
                    para(f"fio's system CPU % of each point ({_window_text(test)}).", "small")]


def _operating_page(test: TestResult, found, capture: str) -> list[Flowable]:
    story = _page(test, "Operating Points")
    ops = [r for r in found if isinstance(r, records.OperatingPoint)]
    hists = {r.name: r for r in found if isinstance(r, records.ResponseHistogram)}
    if not ops:
        return story + [para("No operating points were selected (the demand-variation "
                             "rounds did not complete).")]
    rows = []
    for o in ops:
        h = hists.get(o.name)
        rows.append([o.name, f"TC{o.thread_count}/QD{o.queue_depth}" if o.selected else
                     "not selected", fmt.num(o.iops), fmt.num(o.lat_mean_us),
                     fmt.num(h.iops) if h else "n/a", fmt.num(h.lat_mean_us) if h else "n/a",
                     fmt.num(h.lat_max_us) if h else "n/a"])
    rounds = ops[0].rounds or []
    return story + [grid_table(["Point", "TC/QD", "IOPS (rounds)", f"ART {US} (rounds)",
                                "IOPS (capture)", f"ART {US} (capture)", f"MRT {US}"],
                               rows, align_right_from=2),
                    para("Rounds: means over the measurement window rounds "
                         f"{', '.join(map(str, rounds))}; {capture}", "small"),
                    *[para(f"{o.name}: {o.rule}.") for o in ops]]


def _prewrites(run: RunView, test: TestResult, found=None) -> list[Flowable]:
    pre = [r for r in (test.records if found is None else found) if isinstance(r, records.Prewrite)]
    if not pre:
        return []
    story = _page(test, "Pre-writes")
    rows = [[r.when, f"TC{r.thread_count}/QD{r.queue_depth}", str(r.seconds),
             fmt.num(r.iops), fmt.num(r.bytes_written / 1e9)] for r in pre]
    return story + [grid_table(["When", "TC/QD", "Seconds", "IOPS", "GB written"], rows,
                               align_right_from=2),
                    para("RND 0/100 writes with the test's workload.", "small")]
