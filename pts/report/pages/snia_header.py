"""The SNIA report header block (PTS 2.0.2 report format; digest §8.2) on every page of a
test: Test platform | Device under test | Set-up parameters | Test parameters, filled from
run.json and the ledger records of the test (and, for a DIRTH/CBW demand phase, of the
preconditioning phase it continues). Each test family states its own flow: what ran before
the test stimulus (purge, Pre-Condition 1 and 2) and what the stimulus was, with the values
recorded for this run; a value the run did not record reads "not recorded".
"""

from __future__ import annotations

from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.platypus import Flowable, Paragraph, Table, TableStyle

from pts.report.renderers.layout import CONTENT_WIDTH, LIGHT, STYLES, PageMarker, esc
from pts.results import records
from pts.results.parameters import FAMILIES as PARAMETER_FAMILIES
from pts.results.parameters import Atw, DirthCbwParameters, RwswParameters
from pts.stored import fmt, platform_rows
from pts.stored.model import COMPLETE, NOT_STEADY, STEADY, RunView, TestResult

TINY = ParagraphStyle("snia", parent=STYLES["cell"], fontSize=6.3, leading=7.6)
TINY_HEAD = ParagraphStyle("sniab", parent=TINY, fontName="Helvetica-Bold")
HEADS = ("Test platform", "Device under test", "Set-up parameters", "Test parameters")
MISSING = "not recorded"
NO_WIPC = "none: starts from the purged drive (no WIPC)"

Rows = list[tuple[str, str]]


def _lines(rows: Rows) -> Paragraph:
    return Paragraph("<br/>".join(f"<b>{esc(k)}</b> {esc(v)}" for k, v in rows), TINY)


def cells(run: RunView, test: TestResult) -> list[Rows]:
    """The four columns as (label, value) rows: what the block prints."""
    p, d = run.platform, run.device
    platform = [("Host", str(p.get("hostname", "n/a"))),
                ("OS", f"{p.get('os', 'n/a')}, kernel {p.get('kernel', 'n/a')}"),
                ("CPU", f"{p.get('cpu', 'n/a')} ({p.get('cpus', '?')} CPUs)"),
                ("Tools", f"{run.tools.get('fio', 'fio ?')}, snia-pts "
                          f"{run.tools.get('snia-pts', '?')}"),
                ("I/O engine", platform_rows.engine(run.options))]
    dut = [("Model", d.model), ("S/N", d.serial), ("FW", d.firmware),
           ("Capacity", f"{fmt.num((d.capacity_bytes or 0) / 1e9)} GB, {d.transport}"
            + (", EMULATED" if d.emulated else "")),
           ("Write cache", write_cache(run, test))]
    setup, stimulus = FAMILIES.get(family(test), (_round_setup, _round_test))
    return [platform, dut, _common_setup(test) + setup(run, test), stimulus(run, test)]


def family(test: TestResult) -> str:
    """The header's family, from the test name's entry in pts.results.parameters' registry
    (the record its test_start is typed as): DIRTH/CBW's demand phase ("dirth", "cbw") and
    its preconditioning phase ("dirth-precondition") are two ledger tests of one family;
    every other test is its name's first word ("throughput-1024k", "rwsw-dirth",
    "rwsw-dirth-preconditioning"), whatever its parameters or suffix."""
    kind = test.name.split("-", 1)[0]
    if PARAMETER_FAMILIES.get(kind) is DirthCbwParameters:
        return "dirth-cbw" if test.name == kind else "dirth-cbw-precondition"
    return kind


# ----------------------------------------------------------------------------- shared cells

def write_cache(run: RunView, test: TestResult) -> str:
    """Required vs actual, from the write_cache records of the test (a demand phase: of the
    phase it continues, then its own)."""
    caches = [*_previous(run, test, "write_caches"), *test.write_caches]
    if not caches:
        return f"{MISSING} (required {test.typed.write_cache or MISSING})"
    actual = list(dict.fromkeys(c.actual for c in caches))
    bad = [c for c in caches if not c.matches]
    return (f"required {caches[-1].required}, actual {' / '.join(actual)}"
            + ("; DOES NOT MATCH" if bad else "")
            + ("; not settable" if any(not c.settable for c in caches) else ""))


def _previous(run: RunView, test: TestResult, attr: str) -> tuple:
    prev = precondition_of(run, test)
    return getattr(prev, attr) if prev is not None else ()


def precondition_of(run: RunView, test: TestResult) -> TestResult | None:
    """The ledger test a test continues: DIRTH/CBW's "continues_from", rwsw-replay's and
    rwsw-dirth's "preconditioning_test" (their purge and write cache are recorded there)."""
    p = test.typed
    name = p.continues_from if isinstance(p, DirthCbwParameters) else \
        p.preconditioning_test if isinstance(p, RwswParameters) else None
    return next((t for t in run.tests if t.name == name), None) if name else None


