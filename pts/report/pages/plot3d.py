"""3D plot pages (pts-digest §8.3): the measurement-window figure of every block size x
R/W mix cell as a 3D bar plot, beside the table and the 2D plot of the same figures
(IOPS: IOPS; Latency: average and maximum response time).
"""

from __future__ import annotations

from reportlab.platypus import Flowable

from pts.report.pages.steady import page_info
from pts.report.renderers import charts_3d
from pts.report.renderers.layout import h2, image, new_page, para
from pts.stored.cells import window_cells
from pts.stored.model import TestResult


def _window_text(test: TestResult) -> str:
    if test.window is None:
        return "no measurement window (no round completed)"
    first, last = test.window
    return f"mean over measurement window rounds {first}..{last}"


def page(test: TestResult, metric: str, short: str, zlabel: str, what: str) -> list[Flowable]:
    """One page: `metric` (a point field, e.g. "iops", "lat_max_us") of every cell as a 3D
    bar; `short` names it in titles ("IOPS", "MRT"), `zlabel` is the axis label with unit."""
    title = f"{test.title} 3D Plot: {short} vs Block Size and R/W Mix"
    story = new_page(page_info(test, f"3D Plot: {short}", f"Plot: {title}"))
    story.append(h2(f"3D Plot: {short} vs Block Size and R/W Mix"))
    values = {(c.rw_mix, c.block_size): c.mean for c in window_cells(test, metric)}
    if all(v is None for v in values.values()):
        return story + [para("No measurement-window data to plot.")]
    png = charts_3d.bars(test.block_sizes, test.rw_mixes, values, zlabel, title)
    na = sorted({c.reason for c in test.cells if c.na and c.reason})
    note = (f"{what}, {_window_text(test)}: one bar per block size (spec loop order) and "
            "R/W mix (read/write %); the first R/W mix is the back row. The same figures "
            "are in the table and the 2D plot. Cells without a figure (N/A"
            f"{': ' + '; '.join(na) if na else ''}) have no bar.")
    return story + [image(png, size_inches=charts_3d.SIZE_INCHES), para(note, "small")]
