"""The device-counters page of a test: the device_counters records (docs/results-format.md)
as a table of writes and write amplification per step, and the per-round WAF chart.

For an emulated SSD these are the emulator's FTL model counters; the page says so, because
they are a model's bookkeeping and not something measured on a drive.
"""

from __future__ import annotations

from itertools import pairwise

from reportlab.lib.units import mm
from reportlab.platypus import Flowable

from pts.report.pages.steady import page_info
from pts.report.renderers import chart_base, charts
from pts.report.renderers.layout import CONTENT_WIDTH, grid_table, h2, image, new_page, para
from pts.stored import fmt, waf
from pts.stored.model import CountersView, RunView, TestResult
from pts.stored.waf import TestWaf
from pts.tools import smartctl

EMULATOR_TITLE, GENERIC_TITLE = "Emulated SSD: FTL counters", "Device counters"
NO_VALUE = "—"   # an interval without host writes has no WAF (em dash is in WinAnsi)
HEADER = ("When", "Host data written (GB)", "NAND writes (GB)", "WAF of interval",
          "Cumulative WAF", "GC runs", "Erases", "Free blocks")
WHEN_WIDTH = 32 * mm


def build(run: RunView, test: TestResult) -> list[Flowable]:
    """The page, or nothing for a test without device_counters records."""
    if not test.counters:
        return []
    title = page_title(test.counters)
    story = new_page(page_info(test, title, f"Table and plot: {test.title} {title}"))
    story += [h2(title)] + waf_block(waf.of_test(run, test)) + latency_monitor(test.name, run)
    smart = [c for c in test.counters if c.health is not None]
    unread = [c for c in test.counters if c.error]
    if smart or unread:
        ata_scsi = any(c.source == "smartctl" for c in test.counters)
        story += [h2("Device health (ATA / SCSI SMART, smartctl)" if ata_scsi else
                     "Device health (NVMe SMART / Health Information log)")]
        if smart:
            story += [health_table(smart, SMARTCTL_ROWS if ata_scsi else HEALTH_ROWS)]
        story += [para(SMARTCTL_NOTE if ata_scsi else HEALTH_NOTE, "small")]
        if unread:
            story += unread_block(unread, len(smart))
    else:
        story += waf_chart(test, title)
    story += [counters_table(test.counters), para(explanation(test.counters), "small")]
    return story


HEALTH_ROWS = (("critical_warning", "Critical warning (bits)"),
               ("temperature_c", "Composite temperature (°C)"),
               ("data_units_written", "Data units written (512,000 B)"),
               ("data_units_read", "Data units read (512,000 B)"),
               ("media_errors", "Media and data integrity errors"),
               ("error_log_entries", "Error log entries"),
               ("percent_used", "Percentage used"),
               ("thermal_transitions", "Thermal management transitions"),
               ("warning_temp_minutes", "Minutes above warning temperature"),
               ("critical_temp_minutes", "Minutes above critical temperature"))
HEALTH_NOTE = ("Read with `nvme smart-log` at every step of the test (start, after purge, "
               "after WIPC, after each round, end). A critical warning at any step, or "
               "thermal throttling during the test, makes the test a DEVICE HEALTH FAILURE, "
               "which is not a spec result. Max is over all steps.")


SMARTCTL_ROWS = (("smart_passed", "SMART overall health passed (1) / FAILED (0)"),
                 ("temperature_c", "Temperature (°C)"),
                 ("reallocated_sectors", "Reallocated sectors / grown defects"),
                 ("pending_sectors", "Pending sectors"),
                 ("offline_uncorrectable", "Offline uncorrectable sectors"),
                 ("media_errors", "Uncorrected media errors"),
                 ("percent_used", "Percentage used"),
                 ("power_on_hours", "Power-on hours"))
SMARTCTL_NOTE = (f"Read with `{smartctl.COMMAND}` at every step of the test (start, after "
                 "purge, after WIPC, after each round, end). SMART overall health FAILED at "
                 "any step, or reallocated, pending, offline-uncorrectable sectors or "
                 "uncorrected media errors going up during the test, makes the test a DEVICE "
                 "HEALTH FAILURE, which is not a spec result. Max is over all steps.")


