"""The run summary page(s): verdict, deviations, test results, device, platform, tools,
specification and options, and each test's setup (purge, write cache, WIPC, parameters).
"""

from __future__ import annotations

import shlex

from reportlab.lib.units import mm
from reportlab.platypus import Flowable

from pts.conditioning.wipc import READING as WIPC_READING
from pts.report.pages import warnings
from pts.report.pages.snia_header import family, zones
from pts.report.renderers.layout import (
    CONTENT_WIDTH,
    GREEN,
    RED,
    PageInfo,
    esc,
    grid_table,
    h1,
    h2,
    kv_table,
    new_page,
    para,
)
from pts.results import records
from pts.results.parameters import Atw, DirthCbwParameters
from pts.stored import fmt, purge_check, report_fields, waf
from pts.stored import platform_rows as platform_table
from pts.stored.model import RunView, TestResult

SOURCES = {
    "run.json": "declared before the run (run.json)",
    "ledger": "recorded while the run ran (ledger)",
}

SHOWN_PARAMETERS = frozenset({
    "thread_count", "queue_depth", "active_range_pct", "active_range_bytes", "data_pattern",
    "point_seconds", "max_rounds", "window_rounds", "max_data_excursion", "max_slope_excursion",
    "rw_mixes", "block_sizes", "tracking", "write_cache", "access",
    # DIRTH/CBW and XSR loops (_loop_rows)
    "thread_counts", "queue_depths", "workload", "bssplit", "random_distribution",
    "block_size_mix", "groups", "dropped_block_sizes",
    "atw", "sections",      # RWSW: the ATW in _loop_rows and on its workload pages
    "steps",                # rwsw-replay: one row a step in its Replay Steps table
    "readings"})     # readings: their own section (pts/report/pages/readings.py)


def pages(run: RunView) -> list[Flowable]:
    info = PageInfo("Run summary", "Device, setup, deviations and verdict",
                    "Table: run summary, deviations and verdict", run.verdict.status,
                    alarm=not run.verdict.compliant)
    story = new_page(info, first=True) + [h1("Run summary")]
    story += verdict_block(run) + report_block(run) + warnings.block(run)
    story += deviations_block(run)
    story += [h2("Test results"), tests_table(run)]
    story += [h2("Device under test"), kv_table(device_rows(run))]
    story += [h2("Test platform and tools"), kv_table(platform_rows(run))]
    story += [h2("Specification and settings"), kv_table(spec_rows(run))]
    for test in run.tests:
        story += [h2(f"{test.title} test setup"), kv_table(test_setup_rows(run, test))]
    if run.notes:
        story += [h2("Report notes")] + [para(f"- {n}", "small") for n in run.notes]
    return story


def verdict_block(run: RunView) -> list[Flowable]:
    colour = (GREEN if run.verdict.compliant else RED).hexval()[2:]
    out = [para(f'<font color="#{colour}">{esc(run.verdict.text)}</font>', "verdict",
                markup=True)]
    if run.verdict.reasons:
        out.append(para("Why:", "body"))
        out += [para(f"- {r}", "body") for r in run.verdict.reasons]
    else:
        out.append(para("No deviation recorded; the device is not emulated; every test reached "
                        "steady state.", "body"))
    return out


def report_block(run: RunView) -> list[Flowable]:
    """PTS-E 1.0 §5's report fields, on page 1 (pts.stored.report_fields)."""
    found, _ = report_fields.rows(run)
    return [h2(f"Report information ({report_fields.CLAUSE})"), kv_table(found)]


def deviations_block(run: RunView) -> list[Flowable]:
    out: list[Flowable] = [h2(f"Deviations from the specification ({len(run.deviations)})")]
    if not run.deviations:
        return out + [para("None recorded.")]
    for n, dev in enumerate(run.deviations, 1):
        where = SOURCES.get(dev.source, dev.source)
        out.append(para(f"{n}. {esc(dev.text)} <font size=7 color=\"#666666\">[{where}]</font>",
                        markup=True))
    return out