def _common_setup(test: TestResult) -> Rows:
    p = test.typed
    ar = p.active_range_pct
    return [("Data pattern", str(p.data_pattern or MISSING)),
            ("ActiveRange", MISSING if ar is None else f"{fmt.text(ar)} %")]


def _purge(test: TestResult, where: str = "") -> str:
    purge = test.purge
    if purge is None:
        return f"{MISSING}{where}"
    if purge.method == "none":
        return f"none (--purge none: no purge ran){where}"
    flags = ("" if purge.ok else ", FAILED") + (", not a spec purge" if purge.deviation
                                                  else "")
    return f"{purge.method}{flags}{where}"


def toio(tc, qd) -> str:
    if isinstance(tc, int) and isinstance(qd, int):
        return f"{tc}/{qd} (TOIO {tc * qd})"
    return f"{fmt.text(tc) if tc is not None else MISSING}/" \
           f"{fmt.text(qd) if qd is not None else MISSING}"


def rounds_text(test: TestResult) -> str:
    """The measurement window and whether it is steady, as the test_end says."""
    w = test.window
    if w is None:
        return "no round completed"
    span = f"rounds {w[0]}..{w[1]}"
    if test.state in (STEADY, COMPLETE):
        return f"SS {span}"
    if test.state == NOT_STEADY:
        return f"{span}, SS NOT ACHIEVED"
    return f"{span}, {test.state.upper()}"


def note(test: TestResult) -> str:
    if test.state == STEADY:
        return "steady state reached"
    if test.state == NOT_STEADY:
        return "SS NOT ACHIEVED"
    if test.state == COMPLETE:
        return {"hir": "complete; its preconditioning reached steady state",
                "xsr": "complete (XSR has no steady state)",
                "wsat": "ran to its stop condition (no SS required)"}.get(
                    family(test), "complete")
    return test.state.upper()


def _stimulus(test: TestResult) -> str:
    p = test.typed
    return f"{p.access or MISSING} ({test.title} loop)"


# ----------------------------------------------------------------------------- families

def _round_setup(run: RunView, test: TestResult) -> Rows:
    """IOPS, Throughput, Latency: purge, WIPC, then the test loop to steady state."""
    w, cap = test.wipc, run.device.capacity_bytes
    if w is None:
        pc1 = "none recorded"
    else:
        times = f", {w.bytes_expected / cap:.3g}X capacity" if w.bytes_expected and cap else ""
        pc1 = (f"SEQ {fmt.block_size(w.block_size)} W, TC {fmt.text(w.thread_count)}/QD "
               f"{fmt.text(w.queue_depth)}{times}")
    return [("Purge", _purge(test)), ("Pre-Condition 1", pc1),
            ("Pre-Condition 2", f"{test.title} loop, {rounds_text(test)}")]


def _round_test(run: RunView, test: TestResult) -> Rows:
    p = test.typed
    return [("Stimulus", _stimulus(test)),
            ("R/W mixes (outer loop)", ", ".join(test.rw_mixes) or MISSING),
            ("Block sizes (inner loop)", ", ".join(fmt.block_size(b) for b in test.block_sizes)
             or MISSING),
            ("TC/QD", toio(p.thread_count, p.queue_depth)),
            ("Note", note(test))]


def _wsat_setup(run: RunView, test: TestResult) -> Rows:
    return [("Purge", _purge(test)), ("Pre-Condition 1", NO_WIPC),
            ("Pre-Condition 2", "none: the writes run from FOB")]


def _wsat_test(run: RunView, test: TestResult) -> Rows:
    p, r = test.typed, test.result
    window = r.get("ss_window") or []
    final = (f"samples {window[0]}..{window[1]}, "
             + ("steady" if r.get("final_window_steady") else "NOT steady")
             if len(window) == 2 else MISSING)
    return [("Stimulus", f"{p.access or MISSING} "
                         f"{', '.join(fmt.block_size(b) for b in test.block_sizes) or MISSING}"
                         f" {', '.join(test.rw_mixes) or MISSING}, continuous"),
            ("Samples", f"{len(test.samples)} x {fmt.text(p.point_seconds)} s"),
            ("Final window", final),
            ("TC/QD", toio(p.thread_count, p.queue_depth)),
            ("Note", note(test))]


def _dirth_cbw_workload(test: TestResult) -> str:
    p = test.typed
    return f"{p.access or MISSING} {p.workload or MISSING}"


def _pre_setup(run: RunView, test: TestResult) -> Rows:
    """DIRTH/CBW preconditioning phase: purge, then this phase's rounds."""
    return [("Purge", _purge(test)), ("Pre-Condition 1", NO_WIPC),
            ("Pre-Condition 2", "none")]


