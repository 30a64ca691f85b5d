"""The Qualification page: the datasheet requirements judged during the run (--datasheet;
`requirement` records of the ledger), one row each with its verdict and what was measured.
No page when the run was not given a datasheet."""

from __future__ import annotations

from reportlab.platypus import Flowable

from pts.report.renderers.layout import RED, PageInfo, grid_table, h1, mm, new_page, para
from pts.results import records
from pts.stored import fmt


def requirement_records(run) -> list[records.Requirement]:
    """The last judgement of each requirement (by its source line), in ledger order."""
    chosen: dict[tuple, records.Requirement] = {}
    for r in run.records_of(records.Requirement):
        key = (r.source, r.test, r.cell, r.metric)
        chosen.pop(key, None)
        chosen[key] = r
    return list(chosen.values())


def build(run) -> list[Flowable]:
    found = requirement_records(run)
    if not found:
        return []
    met = sum(r.verdict == "met" for r in found)
    all_met = met == len(found)
    info = PageInfo("Qualification", "Datasheet requirements",
                    "Table: datasheet requirements, measured against required",
                    f"{met} of {len(found)} requirements met", alarm=not all_met)
    rows = []
    for r in found:
        op = ">=" if r.bound == "at_least" else "<="
        colour = {"met": "1b7a34", "not checked": "666666"}.get(r.verdict, "b00020")
        rows.append([f"{r.test}", r.cell or "(whole test)", r.metric,
                     f"{op} {fmt.num(r.required)}", fmt.num(r.value),
                     para(f'<font color="#{colour}"><b>{r.verdict.upper()}</b></font>',
                          "cell", markup=True),
                     f"{r.text} [{r.source}]"])
    colour = "#1b7a34" if all_met else f"#{RED.hexval()[2:]}"
    return new_page(info) + [
        h1("Qualification"),
        para(f'<font color="{colour}"><b>{met} of {len(found)} datasheet requirements '
             "met</b></font>. Each requirement was judged right after the test it depends "
             "on, from the figures of this report (means over the measurement window). A "
             "requirement whose test did not run, whose cell is missing or N/A, or whose "
             "test did not reach steady state is not met (ERROR / NOT MET, with the reason)."
             + (" A requirement on power figures of a test recorded without a power source "
                "(--power) is NOT CHECKED." if any(r.verdict == "not checked" for r in found)
                else ""), markup=True),
        grid_table(["Test", "Cell", "Metric", "Required", "Measured", "Verdict", "Detail"],
                   rows, col_widths=[20 * mm, 26 * mm, 22 * mm, 22 * mm, 18 * mm, 17 * mm,
                                     55 * mm]),
    ]
