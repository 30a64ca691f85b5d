"""Write Saturation test pages (pts-digest §7.4, §8.3): summary (FOB, steady state, ratio,
stop condition), IOPS vs time, vs TGBW and vs drive fills, response times vs drive fills,
and the steady-state evidence of the final 5-sample window; the response-time histograms with
the QoS levels and their I/O counts of the whole run and of the final window (issue 12).
"""

from __future__ import annotations

from reportlab.platypus import Flowable

from pts.procedure import steady_state
from pts.report.pages import histogram
from pts.report.pages.steady import evidence_table, page_info
from pts.report.renderers import charts
from pts.report.renderers.layout import h1, h2, image, kv_table, new_page, para
from pts.stored import fmt
from pts.stored.model import SampleView, TestResult, TrackingView
from pts.testdefs import wsat_qos
from pts.testdefs.qos_levels import needed_ios

US = "µs"


def build(run, test: TestResult) -> list[Flowable]:
    story = summary_page(test)
    if not test.samples:
        return story + [para("No sample was recorded: nothing to plot.")]
    story += iops_page(test, "end_min", "Time (minutes)", "IOPS vs Time")
    story += iops_page(test, "tgbw_gb", "Total GB written (TGBW, decimal GB)", "IOPS vs TGBW")
    story += iops_page(test, "drive_fills", "Drive fills (x user capacity)",
                       "IOPS vs Drive Fills")
    story += latency_page(test) + window_page(test)
    return story + qos_pages(test)


def qos_pages(test: TestResult) -> list[Flowable]:
    """The whole run's and the final window's response-time histograms with their QoS
    levels (pts.testdefs.wsat_qos); a run from before they were recorded has none."""
    story: list[Flowable] = []
    for h in test.histograms:
        clat = h.source == wsat_qos.WINDOW_SOURCE
        story += histogram.pages(
            test, [h], "longer samples (--point-seconds)" if clat
            else "a longer run (--wsat-fills, --wsat-hours)",
            "Response time (µs, fio completion latency)" if clat else
            "Response time (µs, fio total latency)")
    return story


def _x(s: SampleView, axis: str) -> float | None:
    if axis == "end_min":
        return None if s.end_s is None else s.end_s / 60
    return getattr(s, axis)


def summary_page(test: TestResult) -> list[Flowable]:
    story = new_page(page_info(test, "Summary", f"Table: {test.title} summary"))
    story += [h1(f"{test.title} test"), h2("Summary"), para(test.status)]
    r, p = test.result, test.typed
    if not r:
        return story + [para("No wsat_result record: the run did not finish.")]
    window = r.get("ss_window") or [None, None]
    rows = [
        ("Workload", f"RND {fmt.block_size((p.block_sizes or [None])[0])} 0/100, "
                     f"TC {p.thread_count} / QD {p.queue_depth}, from the purged "
                     "(FOB) state, no preconditioning"),
        ("Stop condition", f"{fmt.text(p.stop_drive_fills)} drive fills or "
                           f"{fmt.text(p.stop_hours)} h, whichever first: stopped by "
                           + ("drive fills" if r.get("stop") == "fills" else "the time limit")),
        ("Written (TGBW)", f"{fmt.num(r.get('tgbw_gb'))} GB = {fmt.num(r.get('drive_fills'))} "
                           f"drive fills in {fmt.num(r.get('seconds'))} s"),
        ("Samples", f"{r.get('samples')} complete samples of {p.point_seconds} s"
                    + (" + one partial last sample" if any(s.partial for s in test.samples)
                       else "")),
        ("FOB IOPS (first sample)", fmt.num(r.get("fob_iops"))),
        ("Steady-state IOPS", f"{fmt.num(r.get('ss_average'))}: average of the final "
                              f"5-sample window (samples {window[0]}..{window[1]}), which is "
                              + ("steady" if r.get("final_window_steady") else "NOT steady")
                              + " by the PTS rule"),
        ("FOB / steady-state IOPS", _ratio(r.get("fob_ss_ratio"))),
        ("Steady state first met", _sample_text(r.get("first_steady_sample"))),
        ("Steady since", _sample_text(r.get("steady_from_sample"))),
        ("Whole run: IOPS", fmt.num(r.get("iops"))),
        ("Whole run: ART / 5 9s / MRT", f"{fmt.num(r.get('lat_mean_us'))} / "
                                        f"{fmt.num(r.get('lat_percentile_us'))} / "
                                        f"{fmt.num(r.get('lat_max_us'))} {US} (total latency)"),
    ]
    story.append(kv_table(rows))
    story.append(para(
        "Steady state is not required by the WSAT; the 5-sample rule (data excursion <= 20 %, "
        "slope excursion <= 10 % of the average) is evaluated over every window of complete "
        "samples. A window on the FOB plateau can meet it before the drive falls, so both the "
        "first window that met it and the start of the final unbroken run of steady windows "
        "are given. Response times per sample: the average is total latency (fio lat log); "
        f"the maximum and the {p.percentile or 99.999:g} % are completion latency (fio "
        "logs latency histograms of clat only), to histogram resolution. The last, partial "
        "sample (fio does not log a partial window) carries what was written after the last "
        "complete sample, so TGBW ends at what fio wrote; it is drawn as a separate marker and "
        "left out of the steady-state check.", "small"))
    return story


