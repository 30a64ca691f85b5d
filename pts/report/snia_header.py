"""The SNIA report header block (PTS 2.0.2 report format; digest §8) on every page of a
test: Test platform | Device under test | Set-up parameters | Test parameters, the same
block for every test, filled from run.json and the test's ledger records.
"""

from __future__ import annotations

from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.platypus import Flowable, Paragraph, Table, TableStyle

from pts.report import fmt
from pts.report.layout import CONTENT_WIDTH, LIGHT, STYLES, PageMarker, esc
from pts.report.model import COMPLETE, STEADY, RunView, TestResult

TINY = ParagraphStyle("snia", parent=STYLES["cell"], fontSize=6.3, leading=7.6)
TINY_HEAD = ParagraphStyle("sniab", parent=TINY, fontName="Helvetica-Bold")


def _lines(*pairs: tuple[str, str]) -> Paragraph:
    return Paragraph("<br/>".join(f"<b>{esc(k)}</b> {esc(v)}" for k, v in pairs), TINY)


def columns(run: RunView, test: TestResult) -> list[Paragraph]:
    p, d, params = run.platform, run.device, test.parameters
    platform = _lines(("Host", str(p.get("hostname", "n/a"))),
                      ("OS", f"{p.get('os', 'n/a')}, kernel {p.get('kernel', 'n/a')}"),
                      ("CPU", f"{p.get('cpu', 'n/a')} ({p.get('cpus', '?')} CPUs)"),
                      ("Tools", f"{run.tools.get('fio', 'fio ?')}, snia-pts "
                                f"{run.tools.get('snia-pts', '?')}"))
    dut = _lines(("Model", d.model), ("S/N", d.serial), ("FW", d.firmware),
                 ("Capacity", f"{fmt.num((d.capacity_bytes or 0) / 1e9)} GB, {d.transport}"
                  + (", EMULATED" if d.emulated else "")))
    setup = _lines(("Data pattern", str(params.get("data_pattern", "n/a"))),
                   ("ActiveRange", f"{params.get('active_range_pct', 'n/a')} %"),
                   ("Purge", test.purge.method if test.purge else "none recorded"),
                   ("Pre-Condition 1", _pc1(test, d.capacity_bytes)),
                   ("Pre-Condition 2", _pc2(test)))
    mixes = ", ".join(test.rw_mixes) or "n/a"
    sizes = ", ".join(fmt.block_size(b) for b in test.block_sizes) or "n/a"
    tests = _lines(("Stimulus", f"{params.get('access', 'RND')} {test.title}"),
                   ("R/W mixes (outer loop)", mixes), ("Block sizes (inner loop)", sizes),
                   ("TC/QD", f"{params.get('thread_count', '?')}/"
                             f"{params.get('queue_depth', '?')}"),
                   ("Note", _note(test)))
    return [platform, dut, setup, tests]


def _pc1(test: TestResult, capacity: int | None) -> str:
    w = test.wipc
    if w is None:
        return "none (the test starts from the purged device)"
    times = f", {w.bytes_expected / capacity:g}X capacity" if w.bytes_expected and capacity \
        else ""
    return (f"SEQ {fmt.block_size(w.block_size)} W, TC {w.thread_count}/QD {w.queue_depth}"
            f"{times}")


def _pc2(test: TestResult) -> str:
    if test.window is None:
        return f"{test.title} loop, no measurement window"
    unit = "samples" if test.samples else "SS rounds"
    return f"{test.title} loop, {unit} {test.window[0]}..{test.window[1]}"


def _note(test: TestResult) -> str:
    if test.state == STEADY:
        return "steady state reached"
    if test.state == COMPLETE:
        return "completed (no steady state required)"
    return "SS NOT ACHIEVED" if test.state == "not_steady" else test.state.upper()


def block(run: RunView, test: TestResult) -> Table:
    heads = [Paragraph(h, TINY_HEAD) for h in ("Test platform", "Device under test",
                                               "Set-up parameters", "Test parameters")]
    widths = [0.22, 0.2, 0.3, 0.28]
    table = Table([heads, columns(run, test)], colWidths=[w * CONTENT_WIDTH for w in widths],
                  hAlign="LEFT")
    table.setStyle(TableStyle([
        ("GRID", (0, 0), (-1, -1), 0.3, "#9aa7b8"), ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("BACKGROUND", (0, 0), (-1, 0), LIGHT), ("TOPPADDING", (0, 0), (-1, -1), 1),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 1.5), ("LEFTPADDING", (0, 0), (-1, -1), 2.5),
        ("RIGHTPADDING", (0, 0), (-1, -1), 2.5)]))
    table.spaceAfter = 2 * mm
    return table


def on_every_page(run: RunView, test: TestResult, story: list[Flowable]) -> list[Flowable]:
    """`story` (a test's pages) with the header block right after each page's marker."""
    out: list[Flowable] = []
    for f in story:
        out.append(f)
        if isinstance(f, PageMarker):
            out.append(block(run, test))
    return out
