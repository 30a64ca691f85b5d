"""Latency QoS pages (pts-digest §7.3, §8.3): per cell the average (ART) and maximum (MRT)
response time with the 99.99 %, 99.999 % and 99.9999 % levels beside them, and each cell's
response-time histogram over its measurement window (a page per R/W mix, a panel per block
size). Levels come from the json+ bins of the points' fio JSON (pts.stored.latency_qos); one
a point's I/O count cannot resolve is "n/r", with a footnote saying why.
"""

from __future__ import annotations

from reportlab.lib.units import mm
from reportlab.platypus import Flowable

from pts.report.pages import qos_text
from pts.report.pages.steady import page_info
from pts.report.renderers import histogram_chart
from pts.report.renderers.layout import CONTENT_WIDTH, grid_table, h2, image, new_page, para
from pts.stored import fmt, latency_qos
from pts.stored.cells import window_cells
from pts.stored.latency_qos import NO_BINS, NOT_RESOLVABLE, OK, QosCell
from pts.stored.model import RunView, TestResult

US = "µs"


def _window_text(test: TestResult) -> str:
    if test.window is None:
        return "no measurement window (no round completed)"
    return f"means over measurement window rounds {test.window[0]}..{test.window[1]}"


def qos_cells(run: RunView, test: TestResult) -> list[QosCell]:
    return latency_qos.cells(test, latency_qos.load_bins(run, test))


def _means(test: TestResult, metric: str) -> dict[tuple[str, int], float | None]:
    return {(c.rw_mix, c.block_size): c.mean for c in window_cells(test, metric)}


def table_page(test: TestResult, found: list[QosCell]) -> list[Flowable]:
    title = "Response Time QoS"
    story = new_page(page_info(test, title, f"Table: {test.title} {title}"))
    story.append(h2(f"{title}: ART, 99.99 %, 99.999 %, 99.9999 %, MRT ({US})"))
    if test.window is None:
        return story + [para("No measurement window: no round was completed.")]
    art, mrt = _means(test, "lat_mean_us"), _means(test, "lat_max_us")
    header = ["R/W, block size", "ART", *[f"{p:g} %" for p in latency_qos.LEVELS], "MRT",
              "I/Os per point (fewest)"]
    rows = [[f"{c.rw_mix}, {fmt.block_size(c.block_size)}", fmt.num(art.get(c.key)),
             *[_level_text(lv) for lv in c.levels], fmt.num(mrt.get(c.key)),
             "n/a" if c.fewest_ios is None else f"{c.fewest_ios:,}"] for c in found]
    label_w = 30 * mm
    col_w = (CONTENT_WIDTH - label_w) / (len(header) - 1)
    story.append(grid_table(header, rows, [label_w] + [col_w] * (len(header) - 1),
                            align_right_from=1))
    return story + [para(n, "small") for n in footnotes(test, found)]


def _level_text(level: latency_qos.Level) -> str:
    return {OK: fmt.num(level.us), NOT_RESOLVABLE: qos_text.NR}.get(level.state, "n/a")


def footnotes(test: TestResult, found: list[QosCell]) -> list[str]:
    notes = [f"All response times are fio's total latency (submission + completion) in {US}, "
             f"{_window_text(test)}; reads and writes of a mixed point together. The levels "
             "are computed from fio's json+ latency bins of each point (bin midpoints, within "
             "1/128 of the true value, capped at the measured maximum) by fio's percentile "
             "rule."]
    if any(lv.state == NOT_RESOLVABLE for c in found for lv in c.levels):
        notes.append(qos_text.nr_note(latency_qos.LEVELS, "a window point of each such cell "
                                      "(see the last column)", "longer points (--point-seconds)"))
    if any(lv.state == NO_BINS for c in found for lv in c.levels):
        notes.append("n/a = no latency bins: the fio JSON of the cell's window points is "
                     "not in the run folder (raw/) or has no json+ latency histogram.")
    return notes


def histogram_pages(test: TestResult, found: list[QosCell]) -> list[Flowable]:
    """One page per R/W mix: a panel per block size with bins, the I/O count per latency
    bin of all its measurement-window points."""
    story: list[Flowable] = []
    art, mrt = _means(test, "lat_mean_us"), _means(test, "lat_max_us")
    for mix in test.rw_mixes:
        mine = [c for c in found if c.rw_mix == mix and c.bins]
        if not mine:
            continue
        title = f"Response Time Histograms: RND {mix}"
        story += new_page(page_info(test, title, f"Plot: {test.title} {title}"))
        story.append(h2(title))
        panels = []
        for c in mine:
            marks = {"ART": art.get(c.key)}
            marks |= {f"{lv.pct:g} %": lv.us for lv in c.levels if lv.state == OK}
            marks["MRT"] = mrt.get(c.key)
            name = (f"RND {fmt.block_size(c.block_size).replace(' ', '')} {mix}: "
                    f"{sum(c.bins.values()):,} I/Os of {c.points} window points")
            panels.append((name, c.bins, {k: v for k, v in marks.items() if v is not None}))
        png = histogram_chart.panels(panels, f"{test.title} {title}")
        story.append(image(png, width=CONTENT_WIDTH * _scale(len(panels)),
                           size_inches=histogram_chart.size_inches(len(panels))))
        story.append(para(f"All I/Os of each cell's measurement-window points (rounds "
                          f"{test.window[0]}..{test.window[1]}), fio's json+ total-latency "
                          "bins, reads and writes merged; one response-time axis for all "
                          "panels. Lines: the QoS table's ART, resolvable levels and MRT "
                          "(means over the window points); a level that is not resolvable "
                          "has no line.", "small"))
    return story


def _scale(panels: int) -> float:
    """Width fraction that keeps a tall figure (many panels) on the page under the header."""
    return min(1.0, 3 / max(1, panels))