def tests_table(run: RunView) -> Flowable:
    if not run.tests:
        return para("No test recorded in the ledger.")
    rows = [(t.title, t.status, _extent(t),
             "" if t.window is None else f"{t.window[0]}..{t.window[1]}", _waf(run, t))
            for t in run.tests]
    widths = [25 * mm, CONTENT_WIDTH - 75 * mm, 16 * mm, 20 * mm, 14 * mm]
    return grid_table(("Test", "Status", "Rounds", "Window", "WAF"), rows, widths)


def _waf(run: RunView, test: TestResult) -> str:
    """The test's write amplification from the drive's own counters (its counters page says
    from which, and why not where it is "-"): issue 33 §3. With two media counters (log 09h
    and C0h) the finest-resolution one that gives a value (pts.stored.waf.from_records)."""
    found = waf.of_test(run, test).value
    return "-" if found is None else f"{found:.2f}"


def _extent(test: TestResult) -> str:
    """What the test ran in: rounds, WSAT samples or XSR access groups."""
    groups = [r for r in test.recovery if isinstance(r, records.XsrGroup)]
    if groups:
        return f"{len({g.group for g in groups})} groups"
    return f"{len(test.samples)} samples" if test.samples and not test.rounds \
        else str(len(test.rounds))


def device_rows(run: RunView) -> list[tuple[str, str]]:
    dev = run.device
    rows = [
        ("Model", dev.model),
        ("Serial number", dev.serial),
        ("Firmware", dev.firmware),
        ("User capacity", fmt.capacity(dev.capacity_bytes)),
        ("Logical / physical sector", f"{fmt.text(dev.logical_sector)} B / "
                                      f"{fmt.text(dev.physical_sector)} B"),
        ("Transport", dev.transport),
        ("Device", f"{dev.path} ({dev.kname})"),
        ("Identity from", dev.identity_source),
        ("Emulated", {True: "YES: not a real SSD, results are not those of a drive",
                      False: "no", None: "NOT RECORDED"}[dev.emulated]),
    ]
    # Identity fields a newer writer adds (e.g. an emulation profile) are shown as stored.
    extra = run.device_extra
    return rows + [(_label(k), fmt.text(v)) for k, v in extra.items()]


LABELS = {"os": "OS", "cpu": "CPU", "cpus": "CPUs", "devno": "Device number"}


def _label(key: str) -> str:
    """A stored key as a row label: underscores become spaces so that long keys wrap."""
    return LABELS.get(key) or key.replace("_", " ").capitalize()


def platform_rows(run: RunView) -> list[tuple[str, str]]:
    rows = platform_table.rows(run.platform)
    rows += [(f"Tool: {name}", fmt.text(version)) for name, version in run.tools.items()]
    return rows


def spec_rows(run: RunView) -> list[tuple[str, str]]:
    rows = [("Specification", run.spec_title),
            ("Spec name / file", f"{fmt.text(run.spec.get('name'))} / "
                                 f"{fmt.text(run.spec.get('file'))}"),
            # Not the folder path: a moved or copied run folder gives the same PDF bytes.
            ("Run id", run.run_id),
            ("Run started", fmt.iso_utc(run.started)),
            ("Last record", fmt.utc(run.finished))]
    for key, value in run.options.items():
        rows.append((f"Option {key.replace('_', ' ')}", "(specification default)" if value is None
                     else fmt.text(value)))
    return rows


def test_setup_rows(run: RunView, test: TestResult) -> list[tuple[str, str]]:
    p = test.parameters
    rows = [("Status", test.status),
            ("Clause", fmt.text(test.clause)),
            ("Purge", purge_text(test))]
    rows += [("Write cache", cache) for cache in write_cache_texts(test)]
    probe = purge_check.check(test)
    if probe is not None:
        rows.append(("Purge probe", probe.text()))
    rows.append(("WIPC (preconditioning)", wipc_text(run, test)))
    tc, qd = test.typed.thread_count, test.typed.queue_depth
    toio = tc * qd if isinstance(tc, int) and isinstance(qd, int) else None
    rows += [
        ("TC / QD (TOIO)", f"{fmt.text(tc)} / {fmt.text(qd)} ({fmt.text(toio)})"),
        ("ActiveRange", f"{fmt.text(test.typed.active_range_pct)} % "
                        f"({fmt.capacity(test.typed.active_range_bytes)})"),
        ("Data pattern", fmt.text(test.typed.data_pattern)),
        ("Access", fmt.text(p.get("access"))),
        *_duration_rows(test),
        ("Steady-state limits", _limits_text(p)),
        *_loop_rows(test),
        ("Tracking variables", ", ".join(t.label for t in test.tracking) or "n/a"),
    ]
    if "readings" in p:
        n = sum(1 for r in p["readings"] if r.get("status") == "reading")
        rows.append(("Readings of the specification",
                     f"{n} values (listed in the section 'Readings of the specification')"))
    # Parameters a newer runner records that this page does not know are still shown, each
    # cut to what a table cell can hold: a cell taller than a page stops the whole report
    # (reportlab's LayoutError; seen: a 25-step replay's steps printed whole).
    rows += [(f"Parameter {k.replace('_', ' ')}", _cell(fmt.text(v)))
             for k, v in p.items() if k not in SHOWN_PARAMETERS]
    return rows


