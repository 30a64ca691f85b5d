"""Latency test pages (pts-digest §7.3, §8.3): convergence of the average and of the maximum
response time, the measurement window of the tracking variable (RND 4 KiB 0/100 ART), the
tables of window averages (ART, 5 9s, MRT, IOPS; mixed points per direction), the QoS table
(99.99 / 99.999 / 99.9999 %, pts.report.pages.latency_qos), 2D and 3D plots of ART and MRT
over block size x R/W mix, and the response-time histograms (a page per R/W mix).
"""

from __future__ import annotations

from reportlab.lib.units import mm
from reportlab.platypus import Flowable

from pts.report.pages import host_ceiling, latency_qos, plot3d, qos_text
from pts.report.pages.steady import convergence_page, page_info, window_pages
from pts.report.renderers import charts
from pts.report.renderers.layout import CONTENT_WIDTH, grid_table, h2, image, new_page, para
from pts.stored import fmt
from pts.stored.cells import window_cells
from pts.stored.latency_qos import short_cells
from pts.stored.model import Cell, TestResult

US = "µs"
# (ledger field, table title, unit)
TABLES = (("lat_mean_us", "Average response time (ART)", US),
          ("lat_percentile_us", "{pct} % response time (5 9s)", US),
          ("lat_max_us", "Maximum response time (MRT)", US),
          ("iops", "IOPS", "IOPS"))


def build(run, test: TestResult) -> list[Flowable]:
    writes = [(mix, bs) for mix in test.rw_mixes if mix.endswith("/100")
              for bs in test.block_sizes] or [(m, b) for m in test.rw_mixes
                                               for b in test.block_sizes]
    story = convergence_page(test, f"ART ({US})", "lat_mean_us", writes,
                             "Average Response Time")
    story += convergence_page(test, f"MRT ({US})", "lat_max_us", writes,
                              "Maximum Response Time", first=False)
    story += window_pages(test, f"ART ({US})")
    qos = latency_qos.qos_cells(run, test)
    story += tables_page(test) + latency_qos.table_page(test, qos) + directions_page(test)
    story += plot_page(test, "lat_mean_us", "ART") + plot_page(test, "lat_max_us", "MRT")
    story += plot3d.page(test, "lat_mean_us", "ART", f"ART ({US})",
                               "Average response time (ART)")
    story += plot3d.page(test, "lat_max_us", "MRT", f"MRT ({US})",
                               "Maximum response time (MRT, mean of the rounds' maxima)")
    return story + latency_qos.histogram_pages(test, qos)


def _pct(test: TestResult) -> str:
    return f"{test.typed.percentile or 99.999:g}"


def _window_text(test: TestResult) -> str:
    if test.window is None:
        return "no measurement window (no round completed)"
    return f"mean over measurement window rounds {test.window[0]}..{test.window[1]}"


def definitions(test: TestResult) -> str:
    """What the numbers are, stated on the page (pts-digest §11.11)."""
    fewest = min((p.get("ios") for p in test.points
                  if p.round in test.window_rounds and p.get("ios") is not None), default=None)
    text = (f"Response time = fio total latency (lat = submission + completion: issue to "
            f"completion as the host sees it), TC {test.typed.thread_count} / QD "
            f"{test.typed.queue_depth}. The {_pct(test)} % figure is computed from "
            "fio's total-latency histogram (lat_percentiles=1, json+ bins) by fio's own rule; "
            "for mixed points the read and write histograms are merged. It is a bin midpoint "
            "(within 1/128 of the true value), capped at the measured maximum. MRT is the "
            "mean of the window rounds' maxima. Every value: " + _window_text(test) + ".")
    pct = float(_pct(test))
    if qos_text.short(fewest, pct):
        text += " " + qos_text.nr_note([pct], f"some window points (fewest: {fewest:,.0f} "
                                       "I/Os), and a cell with such a point shows n/r",
                                       "longer points (--point-seconds)")
    return text


def _matrix(test: TestResult, metric: str):
    cells = {(c.rw_mix, c.block_size): c for c in window_cells(test, metric)}
    short, marks = _short(test, metric), host_ceiling.marks(test)

    def text(mix: str, bs: int) -> str:      # a host-bound cell is marked (issue 33)
        shown = _text(cells.get((mix, bs)), (mix, bs) in short)
        return host_ceiling.cell_text(shown, (mix, bs), marks)

    return [[fmt.block_size(bs)] + [text(mix, bs) for mix in test.rw_mixes]
            for bs in test.block_sizes]