UNREAD_NOTE = ("The SMART log could not be read at {n} of {total} steps: those steps have no "
               "health data, and the device-health check does not cover them.")
READ_COLUMNS = " In the table above, Test start and Test end are the first and last steps read."


def unread_block(unread: list[CountersView], read: int) -> list[Flowable]:
    """The steps whose smart-log read failed, each with the error recorded (declared as a
    deviation too)."""
    note = UNREAD_NOTE.format(n=len(unread), total=read + len(unread))
    return [para(note + (READ_COLUMNS if read else ""), "small")] + \
        [para(f"{c.when}: {c.error}", "small") for c in unread]


def health_table(smart: list[CountersView], shown=HEALTH_ROWS):
    rows = []
    for key, label in shown:
        values = [c.health.get(key) for c in smart]
        known = [v for v in values if v is not None]
        first, last = values[0], values[-1]
        change = "n/a" if None in (first, last) else f"{last - first:+,}"
        rows.append([label, _count(first), _count(max(known) if known else None),
                     _count(last), change])
    widths = [CONTENT_WIDTH * 0.4] + [CONTENT_WIDTH * 0.15] * 4
    return grid_table(("Field", "Test start", "Max", "Test end", "Change"), rows, widths,
                      align_right_from=1)


def page_title(counters: tuple[CountersView, ...]) -> str:
    emulated = all(c.source == "emulator" for c in counters)
    return EMULATOR_TITLE if emulated else GENERIC_TITLE


def interval_wafs(counters: tuple[CountersView, ...]) -> list[float | None]:
    """Per record, the WAF since the record before it (None for the first: no interval)."""
    return [None] + [cur.waf_since(prev) for prev, cur in pairwise(counters)]


def counters_table(counters: tuple[CountersView, ...]):
    previous = (None,) + counters[:-1]
    rows = [[c.when, _gb(c.host_bytes), _gb(c.nand_bytes), _waf(interval, c, prev),
             _waf(c.waf, c), _count(c.gc_runs), _count(c.erases), _count(c.free_blocks)]
            for c, prev, interval in zip(counters, previous, interval_wafs(counters),
                                         strict=True)]
    other = (CONTENT_WIDTH - WHEN_WIDTH) / (len(HEADER) - 1)
    return grid_table(HEADER, rows, [WHEN_WIDTH] + [other] * (len(HEADER) - 1),
                      align_right_from=1)


def waf_chart(test: TestResult, title: str) -> list[Flowable]:
    """Interval WAF of the "after round N" rows: the FTL settling next to the IOPS
    convergence. The first round's interval starts at the row before it (after WIPC)."""
    per_round = [(c.round, waf) for c, waf in zip(test.counters, interval_wafs(test.counters),
                                                  strict=True) if c.round is not None]
    if not any(waf is not None for _, waf in per_round):
        return [para("No round has counters before and after it: no per-round write "
                     "amplification to plot.", "small")]
    png = charts.interval_waf([n for n, _ in per_round], [w for _, w in per_round],
                              test.window, f"{test.title}: write amplification per round "
                                           f"({title})")
    return [image(png, size_inches=chart_base.SHORT_SIZE_INCHES)]


def explanation(counters: tuple[CountersView, ...]) -> str:
    sizes = sorted({c.page_size for c in counters if c.page_size is not None})
    pages = f"{', '.join(f'{s:,}' for s in sizes)}-byte pages" if sizes else "pages"
    if page_title(counters) == EMULATOR_TITLE:
        what = ("These are the emulator model's internal counters, not drive measurements: "
                "cumulative since the emulator started, writes counted in ")
    else:
        what = "Counters as the device reported them, cumulative; writes counted in "
    return (f"{what}{pages}, GB decimal. WAF = NAND writes / host writes; the interval is "
            f"since the row above ({NO_VALUE}: no interval, or no host writes in it).")


def _gb(nbytes: int | None) -> str:
    return "n/a" if nbytes is None else fmt.num(nbytes / 1e9)


def _waf(value: float | None, *rows: CountersView | None) -> str:
    """n/a when a write counter it needs was not recorded; NO_VALUE when there was nothing
    to divide by (first row, or no host writes in the interval)."""
    if any(r is not None and None in (r.host_writes, r.nand_writes) for r in rows):
        return "n/a"
    return NO_VALUE if value is None else f"{value:.2f}"