CELL_CHARS = 600     # about 10 lines of the parameter column


def _cell(text: str) -> str:
    if len(text) <= CELL_CHARS:
        return text
    return (f"{text[:CELL_CHARS]}... ({len(text):,} characters; the whole value is in the "
            "run's ledger.jsonl, this test's test_start record)")


def _loop_rows(test: TestResult) -> list[tuple[str, str]]:
    """The test's loops as recorded: DIRTH/CBW's TC x QD grid at one workload (CBW: the
    JESD219 block-size mix and LBA zones), XSR's access groups, else R/W mix x block size."""
    p, kind = test.typed, family(test)
    if kind == "xsr":
        return [(f"Access group {g.group}", f"{str(g.pattern).upper()} "
                 f"{fmt.block_size(g.block_size)} writes for {fmt.text(g.seconds)} s")
                for g in p.groups or []] + \
               [("Interval", f"{fmt.text(p.point_seconds)} s")]
    if kind == "rwsw":      # the ATW's streams, not a matrix (its points: block size 0)
        atw = p.atw or Atw()
        return [("Applied Test Workload", f"{fmt.text(atw.name)} "
                 f"({fmt.text(atw.path)}, sha256 {str(atw.sha256)[:16]}...), "
                 f"OIO {fmt.text(atw.oio)}"),
                ("IO streams (target share)", ", ".join(
                    f"{s.stream} {fmt.text(s.share_pct)} %" for s in atw.streams or ())
                 or "n/a")]
    if kind not in ("dirth-cbw", "dirth-cbw-precondition"):
        return [("R/W mixes (outer loop)", ", ".join(test.rw_mixes) or "n/a"),
                ("Block sizes (inner loop)", ", ".join(fmt.block_size(b)
                                                       for b in test.block_sizes) or "n/a")]
    rows = [("R/W mix", ", ".join(test.rw_mixes) or "n/a"),
            ("Block sizes", ", ".join(p.block_size_mix or []) or "not recorded"
             if p.bssplit else ", ".join(fmt.block_size(b) for b in test.block_sizes)),
            ("LBA zones (% of I/Os / % of LBAs)", zones(p.random_distribution)
             if p.random_distribution else "none: uniform over the ActiveRange")]
    if p.dropped_block_sizes:
        rows.append(("Block sizes left out", fmt.text(p.dropped_block_sizes)))
    if kind == "dirth-cbw-precondition":    # one point, at the TC/QD above
        return rows + [("Preconditioning round", f"{fmt.text(p.round_seconds)} s of "
                        f"writes, the last {fmt.text(p.point_seconds)} s measured")]
    return rows + [("TC (outer loop)", fmt.text(p.thread_counts)),
                   ("QD (inner loop)", fmt.text(p.queue_depths))]


def _limits_text(p: dict) -> str:
    data, slope = p.get("max_data_excursion"), p.get("max_slope_excursion")
    if data is None and slope is None:
        return "n/a: this test has no steady-state rule"
    return (f"data excursion <= {fmt.pct(data)}, slope excursion <= {fmt.pct(slope)} of the "
            "window average")


