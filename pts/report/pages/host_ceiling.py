"""A test's Host Ceiling page (issue 33 §1), and the host-bound marks of its result tables.

The page: the host's ceiling measured before the test (its heaviest points run on a
RAM-backed device of the same host, same engine, same CPUs: pts.stored.host_ceiling), or
why it was not measured, and every host-bound point of the measurement window with its
figure and the ceiling it reached. The result tables (IOPS, Throughput, Latency) mark a
cell holding a host-bound window point with a dagger and list those points under the table:
a figure that may be the host's is never shown bare.
"""

from __future__ import annotations

from reportlab.lib.units import mm
from reportlab.platypus import Flowable

from pts.report.pages.steady import page_info
from pts.report.renderers.layout import CONTENT_WIDTH, grid_table, h2, kv_table, new_page, para
from pts.stored import fmt
from pts.stored import host_ceiling as stored
from pts.stored.model import RunView, TestResult

TITLE = "Host Ceiling"
HEADER = ("Ceiling job", "fio rw", "Block size", "Jobs x QD", "IOPS", "MB/s",
          "Mean latency (\u00b5s)")


def page(run: RunView, test: TestResult) -> list[Flowable]:
    """The test's Host Ceiling page; none for a test without a host_ceiling record and
    without host-bound points (a run made before issue 33)."""
    hb = stored.of_test(test)
    if hb.ceiling is None and not hb.window and not hb.outside:
        return []
    story = new_page(page_info(test, TITLE, f"Table: {test.title} {TITLE}"))
    story += [h2(f"{TITLE}: what this host drives on a RAM-backed device")]
    story += ceiling_block(hb.ceiling)
    what = "the measurement window" if hb.rounds else "the test's result" \
        if hb.unit == "points" else "each group's whole-run figure"
    story.append(h2(f"Host-bound {hb.unit} ({len(hb.window)} of {hb.window_points}: {what})"))
    if not hb.window:
        what = "point of the measurement window" if hb.unit == "points" else "group"
        story.append(para(f"None: no {what} reached the host's ceiling."
                          if hb.ceiling is not None and
                          hb.ceiling.measured else
                          "Not judged: the host's ceiling was not measured."))
    story += [para(f"{stored.MARK} {b.text()}", "small") for b in hb.window]
    if hb.outside:
        story.append(para(f"{hb.outside} more host-bound point(s) outside the measurement "
                          "window (not in the results).", "small"))
    return story


def ceiling_block(c: stored.Ceiling | None) -> list[Flowable]:
    if c is None:
        return [para("No host_ceiling record: the host's ceiling was not measured for this "
                     "test.")]
    if not c.measured:
        return [para(f"NOT MEASURED: {c.error}. Whether a figure of this test is the host's "
                     "rather than the drive's is not known.")]
    facts = [("RAM-backed device", fmt.text(c.device)), ("fio engine", c.engine),
             ("CPUs (fio cpus_allowed)", fmt.text(c.cpus) if c.cpus else "not bound"),
             ("Runtime per job", f"{fmt.text(c.seconds)} s"),
             ("Host-bound when", f"IOPS or MB/s >= {fmt.pct(c.share)} of the ceiling, or mean "
                                 f"latency within {fmt.pct(c.margin)} of the floor")]
    rows = [[j.label, fmt.text(j.rw), fmt.block_size(j.block_size),
             f"{fmt.text(j.numjobs)} x {fmt.text(j.iodepth)}", fmt.num(j.iops), fmt.num(j.mbps),
             fmt.num(j.lat_mean_us)] for j in c.jobs]
    widths = [44 * mm, 18 * mm, 20 * mm, 18 * mm]
    rest = (CONTENT_WIDTH - sum(widths)) / 3
    return [kv_table(facts), grid_table(HEADER, rows, widths + [rest] * 3, align_right_from=4),
            para("The same fio job as the test's heaviest points, run on the RAM-backed "
                 "device before the test: the most this host, engine and CPU placement "
                 "can drive. MB/s decimal; latency = fio total latency (mean).", "small")]


def marks(test: TestResult) -> dict:
    """Its result tables' cells holding host-bound window points, by (R/W mix, block size)."""
    return stored.cell_marks(test)


def cell_text(text: str, key: tuple[str, int], found: dict) -> str:
    """A result table's cell text, marked when the cell holds a host-bound window point (an
    N/A cell has no measured point, so none)."""
    return f"{text} {stored.MARK}" if key in found else text


def footnote(tests: list[TestResult]) -> list[Flowable]:
    """Under a result table: the host-bound window points of its marked cells."""
    found = [(t, b) for t in tests for b in stored.of_test(t).window if b.round is not None]
    if not found:
        return []
    many = len(tests) > 1
    return [para(f"{stored.MARK} host-bound (the figure may be the host's, not the drive's; "
                 "the cell's mean includes these points):", "small")] + \
        [para(f"- {t.title + ': ' if many else ''}{b.text()}", "small") for t, b in found]