def _pre_test(run: RunView, test: TestResult) -> Rows:
    p = test.typed
    rnd = p.round_seconds
    return [("Stimulus", f"{_dirth_cbw_workload(test)} {', '.join(test.rw_mixes) or MISSING}"),
            ("Round", f"{fmt.text(rnd) if rnd is not None else MISSING} s of writes, the "
                      f"last {fmt.text(p.point_seconds)} s measured"),
            ("TC/QD", toio(p.thread_count, p.queue_depth)),
            ("Rounds", rounds_text(test)), ("Note", note(test))]


def _dirth_cbw_setup(run: RunView, test: TestResult) -> Rows:
    """DIRTH/CBW demand phase: the purge and the preconditioning are recorded under the
    phase it continues ("<kind>-precondition")."""
    pre = precondition_of(run, test)
    name = test.typed.continues_from
    if pre is None:
        return [("Purge", f"{MISSING} ({name} not in the ledger)"),
                ("Pre-Condition 1", f"{MISSING} ({name})"),
                ("Pre-Condition 2", f"{test.title} demand loop, {rounds_text(test)}")]
    pp = pre.typed
    pc1 = (f"{_dirth_cbw_workload(pre)} {', '.join(pre.rw_mixes) or MISSING}, TC/QD "
           f"{toio(pp.thread_count, pp.queue_depth)}, {rounds_text(pre)}")
    return [("Purge", _purge(pre, f" (under {name})")), ("Pre-Condition 1", pc1),
            ("Pre-Condition 2", f"{test.title} demand loop, {rounds_text(test)}")]


def _dirth_cbw_test(run: RunView, test: TestResult) -> Rows:
    p = test.typed
    tcs, qds = p.thread_counts or [], p.queue_depths or []
    rows = [("Stimulus", f"{_dirth_cbw_workload(test)} {', '.join(test.rw_mixes) or MISSING}")]
    if p.bssplit:
        rows.append(("Block-size mix", ", ".join(p.block_size_mix or []) or MISSING))
    if p.random_distribution:
        rows.append(("LBA zones (% I/O / % LBA)", zones(p.random_distribution)))
    products = [tc * qd for tc in tcs for qd in qds]
    rows += [("TC (outer loop)", ", ".join(map(str, tcs)) or MISSING),
             ("QD (inner loop)", ", ".join(map(str, qds)) or MISSING),
             ("TOIO", f"{min(products)}..{max(products)}" if products else MISSING),
             ("Note", note(test))]
    return rows


def zones(distribution: str) -> str:
    """fio's "zoned:50/5:30/15:20/80" as "50/5, 30/15, 20/80"."""
    return ", ".join(distribution.split(":")[1:]) or distribution


def _hir_setup(run: RunView, test: TestResult) -> Rows:
    base = [r for r in test.recovery if isinstance(r, records.HirBaseline)]
    p = test.typed
    pre = (f"RND {', '.join(fmt.block_size(b) for b in test.block_sizes) or MISSING} "
           f"{', '.join(test.rw_mixes) or MISSING}, TC/QD "
           f"{toio(p.thread_count, p.queue_depth)}, ")
    if base:
        b = base[-1]
        window = f"rounds {b.window[0]}..{b.window[1]}" if b.window else "no window"
        pre += (f"steady at {window}" if b.steady else f"NOT steady ({window})")
    else:
        pre += f"{rounds_text(test)} (no baseline recorded)"
    return [("Purge", _purge(test)), ("Pre-Condition 1", NO_WIPC), ("Pre-Condition 2", pre)]


def _hir_test(run: RunView, test: TestResult) -> Rows:
    p = test.typed
    idle = p.idle_seconds or []
    states = {r.state for r in test.recovery if isinstance(r, records.HirState)}
    return [("Stimulus", f"{p.access or MISSING} "
                         f"{', '.join(fmt.block_size(b) for b in test.block_sizes) or MISSING}"
                         f" {', '.join(test.rw_mixes) or MISSING}, TC/QD "
                         f"{toio(p.thread_count, p.queue_depth)}"),
            ("Wait states", f"{fmt.text(p.repetitions)} x "
                            f"({fmt.text(p.write_seconds)} s W + "
                            f"{', '.join(map(str, idle)) or MISSING} s idle)"),
            ("Return to baseline", f"{fmt.text(p.baseline_repetitions)} x "
                                   f"{fmt.text(p.write_seconds)} s W after each"),
            ("Note", f"{len(states)} of {len(idle)} wait states done; {note(test)}")]


def _xsr_setup(run: RunView, test: TestResult) -> Rows:
    return [("Purge", _purge(test)), ("Pre-Condition 1", NO_WIPC),
            ("Pre-Condition 2", "none")]


