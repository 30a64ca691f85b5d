"""Response-time histogram pages, one per `response_histogram` record: the DIRTH/CBW
operating points' captures (pts-digest §7.7 P9-P14) and the WSAT's whole run and final
window. Each page: the histogram (I/O count per fio latency bin, ART, the resolvable levels
and MRT marked) and a table of every level with the I/O count behind it ("n/r" when the
count cannot resolve it, pts.report.pages.qos_text).
"""

from __future__ import annotations

from reportlab.platypus import Flowable

from pts.report.pages import qos_text
from pts.report.pages.steady import page_info
from pts.report.renderers import histogram_chart
from pts.report.renderers.layout import grid_table, h2, image, new_page, para
from pts.results import records
from pts.stored import fmt
from pts.stored.model import TestResult

US = "µs"


def pages(test: TestResult, hists: list[records.ResponseHistogram], fix: str,
          xlabel: str = "Response time (µs, fio total latency)") -> list[Flowable]:
    """`fix`: what gives a histogram enough I/Os to resolve its levels (for the footnote)."""
    story: list[Flowable] = []
    for h in hists:
        title = f"Response Time Histogram: {h.name} (TC{h.thread_count}/QD{h.queue_depth})"
        story += new_page(page_info(test, title, f"Plot: {test.title} {title}"))
        story.append(h2(title))
        story.append(image(_chart(h, title, xlabel),
                           size_inches=histogram_chart.size_inches(1)))
        story.append(grid_table(["Level", f"Response time {US}", "I/Os", "I/Os needed"],
                                _rows(h), align_right_from=1))
        story.append(para(f"{h.seconds:,} s at {fmt.num(h.iops)} IOPS; ART "
                          f"{fmt.num(h.lat_mean_us)} {US}. Histogram: {h.source}.", "small"))
        if any(not row["resolvable"] for row in h.percentiles):
            story.append(para(qos_text.nr_note([row["pct"] for row in h.percentiles],
                                               "this histogram", fix), "small"))
    return story


def _chart(h: records.ResponseHistogram, title: str, xlabel: str) -> bytes:
    marks = {"ART": h.lat_mean_us}
    marks |= {f"{row['pct']:g} %": row["us"] for row in h.percentiles if row["resolvable"]}
    marks["MRT"] = h.lat_max_us
    levels = ("ART", *[f"{row['pct']:g} %" for row in h.percentiles], "MRT")
    bins = {int(k): int(v) for k, v in h.bins.items()}
    panel = f"{h.ios:,} I/Os"
    return histogram_chart.panels([(panel, bins, {k: v for k, v in marks.items()
                                                  if v is not None})],
                                  title, levels=levels, xlabel=xlabel)


def _rows(h: records.ResponseHistogram) -> list[list[str]]:
    rows = [[f"{row['pct']:g} %", qos_text.level(row["us"], row["resolvable"]),
             f"{row['ios']:,}", f"{row['ios_needed']:,}"] for row in h.percentiles]
    return rows + [["MRT", fmt.num(h.lat_max_us), f"{h.ios:,}", "1"]]
