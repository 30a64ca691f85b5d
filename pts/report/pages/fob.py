"""The informative FOB page of a test run with --fob-sweep: per cell, the IOPS of the one
round on the purged device before WIPC, the steady-state (measurement window) IOPS and
their ratio. Informative only: the sweep is not part of the PTS flow (a declared deviation).
"""

from __future__ import annotations

from reportlab.lib.units import mm
from reportlab.platypus import Flowable

from pts.report.pages.steady import page_info
from pts.report.renderers.layout import CONTENT_WIDTH, grid_table, h2, new_page, para
from pts.stored import fmt, unwritten
from pts.stored.cells import fob_vs_window
from pts.stored.model import RunView, TestResult

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
    reads = set(unwritten.fob_read_mixes(test))
    if reads:
        story.append(para(
            "* NOT A DEVICE READ: the FOB figures of R/W mixes with reads "
            f"({', '.join(unwritten.fob_read_mixes(test))}) {unwritten.fob_reason(test)}. "
            "They show the controller's map, not the flash; compare write figures only.",
            "small"))
    table = [[f"R/W {mix}", fmt.block_size(bs),
              fmt.num(first) + (" *" if mix in reads else ""), fmt.num(ss),
              "n/a" if ratio is None else f"{ratio:.2f}" + (" *" if mix in reads else ""),
              "NOT a device read *" if mix in reads else "device"]
             for mix, bs, first, ss, ratio in rows]
    widths = [22 * mm, 22 * mm] + [(CONTENT_WIDTH - 84 * mm) / 3] * 3 + [40 * mm]
    story.append(grid_table(("R/W mix", "Block size", "FOB IOPS", "Steady-state IOPS",
                             "FOB / SS", "FOB figure"), table, widths, align_right_from=2))
    return story
