"""HIR and XSR report pages (pts-digest §7.5, §7.6, §8): built from the typed hir_* / xsr_*
records of the ledger (TestResult.recovery).

HIR: the preconditioning pages every round-based test has; IOPS vs time for all wait states;
one plot per wait state with the steady-state baseline; a table of mean IOPS per wait state
against the baseline. XSR: TP vs time for all groups; the two transitions zoomed; ART and MRT
vs time; a table of end-of-group TP, peak ART and MRT and the recovery time per transition,
with the suite's definition of recovery time.
"""

from __future__ import annotations

from reportlab.platypus import Flowable

from pts.report.pages import steady
from pts.report.pages.steady import page_info
from pts.report.renderers import charts
from pts.report.renderers.layout import CONTENT_WIDTH, grid_table, h1, h2, image, new_page, para
from pts.results import records
from pts.stored import fmt
from pts.stored.model import TestResult

TWO_UP = 0.88 * CONTENT_WIDTH


def hir_writes(test: TestResult) -> dict[int, list[records.HirWrite]]:
    """Per wait state its write intervals, of the state's last attempt (a resumed run redoes
    the state in flight: its lead-in starts the state afresh)."""
    out: dict[int, list[records.HirWrite]] = {}
    for r in test.recovery:
        if isinstance(r, records.HirWrite):
            if r.segment == "lead_in":
                out[r.state] = []
            out.setdefault(r.state, []).append(r)
    return out


def _last_of(test: TestResult, kind: type) -> dict[int, object]:
    found = {}
    for r in test.recovery:
        if isinstance(r, kind):
            found[getattr(r, "state", getattr(r, "group", 0))] = r
    return found


def state_names(test: TestResult):
    """Wait state number -> its name as the run recorded it (test_start `wait_state_names`,
    the spec file's wait_state_naming); a run recorded before names were recorded: WS<k>."""
    names = test.typed.wait_state_names or []
    return lambda k: names[k - 1] if 0 < k <= len(names) else f"WS{k}"


def hir(run, test: TestResult) -> list[Flowable]:
    story = steady.convergence_page(test, "IOPS")
    story += steady.window_pages(test, "IOPS")
    base = [r for r in test.recovery if isinstance(r, records.HirBaseline)]
    ss = base[-1].ss_iops if base else None
    label = baseline_label(base[-1]) if base else ""
    writes, states = hir_writes(test), _last_of(test, records.HirState)
    name = state_names(test)
    story += new_page(page_info(test, "Wait states", "Figure: IOPS vs time, all wait states"))
    story += [h1(f"{test.title}: IOPS vs time, all wait states"),
              para("One point per write interval (IOPS from fio's Unix-stamped logs); "
                   "'wait' intervals follow an idle period, 'baseline' intervals are the "
                   "return-to-baseline writes without idle. The first (lead-in) interval of "
                   "each state is left out (fio 3.33's thinktime_iotime can make it write + "
                   "idle long; a deviation gives its measured length where it was).")]
    if not writes:
        return story + [para("No write interval was recorded: the wait states did not run.")]
    t0 = min(w.start for ws in writes.values() for w in ws)
    series = {}
    for k, ws in sorted(writes.items()):
        shown = [w for w in ws if w.segment != "lead_in"]     # wait, then baseline
        series[f"{name(k)} ({ws[0].idle_s} s idle, then baseline)"] = (
            [(w.start - t0) / 60 for w in shown], [w.iops for w in shown])
    if ss is not None:
        series[label] = ([0, max(x for xs, _ in series.values()
                                                   for x in xs)], [ss, ss])
    story.append(image(charts.lines(series, "Time since the first wait state (minutes)",
                                    "IOPS", "HIR: IOPS vs time", log_y=False)))
    for k, ws in sorted(writes.items()):
        wait = [w for w in ws if w.segment == "wait"]
        back = [w for w in ws if w.segment == "baseline"]
        s0 = ws[0].start
        xs = [(w.start - s0) for w in wait + back]
        story += new_page(page_info(test, f"Wait state {name(k)}",
                                    f"Figure: IOPS per write interval, wait state {name(k)}"))
        series = {"after idle (wait)": ([w.start - s0 for w in wait], [w.iops for w in wait]),
                  "return to baseline": ([w.start - s0 for w in back], [w.iops for w in back])}
        if ss is not None and xs:
            series[label] = ([min(xs), max(xs)], [ss, ss])
        st = states.get(k)
        story += [h1(f"{test.title}: wait state {name(k)} ({ws[0].idle_s} s idle)"),
                  image(charts.lines(series, "Time since the state began (s)", "IOPS",
                                     f"{name(k)}: IOPS per write interval vs baseline",
                                     log_y=False))]
        if st is not None and st.idle_measured_s:
            lo, mean, hi = st.idle_measured_s
            story.append(para(f"Idle measured before each write (no I/O from any thread): "
                              f"{lo:.3f} .. {hi:.3f} s, mean {mean:.3f} s (planned "
                              f"{st.idle_s} s)."))
    story += new_page(page_info(test, "Wait-state table", "Table: mean IOPS per wait state"))
    rows = [[name(k), f"{s.write_s} s + {s.idle_s} s", str(s.repetitions),
             fmt.num(s.wait_iops), fmt.num(s.baseline_iops), fmt.num(s.ss_iops),
             f"{s.ratio:.2f}"] for k, s in sorted(states.items())]
    story += [h1(f"{test.title}: mean IOPS per wait state"),
              grid_table(["State", "Write + idle", "Reps", "Mean IOPS (wait)",
                          "Return to baseline", "Baseline", "Wait / baseline"], rows,
                         align_right_from=2),
              para(f"Baseline: {fmt.num(ss)} IOPS, {label}: the mean tracking IOPS of "
                   "the preconditioning's last window." if ss is not None else
                   "No preconditioning baseline was recorded.")]
    return story


