"""The workload pages (RWSW, issue 32 §4), the same for a capture (`python -m pts workload
CAPTURE --pdf`) and for a run's report (the ATW its RWSW test applied): the capture
descriptor (lost events loudly when > 0), the cumulative workload with its coverage, the IO
stream map, the OIO histogram and the ATW. They draw a pts.stored.workload_view.WorkloadView;
what it lacks is said on the page ("not in the workload file"), never made up.
"""

from __future__ import annotations

from collections.abc import Callable

from reportlab.lib.units import mm
from reportlab.platypus import Flowable

from pts.report.renderers import workload_charts
from pts.report.renderers.layout import (
    CONTENT_WIDTH,
    PageInfo,
    grid_table,
    h1,
    h2,
    image,
    kv_table,
    new_page,
    para,
)
from pts.stored import fmt
from pts.stored.workload_view import NOT_IN_FILE, WorkloadView

Info = Callable[[str, str], PageInfo]      # (subtitle, footer) -> the page's band and footer
TITLE = "Workload"


def pages(view: WorkloadView, info: Info, first: bool = False) -> list[Flowable]:
    return (descriptor_page(view, info, first) + cumulative_page(view, info)
            + map_page(view, info) + oio_page(view, info) + atw_page(view, info))


def lost_warning(view: WorkloadView) -> str | None:
    if not view.lost_events:
        return None
    return (f"WARNING: {view.lost_events} EVENTS WERE LOST (tracing buffer overruns) in the "
            "capture: every figure of it undercounts")


def descriptor_page(view: WorkloadView, info: Info, first: bool = False) -> list[Flowable]:
    name = "Capture Descriptor"
    story = new_page(info(name, f"Table: {TITLE} {name}"), first)
    story += [h1(f"{TITLE}: {view.atw_name}"), h2(name),
              para(f"From {view.source}.", "small")]
    warn = lost_warning(view)
    if warn:
        story.append(para(f'<font color="#b00020"><b>{warn}</b></font>', markup=True))
    return story + [kv_table(list(view.descriptor))]


def cumulative_page(view: WorkloadView, info: Info) -> list[Flowable]:
    name = "Cumulative Workload"
    story = new_page(info(name, f"Table: {TITLE} {name}"))
    story.append(h2(name))
    if view.cumulative is None:
        return story + [para(f"The cumulative workload (every stream of the capture): "
                             f"{NOT_IN_FILE}.")]
    atw = {s for s, _ in view.atw_streams}
    rows = [[str(n), r.stream + (" (ATW)" if r.stream in atw else ""), fmt.text(r.ios),
             f"{r.share_ios_pct:.2f}",
             "n/a" if r.share_bytes_pct is None else f"{r.share_bytes_pct:.2f}"]
            for n, r in enumerate(view.cumulative, 1)]
    cover = ("not recorded" if view.coverage_pct is None
             else f"{view.coverage_pct:.2f} % of all I/Os")
    story += [para(f"{len(view.cumulative)} IO streams, ranked by I/Os. The ATW's "
                   f"{len(view.atw_streams)} streams (top N = {fmt.text(view.top_n)}) cover "
                   f"{cover}.")]
    widths = [12 * mm, 50 * mm] + [(CONTENT_WIDTH - 62 * mm) / 3] * 3
    return story + seq_rules(view) + [
        grid_table(("#", "IO stream", "I/Os", "% of I/Os", "% of bytes"), rows, widths,
                   align_right_from=2)]


def seq_rules(view: WorkloadView) -> list[Flowable]:
    """What each sequential rule makes of the capture (issue 40 §1): the SEQ share of its
    I/Os under the rule used (first) and the others (docs/workload.md, "Sequential streams
    among concurrent ones")."""
    if not view.seq_by_rule:
        return []
    text = "; ".join(f"{label} {pct:.2f} %" + (" (used here)" if n == 0 else "")
                     for n, (label, pct) in enumerate(view.seq_by_rule))
    return [para(f"SEQ share of the I/Os by sequential rule: {text}.", "small")]


def map_page(view: WorkloadView, info: Info) -> list[Flowable]:
    name = "IO Stream Map"
    story = new_page(info(name, f"Plot: {TITLE} {name}"))
    story.append(h2(name))
    if not view.map_start_s:
        return story + [para(f"The per-step stream map: {NOT_IN_FILE}.")]
    png = workload_charts.stream_map(view.map_start_s, view.map_streams, view.map_shares,
                                     f"{view.atw_name}: IO streams per step")
    return story + [image(png), para(
        f"{len(view.map_start_s)} steps; per step each top stream's share of the step's "
        "I/Os; the rest to 100 % is the I/O of the other streams.", "small")]


def oio_page(view: WorkloadView, info: Info) -> list[Flowable]:
    name = "Outstanding I/O Histogram"
    story = new_page(info(name, f"Plot: {TITLE} {name}"))
    story += [h2(name), para(f"Outstanding I/Os of the capture: {view.oio_summary}.")]
    if not view.oio_seconds:
        return story + [para(f"The OIO histogram: {NOT_IN_FILE}.")]
    png = workload_charts.oio_histogram(view.oio_seconds, f"{view.atw_name}: outstanding "
                                                          "I/Os, time-weighted")
    idle = view.oio_seconds[0]
    return story + [image(png), para(
        f"Share of the busy time (>= 1 outstanding I/O, {sum(view.oio_seconds[1:]):.3f} s) "
        f"at each count; idle {idle:.3f} s not drawn.", "small")]


def atw_page(view: WorkloadView, info: Info) -> list[Flowable]:
    name = "Applied Test Workload"
    story = new_page(info(name, f"Table: {TITLE} {name}"))
    oio = ("not recorded" if view.atw_oio is None else
           f"{view.atw_oio[0] * view.atw_oio[1]} (TC {view.atw_oio[0]} x QD {view.atw_oio[1]})")
    story += [h2(name), para(f"ATW {view.atw_name!r}: {len(view.atw_streams)} streams, "
                             f"OIO {oio}. Shares normalised to 100 %.")]
    rows = [[s, f"{pct:.2f}"] for s, pct in view.atw_streams]
    return story + [grid_table(("IO stream", "Target share of I/Os (%)"), rows,
                               [80 * mm, 50 * mm], align_right_from=1)]