def purge_text(test: TestResult) -> str:
    purge = test.purge
    if purge is None and (pre := _continued(test)):          # DIRTH/CBW demand phase
        return (f"none in this phase: the drive was purged once, at the start of "
                f"{pre} (see its setup)")
    if purge is None:
        return "NOT RECORDED"
    command = shlex.join(purge.command) if purge.command else "no command"
    flags = ("succeeded" if purge.ok else "FAILED") + \
        ("; NOT a purge per the specification" if purge.deviation else "")
    text = f"{purge.method}: {command} ({flags}, {fmt.num(purge.seconds)} s)"
    others = [shlex.join(s) for s in purge.steps if list(s) != list(purge.command or ())]
    if others:
        text += "; also ran: " + "; ".join(others)
    if purge.error:
        text += f". Error: {purge.error}"
    elif purge.verification:
        text += f". Verified: {purge.verification}"
    elif not purge.deviation:
        text += ". Not verified"
    return text


def _continued(test: TestResult) -> str | None:
    """The test a DIRTH/CBW demand phase continues (None: not a demand phase)."""
    p = test.typed
    return p.continues_from if isinstance(p, DirthCbwParameters) else None


def write_cache_texts(test: TestResult) -> list[str]:
    if not test.write_caches and (pre := _continued(test)):
        return [f"as set by {pre}"]
    if not test.write_caches:
        return [f"NOT RECORDED (required {fmt.text(test.typed.write_cache)})"]
    out = []
    for wc in test.write_caches:
        verdict = "as required" if wc.matches else "DOES NOT MATCH"
        settable = "settable" if wc.settable else "NOT settable"
        out.append(f"required {wc.required}, actual \"{wc.actual}\" ({verdict}; {settable}; "
                   f"{wc.when or 'when not recorded'})")
    return out


def _duration_rows(test: TestResult) -> list[tuple[str, str]]:
    """Rounds of points, or (WSAT) one continuous run sampled every point_seconds; XSR's
    fixed-length access groups have their interval with the groups (_loop_rows)."""
    p, kind = test.typed, family(test)
    if kind == "xsr":
        return []
    if kind == "wsat":
        return [("Sample interval", f"{fmt.text(p.point_seconds)} s, steady-state "
                                    f"window {fmt.text(p.window_rounds)} samples")]
    return [("Test point duration", f"{fmt.text(p.point_seconds)} s"),
            ("Rounds", f"max {fmt.text(p.max_rounds)}, measurement window "
                       f"{fmt.text(p.window_rounds)} rounds")]


def wipc_text(run: RunView, test: TestResult) -> str:
    w = test.wipc
    if w is None and (pre := _continued(test)):                 # DIRTH/CBW demand phase
        return (f"none: the demand rounds continue on the drive as the RND write rounds of "
                f"{pre} left it (no WIPC)")
    if w is None and test.parameters and "wipc_block_size" not in test.parameters:
        return "none: the test starts from the purged, fresh-out-of-box (FOB) state"
    if w is None:
        return "not recorded"
    # What was written, as multiples of the user capacity and passes over the ActiveRange,
    # and the reading of the spec's amount (pts.conditioning.wipc), with a run short of it.
    p = test.parameters
    capacity, ar = run.device.capacity_bytes, p.get("active_range_bytes")
    amount = short = ""
    if w.bytes_expected and capacity:
        amount = f" = {w.bytes_expected / capacity:.3g} x user capacity"
        if ar:
            amount += (f" ({w.bytes_expected / ar:.3g} passes over the "
                       f"{fmt.text(p.get('active_range_pct'))} % ActiveRange)")
        multiple = p.get("wipc_capacity_multiple")
        if multiple and w.block_size and \
                w.bytes_expected < multiple * (capacity // w.block_size) * w.block_size:
            short = f"; LESS than the {multiple:g} x user capacity this reading asks"
    written = "n/a" if w.bytes_written is None else f"{w.bytes_written:,}"
    expected = "n/a" if w.bytes_expected is None else f"{w.bytes_expected:,}"
    return (f"SEQ {fmt.block_size(w.block_size)} writes: {written} bytes written, "
            f"{expected} expected{amount}{short}; {fmt.num(w.seconds)} s at TC "
            f"{fmt.text(w.thread_count)} / QD {fmt.text(w.queue_depth)}. Amount: "
            f"{WIPC_READING}.")