def _short(test: TestResult, metric: str) -> set[tuple[str, int]]:
    """Cells whose percentile `metric` (lat_percentile_us, read_/write_...) is not
    resolvable from the I/O count of a window point (pts.stored.latency_qos)."""
    if not metric.endswith("lat_percentile_us"):
        return set()
    ios = metric.removesuffix("lat_percentile_us") + "ios"
    return short_cells(test, float(_pct(test)), ios)


def _text(cell: Cell | None, short: bool = False) -> str:
    if cell is None or (cell.mean is None and not cell.na):
        return "no data"
    return "N/A" if cell.na else qos_text.NR if short else fmt.num(cell.mean)


def tables_page(test: TestResult) -> list[Flowable]:
    title = "Measurement Window Tabular Data"
    story = new_page(page_info(test, title, f"Tables: {test.title} {title}"))
    story.append(h2(f"{title}: ART, 5 9s, MRT, IOPS"))
    label_w = 25 * mm
    col_w = (CONTENT_WIDTH - label_w) / max(1, len(test.rw_mixes))
    for metric, name, unit in TABLES:
        story.append(para(f"<b>{name.format(pct=_pct(test))}</b> ({unit}); rows: block size, "
                          "columns: R/W mix (read/write %)", markup=True))
        story.append(grid_table(["Block size"] + [f"R/W {m}" for m in test.rw_mixes],
                                _matrix(test, metric),
                                [label_w] + [col_w] * len(test.rw_mixes), align_right_from=1))
    story += host_ceiling.footnote([test])
    reasons = sorted({c.reason for c in test.cells if c.na and c.reason})
    story += [para(f"N/A: {r}", "small") for r in reasons]
    return story + [para(definitions(test), "small")]


def directions_page(test: TestResult) -> list[Flowable]:
    mixed = [m for m in test.rw_mixes if m not in ("100/0", "0/100")]
    if not mixed:
        return []
    title = "Mixed Points: Reads and Writes"
    story = new_page(page_info(test, title, f"Table: {test.title} {title}"))
    story.append(h2(f"{title} ({US}, window averages)"))
    pct = _pct(test)
    fields = [("lat_mean_us", "ART"), ("lat_percentile_us", f"{pct} %"), ("lat_max_us", "MRT")]
    header = ["R/W, block size"] + [f"{d} {n}" for _, n in fields for d in ("read", "write")]
    rows = []
    for mix in mixed:
        for bs in test.block_sizes:
            row = [f"{mix}, {fmt.block_size(bs)}"]
            for metric, _ in fields:
                for d in ("read", "write"):
                    cell = next((c for c in window_cells(test, f"{d}_{metric}")
                                 if (c.rw_mix, c.block_size) == (mix, bs)), None)
                    row.append(_text(cell, (mix, bs) in _short(test, f"{d}_{metric}")))
            rows.append(row)
    label_w = 30 * mm
    col_w = (CONTENT_WIDTH - label_w) / (len(header) - 1)
    story.append(grid_table(header, rows, [label_w] + [col_w] * (len(header) - 1),
                            align_right_from=1))
    return story + [para("The combined figures of these points are in the tables before; "
                         "here each direction alone. " + definitions(test), "small")]


def plot_page(test: TestResult, metric: str, short: str) -> list[Flowable]:
    title = f"{test.title} 2D Plot: {short} vs Block Size and R/W Mix"
    story = new_page(page_info(test, f"2D Plot: {short}", f"Plot: {title}"))
    story.append(h2(f"2D Plot: {short} ({US}) vs Block Size"))
    values = {(c.rw_mix, c.block_size): c.mean for c in window_cells(test, metric)}
    if all(v is None for v in values.values()):
        return story + [para("No measurement-window data to plot.")]
    png = charts.matrix_2d(test.block_sizes, test.rw_mixes, values, f"{short} ({US}, log)",
                           title)
    return story + [image(png), para(f"{short}, {_window_text(test)}; one line per R/W mix. "
                                     "N/A cells are left out.", "small")]