def baseline_label(b: records.HirBaseline) -> str:
    """What the HIR baseline is: a steady window, or only the last preconditioning rounds."""
    window = f"rounds {b.window[0]}..{b.window[1]}" if b.window else "no window"
    if b.steady:
        return f"steady-state baseline ({window})"
    return f"baseline: preconditioning {window}, NOT steady"


def xsr(run, test: TestResult) -> list[Flowable]:
    ivs = [r for r in test.recovery if isinstance(r, records.XsrInterval)]
    latest: dict[tuple[int, int], records.XsrInterval] = {(r.group, r.interval): r for r in ivs}
    ivs = [latest[k] for k in sorted(latest)]
    groups = _last_of(test, records.XsrGroup)
    rule = str(test.typed.recovery_rule or "")
    story = new_page(page_info(test, "Throughput vs time", "Figure: TP vs time, all groups"),
                     first=False)
    story += [h1(f"{test.title} test"), para(test.status)]
    if not ivs:
        return story + [para("No interval was recorded.")]

    def by_group(metric: str, only=None):
        out = {}
        for g in sorted({r.group for r in ivs}):
            if only and g not in only:
                continue
            mine = [r for r in ivs if r.group == g]
            gr = groups.get(g)
            name = f"Group {g}" + (f" {gr.pattern.upper()} {fmt.block_size(gr.block_size)}"
                                   if gr else "")
            out[name] = ([r.end_s / 60 for r in mine], [getattr(r, metric) for r in mine])
        return out

    story.append(image(charts.lines(by_group("tp_mbps"), "Time (minutes)", "TP (MB/s)",
                                    "XSR: throughput vs time, all access groups",
                                    log_y=False)))
    for a, b in ((1, 2), (2, 3)):
        story += new_page(page_info(test, f"Transition {a} -> {b}",
                                    f"Figure: TP vs time, groups {a} and {b}"))
        story += [h1(f"{test.title}: transition group {a} -> group {b}"),
                  image(charts.lines(by_group("tp_mbps", (a, b)), "Time (minutes)",
                                     "TP (MB/s)", f"XSR: groups {a} and {b}", log_y=False))]
    story += new_page(page_info(test, "Response times", "Figure: ART and MRT vs time"))
    story += [h1(f"{test.title}: ART and MRT vs time"),
              # Two charts under the header block: 88 % width keeps them on one page.
              image(charts.lines(by_group("lat_mean_us"), "Time (minutes)", "ART (µs)",
                                 "XSR: average response time (total latency)"), TWO_UP),
              image(charts.lines(by_group("clat_max_us"), "Time (minutes)", "MRT (µs)",
                                 "XSR: maximum response time (completion latency)"), TWO_UP)]
    story += new_page(page_info(test, "Recovery table", "Table: XSR per access group"))
    rows = []
    for g, r in sorted(groups.items()):
        rec = "-" if r.recovered is None else (
            f"{r.recovery_s:,.0f} s ({r.recovery_s / 60:.1f} min)" if r.recovered
            else "never (not settled within the group)")
        rows.append([f"{g}: {r.pattern.upper()} {fmt.block_size(r.block_size)} W",
                     f"{r.seconds} s", fmt.num(r.end_tp_mbps), fmt.num(r.final_level_mbps),
                     fmt.num(r.peak_lat_mean_us), fmt.num(r.peak_clat_max_us), rec])
    story += [h1(f"{test.title}: end-of-group TP, peak ART / MRT, recovery time"),
              grid_table(["Access group", "Duration", "End TP (MB/s)", "Final level (MB/s)",
                          "Peak ART (µs)", "Peak MRT (µs)", "Recovery time"], rows,
                         align_right_from=1),
              h2("Recovery time: the suite's definition"),
              para(rule[:1].upper() + rule[1:] + ". The PTS's own definition is unconfirmed "
                   "(pts-digest §7.6); the rule and its justification are in the spec file's "
                   "[xsr] table. End TP is the group's last interval; MRT is the maximum "
                   "completion latency at fio's histogram resolution.")]
    return story
