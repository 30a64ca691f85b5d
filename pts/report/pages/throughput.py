"""Throughput test pages (pts-digest §7.2, §8.3), per block size (each its own test,
"throughput-1024k"): convergence of SEQ read and of SEQ write MB/s (separate plots), the
measurement window of the write MB/s; after the run's last block size, the table of window
averages (block size x {100/0, 0/100}) and the 2D plot over all block sizes.
"""

from __future__ import annotations

from reportlab.lib.units import mm
from reportlab.platypus import Flowable

from pts.report.pages import convergence, host_ceiling
from pts.report.pages.steady import page_info, window_pages
from pts.report.renderers import charts
from pts.report.renderers.layout import CONTENT_WIDTH, grid_table, h2, image, new_page, para
from pts.stored import fmt
from pts.stored.cells import window_cells
from pts.stored.model import RunView, TestResult

PREFIX = "throughput-"
YLABEL = "MB/s (decimal)"
UNITS = ("MB/s are decimal (10^6 bytes per second, from fio's bytes/s); block sizes binary "
         "(KiB).")


def build(run: RunView, test: TestResult) -> list[Flowable]:
    story = convergence.throughput_split(test, YLABEL)   # read and write apart
    story += window_pages(test, YLABEL)
    family = [t for t in run.tests if t.name.startswith(PREFIX)]
    if family and family[-1] is test:
        story += table_page(test, family) + plot_2d_page(test, family)
    return story


def _values(family: list[TestResult]) -> dict[tuple[str, int], float | None]:
    return {(c.rw_mix, c.block_size): c.mean for t in family for c in window_cells(t, "mbps")}


def _mixes(family: list[TestResult]) -> list[str]:
    return list(dict.fromkeys(m for t in family for m in t.rw_mixes))


def table_page(test: TestResult, family: list[TestResult]) -> list[Flowable]:
    title = "Measurement Window Tabular Data"
    story = new_page(page_info(test, title, f"Table: Throughput {title}, average MB/s"))
    story.append(h2(f"Throughput {title}: MB/s, all block sizes"))
    values, mixes = _values(family), _mixes(family)
    rows = []
    for t in family:
        marks = host_ceiling.marks(t)
        for bs in t.block_sizes:
            window = "none" if t.window is None else f"rounds {t.window[0]}..{t.window[1]}"
            rows.append([fmt.block_size(bs)]
                        + [host_ceiling.cell_text(fmt.num(values.get((m, bs))), (m, bs), marks)
                           for m in mixes] + [window, t.status])
    label_w, num_w, win_w = 25 * mm, 30 * mm, 28 * mm
    widths = [label_w] + [num_w] * len(mixes) + [win_w]
    widths.append(CONTENT_WIDTH - sum(widths))
    story.append(grid_table(["Block size"] + [f"SEQ {m} MB/s" for m in mixes]
                            + ["Window", "Steady state"], rows, widths, align_right_from=1))
    story += host_ceiling.footnote(family)
    story.append(para("Each block size is its own purge + WIPC + rounds cycle; its values are "
                      "the mean over its own measurement window. " + UNITS, "small"))
    return story


def plot_2d_page(test: TestResult, family: list[TestResult]) -> list[Flowable]:
    title = "Throughput 2D Plot: MB/s vs Block Size"
    story = new_page(page_info(test, "2D Plot", f"Plot: {title}"))
    story.append(h2("2D Plot: MB/s vs Block Size"))
    values = _values(family)
    if all(v is None for v in values.values()):
        return story + [para("No measurement-window data to plot.")]
    sizes = [bs for t in family for bs in t.block_sizes]
    png = charts.matrix_2d(sizes, _mixes(family), values, f"{YLABEL} (log scale)", title)
    return story + [image(png), para("Average MB/s over each block size's measurement "
                                     "window; one line per R/W mix (100/0 = SEQ read, "
                                     "0/100 = SEQ write). " + UNITS, "small")]
