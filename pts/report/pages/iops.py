"""IOPS test pages (PTS 2.0.2 §7; digest §7.1): convergence, measurement windows, the
block size x R/W mix table of window averages, the 2D plot and the 3D plot; RND 0/100 and
100/0 convergence for every block size (pts.report.pages.convergence).
"""

from __future__ import annotations

from reportlab.lib.units import mm
from reportlab.platypus import Flowable

from pts.report.pages import convergence, host_ceiling, plot3d
from pts.report.pages.steady import convergence_page, page_info, window_pages
from pts.report.renderers import charts
from pts.report.renderers.layout import CONTENT_WIDTH, grid_table, h2, image, new_page, para
from pts.stored import fmt
from pts.stored.model import Cell, RunView, TestResult

YLABEL = "IOPS"


def build(run: RunView, test: TestResult) -> list[Flowable]:
    return (convergence_page(test, YLABEL) + convergence.iops_all_sizes(test, YLABEL)
            + window_pages(test, YLABEL) + table_page(test) + plot_2d_page(test)
            + plot3d.page(test, "iops", "IOPS", YLABEL, "Average IOPS"))


def _window_text(test: TestResult) -> str:
    if test.window is None:
        return "no measurement window (no round completed)"
    first, last = test.window
    return f"mean over measurement window rounds {first}..{last} ({last - first + 1} rounds)"


def table_page(test: TestResult) -> list[Flowable]:
    title = "Measurement Window Tabular Data"
    story = new_page(page_info(test, title, f"Table: {test.title} {title}, average IOPS"))
    story += [h2(f"{title}: IOPS"), para(f"Average IOPS, {_window_text(test)}. "
                                         "Rows: block size; columns: R/W mix (read/write %).")]
    cells = {(c.rw_mix, c.block_size): c for c in test.cells}
    marks = host_ceiling.marks(test)
    rows = [[fmt.block_size(bs)] + [host_ceiling.cell_text(cell_text(cells.get((mix, bs))),
                                                           (mix, bs), marks)
                                    for mix in test.rw_mixes] for bs in test.block_sizes]
    label_w = 25 * mm
    col_w = (CONTENT_WIDTH - label_w) / max(1, len(test.rw_mixes))
    story.append(grid_table(["Block size"] + [f"R/W {m}" for m in test.rw_mixes], rows,
                            [label_w] + [col_w] * len(test.rw_mixes), align_right_from=1))
    story += host_ceiling.footnote([test])
    reasons = sorted({c.reason for c in test.cells if c.na and c.reason})
    story += [para(f"N/A: {r}", "small") for r in reasons]
    short = [c for c in test.cells if not c.na and c.mean is not None
             and test.window and c.rounds < len(test.window_rounds)]
    if short:
        story.append(para(f"{len(short)} cell(s) averaged over fewer rounds than the window "
                          "(missing points).", "small"))
    return story


def cell_text(cell: Cell | None) -> str:
    if cell is None or (cell.mean is None and not cell.na):
        return "no data"
    return "N/A" if cell.na else fmt.num(cell.mean)


def plot_2d_page(test: TestResult) -> list[Flowable]:
    title = f"{test.title} 2D Plot: IOPS vs Block Size"
    story = new_page(page_info(test, "2D Plot", f"Plot: {title}"))
    story += [h2("2D Plot: IOPS vs Block Size")]
    values = {(c.rw_mix, c.block_size): c.mean for c in test.cells}
    if all(v is None for v in values.values()):
        return story + [para("No measurement-window data to plot.")]
    png = charts.matrix_2d(test.block_sizes, test.rw_mixes, values, f"{YLABEL} (log scale)",
                           title)
    return story + [image(png), para(f"Average IOPS, {_window_text(test)}; one line per R/W "
                                     "mix, block sizes in the specification's loop order. "
                                     "N/A cells are left out.", "small")]