def _xsr_test(run: RunView, test: TestResult) -> Rows:
    """The access groups as run (xsr_group records), else as planned (test_start)."""
    p = test.typed
    ran = {r.group: r for r in test.recovery if isinstance(r, records.XsrGroup)}
    rows = []
    for g in p.groups or []:
        r = ran.get(g.group)
        done = g if r is None else r       # as run, else as planned: the same three fields
        rows.append((f"Group {g.group}",
                     f"{str(done.pattern).upper()} {fmt.block_size(done.block_size)}"
                     f" W, {fmt.text(done.seconds)} s" + ("" if r else " (not run)")))
    return rows + [("TC/QD", toio(p.thread_count, p.queue_depth)),
                   ("Interval", f"{fmt.text(p.point_seconds)} s"),
                   ("Note", note(test))]


def _rwsw_setup(run: RunView, test: TestResult) -> Rows:
    """The ATW from FOB (rwsw-wsat, -streams, the preconditioning tests), or (rwsw-replay,
    rwsw-dirth) after their "-preconditioning" test: its purge, its ATW rounds."""
    name = test.typed.preconditioning_test
    if not name:
        return [("Purge", _purge(test)), ("Pre-Condition 1", NO_WIPC),
                ("Pre-Condition 2", f"none: the ATW runs from FOB, {rounds_text(test)}")]
    pre = precondition_of(run, test)
    if pre is None:
        return [("Purge", f"{MISSING} ({name} not in the ledger)"),
                ("Pre-Condition 1", NO_WIPC), ("Pre-Condition 2", f"{MISSING} ({name})")]
    pp = pre.typed
    return [("Purge", _purge(pre, f" (under {name})")), ("Pre-Condition 1", NO_WIPC),
            ("Pre-Condition 2", f"{name}: the ATW at TC/QD "
                                f"{toio(pp.thread_count, pp.queue_depth)}, {rounds_text(pre)}")]


def _rwsw_test(run: RunView, test: TestResult) -> Rows:
    """RWSW: the Applied Test Workload's streams, not a block size x R/W mix loop (its
    points record block size 0 for the whole ATW)."""
    p = test.typed
    atw = p.atw or Atw()
    streams = ", ".join(f"{s.stream} {fmt.text(s.share_pct)} %" for s in atw.streams or ())
    name = MISSING if atw.name is None else atw.name
    rows = [("Stimulus", f"ATW {name!r}: {streams or MISSING}")]
    if p.thread_counts:          # rwsw-dirth: the ATW at every TC x QD
        rows += [("TC (demand)", ", ".join(map(str, p.thread_counts))),
                 ("QD (demand)", ", ".join(map(str, p.queue_depths or []))),
                 ("Histograms", fmt.text(p.histograms))]
    elif p.steps:                # rwsw-replay: the capture's steps at their own OIO
        rows += [("Steps", f"{len(p.steps)} in capture order, each at its own OIO, time "
                           f"scale {fmt.text(p.time_scale)}")]
    else:
        rows.append(("TC/QD", toio(p.thread_count, p.queue_depth)))
    return rows + [("Note", note(test))]


FAMILIES = {
    "rwsw": (_rwsw_setup, _rwsw_test),
    "wsat": (_wsat_setup, _wsat_test),
    "dirth-cbw-precondition": (_pre_setup, _pre_test),
    "dirth-cbw": (_dirth_cbw_setup, _dirth_cbw_test),
    "hir": (_hir_setup, _hir_test),
    "xsr": (_xsr_setup, _xsr_test),
}


# ----------------------------------------------------------------------------- the block

def columns(run: RunView, test: TestResult) -> list[Paragraph]:
    return [_lines(rows) for rows in cells(run, test)]


def block(run: RunView, test: TestResult) -> Table:
    heads = [Paragraph(h, TINY_HEAD) for h in HEADS]
    widths = [0.2, 0.2, 0.31, 0.29]
    table = Table([heads, columns(run, test)], colWidths=[w * CONTENT_WIDTH for w in widths],
                  hAlign="LEFT")
    table.setStyle(TableStyle([
        ("GRID", (0, 0), (-1, -1), 0.3, "#9aa7b8"), ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("BACKGROUND", (0, 0), (-1, 0), LIGHT), ("TOPPADDING", (0, 0), (-1, -1), 1),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 1.5), ("LEFTPADDING", (0, 0), (-1, -1), 2.5),
        ("RIGHTPADDING", (0, 0), (-1, -1), 2.5)]))
    table.spaceAfter = 2 * mm
    # a page that a long table or paragraph continues onto gets a fresh copy (pdf.ReportDoc)
    table.pts_header_again = lambda: block(run, test)
    return table


def on_every_page(run: RunView, test: TestResult, story: list[Flowable]) -> list[Flowable]:
    """`story` (a test's pages) with the header block right after each page's marker."""
    out: list[Flowable] = []
    for f in story:
        out.append(f)
        if isinstance(f, PageMarker):
            out.append(block(run, test))
    return out
