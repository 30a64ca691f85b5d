"""The Power page of a test run with --power (issue 51 §3): each source named with what it
measures and its interval; per cell the measurement window's mean W and IOPS/W (MB/s/W for
Throughput), FOB's beside them where the test has a --fob-sweep; per round the tracking
variables beside their point's W; per phase the windows of WSAT's run and samples, HIR's wait
states and XSR's groups; the gaps of each source, shown, never filled. The model is
pts.stored.power.page (renderer-free)."""

from __future__ import annotations

from reportlab.lib.units import mm
from reportlab.platypus import Flowable

from pts.report.pages.steady import page_info
from pts.report.renderers.layout import CONTENT_WIDTH, grid_table, h2, new_page, para
from pts.stored import fmt
from pts.stored import power as stored_power
from pts.stored.model import RunView, TestResult

TITLE = "Power"
MAX_GAP_ROWS = 20     # the gaps listed one by one; more are counted (the sources table)


def _w(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def build(run: RunView, test: TestResult) -> list[Flowable]:
    page = stored_power.page(run, test)
    if page is None:
        return []
    unit = "MB/s/W" if page.per_watt == "mbps" else "IOPS/W"
    story = new_page(page_info(test, TITLE, f"Table: {test.title} {TITLE}"))
    story += [h2(f"{TITLE}: sources"), para(
        "Read during the run (--power): each point's window is its fio I/O's start and end, "
        "aligned by timestamps; a gap (a failed read, or readings further apart than 2.5 "
        "intervals) is never filled: a window's mean W is its energy over its covered "
        f"seconds. The per-cell figures are the first source's: W, and {unit} = the point's "
        f"{'MB/s' if page.per_watt == 'mbps' else 'IOPS'} / its mean W, each the mean over "
        "the measurement window's points.", "small")]
    story.append(grid_table(
        ("Source", "Measures", "Interval", "Kind", "Window W", "Windows with gaps",
         "Uncovered"),
        [[s.name, s.measures, f"{s.interval_s:g} s", s.kind, _w(s.mean_w),
          f"{s.with_gaps} of {s.windows}", f"{s.uncovered_s:.2f} s"] for s in page.sources],
        [42 * mm, 24 * mm, 16 * mm, 14 * mm, 18 * mm, 22 * mm, CONTENT_WIDTH - 136 * mm],
        align_right_from=4))
    story += [para(f"{s.name}: {s.detail}" + (f" NOT STARTED: {s.error}" if s.error else ""),
                   "small") for s in page.sources]
    if page.cells:
        story += _cells(page, unit)
    if page.phases:
        story += _phases(page, unit)
    if page.round_energy:
        story += [h2(f"{TITLE}: energy per round ({page.sources[0].name})"), para(
            "Each round's whole fio run, from the reads just before it to those just after "
            "it: its points and the time between them.", "small")]
        story.append(grid_table(
            ("Round", "Window", "Energy", "Mean W", "Covered"),
            [[str(n), "yes" if inside else "", f"{j:.3f} J", _w(w), f"{cover:.1%}"]
             for n, inside, j, w, cover in page.round_energy],
            [16 * mm, 16 * mm] + [(CONTENT_WIDTH - 32 * mm) / 3] * 3, align_right_from=2))
    if page.rounds:
        story += [h2(f"{TITLE}: the tracking variables per round")]
        story.append(grid_table(
            ("Round", "Window", "Tracking variable", "Value", "W", unit),
            [[str(n), "yes" if inside else "", label, fmt.num(value), _w(w), fmt.num(per)]
             for n, inside, label, value, w, per in page.rounds],
            [16 * mm, 16 * mm, 60 * mm] + [(CONTENT_WIDTH - 92 * mm) / 3] * 3,
            align_right_from=3))
    if page.gaps:
        story += [h2(f"{TITLE}: gaps"), para(
            f"{len(page.gaps)} point window(s) with a gap (seconds after the point's start)"
            + (f"; the first {MAX_GAP_ROWS} listed" if len(page.gaps) > MAX_GAP_ROWS else ""),
            "small")]
        story.append(grid_table(
            ("Source", "Round", "Point", "Uncovered"),
            [[name, str(rnd), str(index), ", ".join(f"{a:.2f}-{b:.2f} s" for a, b in gaps)]
             for name, rnd, index, gaps in page.gaps[:MAX_GAP_ROWS]],
            [50 * mm, 16 * mm, 16 * mm, CONTENT_WIDTH - 82 * mm], align_right_from=1))
    elif page.cells:
        story.append(para("No gaps: every point's window was covered by every source.",
                          "small"))
    return story


def _cells(page: stored_power.Page, unit: str) -> list[Flowable]:
    fob = any(c[4] is not None for c in page.cells)
    head = ["R/W mix", "Block size", "SS W", f"SS {unit}"] + (["FOB W", f"FOB {unit}"]
                                                              if fob else [])
    return [h2(f"{TITLE}: per cell, measurement window"
               + (" (FOB: the --fob-sweep round, informative)" if fob else "")),
            grid_table(head, [
                [f"R/W {mix}", fmt.block_size(bs), _w(w), fmt.num(per)]
                + ([_w(fw), fmt.num(fper)] if fob else [])
                for mix, bs, w, per, fw, fper in page.cells],
                [22 * mm, 22 * mm] + [(CONTENT_WIDTH - 44 * mm) / (len(head) - 2)]
                * (len(head) - 2), align_right_from=2)]


def _phases(page: stored_power.Page, unit: str) -> list[Flowable]:
    """WSAT's run and samples, HIR's wait states, XSR's groups (pts.stored.power_phases)."""
    return [h2(f"{TITLE}: per phase ({page.sources[0].name})"), para(
        "The parts of the test without rounds of points: a whole fio run (WSAT's run, "
        "HIR's wait and return-to-baseline runs, XSR's groups) read at its edges, a HIR wait "
        "state from its wait run to its return to baseline, a WSAT sample over its interval "
        f"of fio's logs (aligned by timestamps). {unit}: the part's own figure (IOPS, XSR's "
        "mean MB/s) over its mean W; the Covered column is the share of its seconds the "
        "source covered (a gap is never filled).", "small"),
        grid_table(("Phase", "Number", "Energy", "Mean W", "Covered", unit),
                   [[name, str(n), f"{j:.3f} J", _w(w), f"{cover:.1%}", fmt.num(per)]
                    for name, n, j, w, cover, per in page.phases],
                   [30 * mm, 18 * mm] + [(CONTENT_WIDTH - 48 * mm) / 4] * 4,
                   align_right_from=1)]