def _ratio(value) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _sample_text(number) -> str:
    return "not met" if number is None else f"window ending at sample {number}"


def _span(test: TestResult, axis: str):
    """The final window's x range on `axis`, for shading."""
    window = test.result.get("ss_window")
    if not window:
        return None
    inside = [s for s in test.samples if window[0] <= s.number <= window[1] and not s.partial]
    xs = [_x(s, axis) for s in inside if _x(s, axis) is not None]
    return (min(xs), max(xs)) if xs else None


def iops_page(test: TestResult, axis: str, xlabel: str, name: str) -> list[Flowable]:
    title = f"{test.title}: {name}"
    story = new_page(page_info(test, name, f"Plot: {title}"))
    story.append(h2(name))
    complete = [s for s in test.samples if not s.partial]
    series = {f"RND 4KiB 0/100 IOPS per {test.typed.point_seconds} s sample":
              ([_x(s, axis) for s in complete], [s.iops for s in complete])}
    tail = [s for s in test.samples if s.partial and _x(s, axis) is not None]
    png = charts.lines(series, xlabel, "IOPS", title, log_y=False, span=_span(test, axis),
                       span_label="final 5-sample window",
                       points={"partial last sample": (_x(tail[0], axis), tail[0].iops)}
                       if tail else None)
    return story + [image(png)]


def latency_page(test: TestResult) -> list[Flowable]:
    name = "Response Times vs Drive Fills"
    title = f"{test.title}: {name}"
    story = new_page(page_info(test, name, f"Plot: {title}"))
    story.append(h2(name))
    pct = f"{test.typed.percentile or 99.999:g}"
    xs = [s.drive_fills for s in test.samples if not s.partial]
    complete = [s for s in test.samples if not s.partial]
    series = {"ART (total latency)": (xs, [s.lat_mean_us for s in complete]),
              f"{pct} % (completion latency)": (xs, [s.clat_percentile_us for s in complete]),
              "MRT (completion latency)": (xs, [s.clat_max_us for s in complete])}
    png = charts.lines(series, "Drive fills (x user capacity)", f"Response time ({US})",
                       title, log_y=True)
    need = needed_ios(float(pct))
    return story + [image(png), para(
        f"Per sample. ART from fio's total-latency log; {pct} % and MRT from its "
        f"completion-latency histogram log. A sample with fewer than {need:,} I/Os cannot "
        f"resolve the {pct} % level and has no {pct} % point (never its slowest I/O).",
        "small")]


def window_page(test: TestResult) -> list[Flowable]:
    d = test.result.get("ss_evidence")
    title = "Steady State: Final 5-Sample Window"
    story = new_page(page_info(test, title, f"Table: {test.title} {title}"))
    story.append(h2(title))
    if not d:
        return story + [para("Fewer complete samples than one window: no evidence.")]
    ev = steady_state.SteadyStateResult(**{k: tuple(v) if isinstance(v, list) else v
                                           for k, v in d.items()})
    label = test.tracking[0].label if test.tracking else "IOPS"
    block_size = (test.typed.block_sizes or [None])[0]
    story += [image(charts.measurement_window(ev, label, "IOPS")),
              evidence_table(TrackingView(label, "0/100", block_size), ev),
              para("Rounds are samples here: R = sample number.", "small")]
    return story
