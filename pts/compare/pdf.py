"""compare.pdf: several runs of the PTS side by side (python -m pts compare).

Page 1: the runs, the spec / settings differences (when --allow-mixed let them through),
the tests compared. Then every run's header (device, spec, settings, deviations, verdict),
per test present in every run the overlaid plots and side-by-side tables with the
difference to the first run in %, and FOB vs steady state per drive where measured.
"""

from __future__ import annotations

import io

from reportlab import rl_config
from reportlab.lib.units import mm
from reportlab.platypus import Flowable, Frame, PageBreak, PageTemplate
from reportlab.platypus.doctemplate import BaseDocTemplate

from pts import __version__
from pts.compare import charts
from pts.compare.data import CellRow, Comparison, fob_rows, metrics_of, rwsw_rows
from pts.report.pages import qos_text
from pts.report.renderers import chart_base, layout
from pts.report.renderers.layout import CONTENT_WIDTH, MARGIN, PAGE_SIZE, h1, h2, para
from pts.stored import figures, fmt, host_ceiling
from pts.stored.model import RunView, TestResult

rl_config.invariant = 1


def story(comparison: Comparison) -> list[Flowable]:
    """What compare.pdf shows, in order (the dashboard renders the same story as HTML)."""
    out = first_page(comparison) + headers(comparison)
    for name in comparison.common:
        out += test_pages(comparison, name)
    return out + fob_page(comparison)


def build(comparison: Comparison) -> bytes:
    flowables = story(comparison)
    buf = io.BytesIO()
    doc = BaseDocTemplate(buf, pagesize=PAGE_SIZE, leftMargin=MARGIN, rightMargin=MARGIN,
                          topMargin=MARGIN + 30, bottomMargin=MARGIN + 20,
                          title="SNIA SSS PTS drive comparison", author="snia-pts",
                          creator=f"snia-pts {__version__}")
    frame = Frame(MARGIN, MARGIN + 20, CONTENT_WIDTH, PAGE_SIZE[1] - 2 * MARGIN - 50,
                  leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0)
    runs = ", ".join(comparison.label(i) for i in range(len(comparison.runs)))
    doc.addPageTemplates([PageTemplate("compare", [frame],
                                       onPage=lambda c, d: _decorate(c, runs))])
    doc.build(flowables)
    return buf.getvalue()


def _decorate(canv, runs: str) -> None:
    width, height = PAGE_SIZE
    canv.saveState()
    canv.setFillColor(layout.NAVY)
    canv.rect(MARGIN, height - MARGIN - 24, CONTENT_WIDTH, 24, fill=1, stroke=0)
    canv.setFillColorRGB(1, 1, 1)
    canv.setFont("Helvetica-Bold", 10.5)
    canv.drawString(MARGIN + 6, height - MARGIN - 16, "SNIA SSS PTS — drive comparison")
    canv.setFont("Helvetica", 8.5)
    canv.drawRightString(width - MARGIN - 6, height - MARGIN - 16,
                         f"Page {canv.getPageNumber()}")
    canv.setFillColor(layout.NAVY)
    canv.setFont("Helvetica", 7)
    text = f"snia-pts {__version__}   {runs}   rendered from the runs' stored data only"
    canv.drawString(MARGIN, MARGIN + 6, text[:160])
    canv.restoreState()


def first_page(c: Comparison) -> list[Flowable]:
    out: list[Flowable] = [h1("Drive comparison")]
    rows = [(c.label(i), f"{run.run_id}, {run.folder}") for i, run in enumerate(c.runs)]
    out += [layout.kv_table(rows, label_width=55 * mm), layout.gap()]
    if c.differences:
        out.append(para('<font color="#b00020"><b>Runs with different specs or settings '
                        '(compared with --allow-mixed); the differences:</b></font>',
                        markup=True))
        out += [para(f"- {d}") for d in c.differences]
    else:
        out.append(para("Same spec and settings in every run (device and reports folder "
                        "aside)."))
    out.append(layout.gap())
    out.append(para("Tests compared (present in every run): "
                    + (", ".join(c.common) or "none")))
    if c.left_out:
        out.append(para("Not compared: " + "; ".join(c.left_out)))
    out.append(para("Differences in % are to run #1: (run - run #1) / run #1. Figures are "
                    "the means over each test's measurement window, as in each run's report.",
                    "small"))
    return out


