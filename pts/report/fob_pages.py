"""The informative FOB page of a test run with --fob-sweep: per cell, the IOPS of the one
round on the purged device before WIPC, the steady-state (measurement window) IOPS and
their ratio. Informative only: the sweep is not part of the PTS flow (a declared deviation).
"""

from __future__ import annotations

from reportlab.lib.units import mm
from reportlab.platypus import Flowable

from pts.report import fmt
from pts.report.data import fob_vs_window
from pts.report.layout import CONTENT_WIDTH, grid_table, h2, new_page, para
from pts.report.model import RunView, TestResult
from pts.report.steady_pages import page_info

TITLE = "FOB vs Steady State (informative)"


def build(run: RunView, test: TestResult) -> list[Flowable]:
    rows = fob_vs_window(test)
    if not rows:
        return []
    story = new_page(page_info(test, TITLE, f"Table: {test.title} {TITLE}"))
    story += [h2(f"{TITLE}: IOPS"), para(
        "INFORMATIVE, not a PTS result: FOB = one point per cell on the purged device, right "
        "before WIPC (--fob-sweep); steady state = the mean over the measurement window. "
        "Ratio = FOB / steady state.", "small")]
    table = [[f"R/W {mix}", fmt.block_size(bs), fmt.num(first), fmt.num(ss),
              "n/a" if ratio is None else f"{ratio:.2f}"] for mix, bs, first, ss, ratio in rows]
    widths = [25 * mm, 25 * mm] + [(CONTENT_WIDTH - 50 * mm) / 3] * 3
    story.append(grid_table(("R/W mix", "Block size", "FOB IOPS", "Steady-state IOPS",
                             "FOB / SS"), table, widths, align_right_from=2))
    return story