def _count(value: int | None) -> str:
    return "n/a" if value is None else f"{value:,}"


def waf_block(found: TestWaf) -> list[Flowable]:
    """The test's write amplification from the drive's own media-write counter, with its
    source; "not reported by this drive" (and why) where there is none. A drive with two media
    counters (log 09h and C0h) has a line for each, each naming its log and resolution: the
    headline's first (the finest with a value), then the other's value or why not."""
    name = found.label() if found.others else found.source
    if found.source is None or found.test is None or found.value is None:
        why = found.note if found.source is None else f"{found.note} ({name})"
        return [para(f"WAF: {why}.", "small")] + unread_media(found) + life(found) + \
            other_sources(found)
    t = found.test
    fio = " is not all in the ledger (a round measured again)" if t.fio_bytes is None \
        else f": {_gb(t.fio_bytes)} GB"
    cross = "" if t.host_source == waf.HOST_FIO else f"; what the suite's fio wrote{fio}"
    text = (f"WAF {t.value:.2f} over the test ({t.start} to {t.end}): media writes "
            f"{_gb(t.media_bytes)} GB ({name}) / host writes {_gb(t.host_bytes)} GB "
            f"({t.host_source}{cross}).")
    rounds = [f"{r.round}: {r.value:.2f}" for r in found.per_round
              if r.round is not None and r.value is not None]
    if rounds:
        text += " Per round (where the media counter moved): " + ", ".join(rounds) + "."
    return [para(text, "small")] + coarse_rounds(found) + unread_media(found) + life(found) + \
        other_sources(found)


def other_sources(found: TestWaf) -> list[Flowable]:
    """A line per media source beside the headline's (pts.stored.waf: the same steps and
    host bytes), with its value, or why it has none."""
    out = []
    for other in found.others:
        t = other.test
        if other.value is not None and t is not None:
            text = (f"{other.value:.2f} over the test ({t.start} to {t.end}): media writes "
                    f"{_gb(t.media_bytes)} GB / host writes {_gb(t.host_bytes)} GB "
                    f"({t.host_source})")
        else:
            text = other.note
        unread = f" Not read at: {'; '.join(other.unread)}." if other.unread else ""
        out.append(para(f"WAF from {other.label()}: {text}.{unread}", "small"))
    return out


def life(found: TestWaf) -> list[Flowable]:
    """The drive's lifetime WAF at its first reading (its counters since manufacture)."""
    if found.lifetime is None:
        return []
    return [para(f"Lifetime WAF of the drive at {found.lifetime_at}: {found.lifetime:.3f} "
                 f"(its own media and host-write counters since manufacture; {found.source}).",
                 "small")]


def coarse_rounds(found: TestWaf) -> list[Flowable]:
    """The rounds whose media counter moved too few units for a WAF (waf.MIN_UNITS)."""
    short = [r for r in found.per_round if r.value is None and r.note]
    if not short:
        return []
    return [para(f"Per-round WAF not given for round{'s' if len(short) > 1 else ''} "
                 f"{', '.join(str(r.round) for r in short)}: {short[0].note.split(': ', 1)[1]}"
                 f" (round {short[0].round}).", "small")]


def unread_media(found: TestWaf) -> list[Flowable]:
    """The steps whose media-write log could not be read (asked again at the next step)."""
    if not found.unread:
        return []
    return [para("Media-write counter not read at: " + "; ".join(found.unread) + ".", "small")]


def latency_monitor(test: str, run: RunView) -> list[Flowable]:
    """The OCP latency monitor of the test's last step that has one, compactly."""
    found = waf.latency_monitor(run, test)
    if found is None:
        return []
    when, log = found
    parts = []
    for group, buckets in log.items():
        if isinstance(buckets, dict):
            parts.append(group + ": " + "; ".join(
                f"{b} " + " ".join(f"{k} {v:,}" for k, v in io.items())
                for b, io in buckets.items() if isinstance(io, dict)))
    return [para(f"OCP latency monitor ({when}): " + " | ".join(parts), "small")]