def headers(c: Comparison) -> list[Flowable]:
    out: list[Flowable] = [PageBreak(), h1("The runs")]
    for i, run in enumerate(c.runs):
        out += [h2(c.label(i)), layout.kv_table(run_header(run), label_width=35 * mm)]
    return out


def run_header(run: RunView) -> list[tuple[str, str]]:
    d = run.device
    settings = ", ".join(f"{k}={fmt.text(v)}" for k, v in run.options.items())
    deviations = "; ".join(x.text for x in run.deviations) or "none"
    return [
        ("Device", f"{d.model}, S/N {d.serial}, FW {d.firmware}, {fmt.capacity(d.capacity_bytes)}"
                   f", {d.transport}" + (", EMULATED" if d.emulated else "")),
        ("Run", f"{run.run_id}, started {fmt.iso_utc(run.started)}"),
        ("Spec", run.spec_title), ("Settings", settings), ("Deviations", deviations),
        ("Verdict", run.verdict.text + ("" if run.verdict.compliant else
                                        ": " + "; ".join(run.verdict.reasons))),
        ("Tests", "; ".join(f"{t.name}: {t.status}" for t in run.tests) or "none"),
        # issue 33: a figure reaching the host's ceiling may be the host's, not the drive's
        ("Host-bound points", host_ceiling.summary(run)),
    ]


RWSW_ROWS = {"rwsw-replay": "Per capture step of the replay",
             "rwsw-dirth": "Per TC x QD point (means over the measurement window)"}


def test_pages(c: Comparison, name: str) -> list[Flowable]:
    tests = c.tests(name)
    labels = [c.label(i) for i in range(len(tests))]
    clause = str(tests[0].clause or "")
    if clause[:1].isdigit():
        clause = f"clause {clause}"
    out: list[Flowable] = [PageBreak(), h1(tests[0].title + (f" ({clause})" if clause else ""))]
    status = [[labels[i], t.status] for i, t in enumerate(tests)]
    out.append(layout.grid_table(["Run", "Status"], status,
                                 col_widths=[55 * mm, CONTENT_WIDTH - 55 * mm]))
    if tests[0].samples:
        return out + wsat_section(tests, labels)
    out += convergence(tests, labels)
    if name.startswith("rwsw-"):
        # RWSW: per stream of the ATW (rwsw-replay: per capture step, rwsw-dirth: per
        # TC x QD point), not a block size x R/W mix matrix (pts.compare.data.rwsw_rows)
        return out + [PageBreak(), h2(RWSW_ROWS.get(name, "Per stream of the ATW")
                                      + ", side by side"),
                      side_by_side(rwsw_rows(tests), labels)]
    rows = c.rows(name)
    for metric, title, unit in metrics_of(tests[0]):      # --power's where it has them
        mine = [r for r in rows if r.metric == metric]
        named = title if title == unit else f"{title} ({unit})"
        out += [PageBreak(), h2(f"{named}, side by side"), side_by_side(mine, labels)]
        if metric.startswith("qos_"):
            out.append(para(QOS_NOTE + (" " + qos_text.nr_note(
                [float(metric[4:])], "a window point of the cell in that run",
                "longer points (--point-seconds)") if any(
                    qos_text.NR in r.missing for r in mine) else ""), "small"))
        out += matrix_plots(tests[0], mine, labels, title, unit)
    return out


QOS_NOTE = ("QoS levels as on each run's Response Time QoS page: fio's total latency from the "
            "json+ bins of the measurement-window points (their mean), read from the run "
            "folders' raw/.")


