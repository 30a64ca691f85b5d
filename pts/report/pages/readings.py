"""The report section "Readings of the specification" (issue 21 §2): every value the run
used that is a reading of the spec (read from public implementations, fio's JESD219 example
or JESD219, not from spec text: pts-digest §13) or a choice of this suite's own, with its
value, key, source and the other readings. Built from the run's stored data only
(pts.stored.readings: the test_start records), never from the spec file as it is now."""

from __future__ import annotations

from reportlab.lib.units import mm
from reportlab.platypus import Flowable

from pts.report.renderers.layout import CONTENT_WIDTH, PageInfo, grid_table, h1, h2, new_page, para
from pts.stored.model import RunView
from pts.stored.readings import CHOICE, READING, TITLE, ReadingView, count

# Key and Used by fit the longest key of the spec files (dirth.precondition_round_seconds,
# 42.5 mm in 8 pt Helvetica, plus 2 x 6 pt padding) and test name (dirth-precondition,) on
# one line: a word reportlab cannot fit is broken mid-word.
WIDTHS = [48 * mm, 24 * mm, CONTENT_WIDTH - 48 * mm - 24 * mm - 36 * mm - 26 * mm,
          36 * mm, 26 * mm]
HEADER = ("Key (spec file)", "Value used", "Where it comes from", "Alternative(s)", "Used by")


def page(run: RunView) -> list[Flowable]:
    info = PageInfo("Readings", TITLE, "Table: readings of the specification used by this run",
                    run.verdict.status, alarm=not run.verdict.compliant)
    used = [r for r in run.readings if r.status == READING]
    own = [r for r in run.readings if r.status == CHOICE]
    story = new_page(info) + [h1(TITLE), para(
        "No text of PTS-E 1.1 or PTS 2.0.x was available to this suite; the values below are "
        "read from public implementations (S4 CloudHarmony block-storage, S5 its fork, S7 an "
        "independent HIR script), fio's examples/jesd219.fio or JESD219 (sources as in the "
        "spec digest's Readings table). Each is set in the spec file with its provenance; the "
        "values are those this run recorded when each test started, as the spec file gave "
        "them (an option that changed one, e.g. --hir-repetitions, is a deviation listed on "
        "page 1).")]
    story.append(para(f"{count(used)} values of this run are readings of the specification."))
    if used:
        story.append(_table(used))
    if own:
        story += [h2("Values of this suite's own (not values of the specification)"),
                  para("Additions to the PTS flow whose values the PTS does not set; not "
                       "counted as readings."), _table(own)]
    return story


def _table(items: list[ReadingView]):
    rows = [(r.key, value_text(r.value), r.source, "; ".join(r.alternatives) or "none recorded",
             ", ".join(r.tests)) for r in items]
    return grid_table(HEADER, rows, col_widths=WIDTHS)


def value_text(value) -> str:
    """A spec-file value as the file writes it, compactly: lists joined, tables as k=v."""
    if isinstance(value, list):
        return ", ".join(value_text(v) for v in value) or "(empty)"
    if isinstance(value, dict):
        return " ".join(f"{k}={value_text(v)}" for k, v in value.items())
    return str(value)