def convergence(tests: tuple[TestResult, ...], labels: list[str]) -> list[Flowable]:
    out: list[Flowable] = []
    heading = h2("Steady-state convergence (tracking variables, per round)")
    for t in tests[0].tracking:
        series = {}
        for label, test in zip(labels, tests, strict=True):
            rounds = [r for r in test.rounds if t.label in r.tracking]
            series[label] = ([r.number for r in rounds], [r.tracking[t.label] for r in rounds])
        unit = _unit(tests[0].name)       # the unit is the test's (no option says it)
        chart = layout.image(charts.overlaid(
            series, "Round", unit, f"{t.label}: convergence", integer_x=True),
            size_inches=chart_base.SHORT_SIZE_INCHES)
        out.append(layout.keep(heading, chart) if not out else chart)
    return out


def _unit(name: str) -> str:
    return figures.tracking_unit(name)


def matrix_plots(test: TestResult, rows: list[CellRow], labels: list[str], title: str,
                 unit: str) -> list[Flowable]:
    """Per R/W mix, the metric against block size, one line per run."""
    out: list[Flowable] = []
    heading = h2(f"{title} by block size, per R/W mix")
    sizes = list(dict.fromkeys(r.block_size for r in rows))
    for mix in dict.fromkeys(r.rw_mix for r in rows):
        by_bs = {r.block_size: r for r in rows if r.rw_mix == mix}
        series = {label: [by_bs[bs].values[i] if bs in by_bs else None for bs in sizes]
                  for i, label in enumerate(labels)}
        chart = layout.image(charts.categorical(
            [fmt.block_size(bs) for bs in sizes], series, "Block size", unit,
            f"{title}, R/W {mix}"), size_inches=chart_base.SHORT_SIZE_INCHES)
        # the heading stays with the first chart
        out.append(layout.keep(heading, chart) if not out else chart)
    return out


def side_by_side(rows: list[CellRow], labels: list[str]):
    header = ["Cell"]
    for i, label in enumerate(labels):
        header += [label] if i == 0 else [label, "diff vs #1"]
    body = []
    for r in rows:
        line = [r.label]
        for i, (v, d) in enumerate(zip(r.values, r.diffs, strict=True)):
            line += [fmt.num(v) if v is not None else r.missing_text(i)] + \
                ([] if i == 0 else [_pct(d)])
        body.append(line)
    return layout.grid_table(header, body, align_right_from=1)


def _pct(d: float | None) -> str:
    return "n/a" if d is None else f"{d:+.1f} %"


def wsat_section(tests: tuple[TestResult, ...], labels: list[str]) -> list[Flowable]:
    series = {label: ([s.tgbw_gb for s in t.samples], [s.iops for s in t.samples])
              for label, t in zip(labels, tests, strict=True)}
    out: list[Flowable] = [h2("IOPS against total GB written"), layout.image(
        charts.overlaid(series, "Total GB written (GB)", "IOPS",
                                "WSAT: IOPS vs TGBW"),
        size_inches=chart_base.SHORT_SIZE_INCHES)]
    keys = (("fob_iops", "FOB IOPS (first sample)"), ("ss_average", "Steady-state IOPS"),
            ("fob_ss_ratio", "FOB / steady state"), ("tgbw_gb", "TGBW (GB)"))
    rows = [CellRow(tests[0].name, title, "", 0, key, "",
                    tuple(t.result.get(key) for t in tests)) for key, title in keys]
    return out + [h2("WSAT figures, side by side"), side_by_side(rows, labels)]


def fob_page(c: Comparison) -> list[Flowable]:
    found = fob_rows(c)
    if not found:
        return []
    body = [[c.label(i), test, cell, fmt.num(f), fmt.num(ss), fmt.num(ratio)]
            for i, test, cell, f, ss, ratio in found]
    return [PageBreak(), h1("FOB vs steady state, per drive"),
            para("Fresh-out-of-box IOPS (--fob-sweep: measured on the purged drive before "
                 "WIPC; WSAT: its first sample) against the steady-state window mean."),
            layout.grid_table(["Run", "Test", "Cell", "FOB IOPS", "SS IOPS", "FOB / SS"],
                              body, align_right_from=3)]
