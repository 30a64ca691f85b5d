"""Write amplification per test, from the drive's own media-write counter (the device_counters
records' `media_bytes`, one set of keys for every source: pts.device.media_writes) over the
host writes of the same interval.

  WAF = Δ media bytes / host bytes, over the steps from "after purge" (the purge's own
  media activity is not the workload's) to the test's last step with a media reading; per
  round, over the interval that ends at "after round N", where the media counter moved.

Host bytes: the drive's own host-write counter (host_writes x page_size: SMART Data Units
Written, the emulator's host pages) read at the same steps as the media counter, where it
is recorded; else what the suite's fio wrote. Both are shown. The suite's fio bytes alone
are not the denominator where the drive counts: a round measured again (a `round_mode`
record) keeps only the second attempt's points, and the demo on the emulated SSD measured
them 39-55 % below the drive's count in such rounds (equal in every other round).

Resolution: a drive's counters move in whole units (log 09h's Media Units Written in 10^9
bytes, the SMART log's Data Units Written in 512,000 bytes: `media_unit`, `page_size`), and
each reading drops the part of a unit not yet complete, so the difference of two readings
is off by up to one unit. An interval's WAF is given only when each counter it divides moved
by at least MIN_UNITS units (then each is known to within 1 %); otherwise the interval says
"not given" with the writes and the resolution, instead of a ratio of a few units (a 3 GB
interval read at 1 GB could print anything from 0.5 to 2.0).

Both NVMe logs: a drive that answers log 09h and log C0h (QEMU 10's controller in a
subsystem) has records whose media keys come from 09h (Media Units Written, 10^9 bytes) with
the C0h page beside them (`ocp_c0`, pts.device.media_writes.c0_summary: Physical Media Units
Written, bytes). The WAF is computed from each media source the records carry (`SOURCES`:
the record's own media keys, and C0h's figure), by the same function over the same records,
so over the same steps and the same host bytes. The headline (TestWaf.value, page 1, the
export's `value`) is the finest-resolution source whose value is given; the others are kept
beside it (TestWaf.others) with their own value or note.

The suite's fio bytes of an interval: the test's records between its two device_counters
records that wrote (WRITERS): their bytes field (wipc/wsat_result/prewrite `bytes_written`,
a point's `write_bytes`), else the write io_bytes of their fio JSON (`raw`, each file once:
the WSAT's purge probe is its first sample); None (not known) where a writer's bytes cannot
be found or the interval holds writes no record counts (UNCOUNTED).
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pts.device import media_writes
from pts.procedure.round_measure import LEARNING
from pts.results import records
from pts.stored.model import RunView, TestResult
from pts.tools import nvme
from pts.tools.fio import FioOutputError, parse_output
from pts.tools.fio_result import summarize

WRITERS = ("wipc", "point", "fob_point", "purge_probe", "wsat_result", "prewrite", "hir_state")
# writes the ledger holds no byte count or fio JSON for: XSR intervals, and the first
# attempt of a round measured again (round_mode)
UNCOUNTED = ("xsr_interval", "round_mode")
BYTES_KEYS = ("write_bytes", "bytes_written")
NOT_REPORTED = "not reported by this drive"
NOT_RECORDED = "no device counters were recorded for this test"
HOST_DRIVE, HOST_FIO = "the drive's host-write counter", "the suite's fio (ledger)"
# Fewest units a counter must move over an interval for its WAF: a difference of two
# truncated readings is off by under one unit, so under 1 % from 100 units on.
MIN_UNITS = 100
# a record of the endurance log written before its unit was fixed (media_unit absent): its
# media_bytes were units x 512,000 (the SMART log's unit), not units x 10^9
OLD_ENDURANCE_UNIT = 512_000


@dataclass(frozen=True)
class IntervalWaf:
    value: float | None
    media_bytes: int
    host_bytes: int | None          # the denominator: drive_host_bytes, else fio_bytes
    host_source: str                # HOST_DRIVE or HOST_FIO
    fio_bytes: int | None           # what the suite's fio wrote (ledger); None: not known
    drive_host_bytes: int | None    # the drive's own host-write counter
    start: str                      # the steps it spans ("after purge" .. "test end")
    end: str
    round: int | None = None
    note: str = ""                  # why value is None though both moved (too few units)


@dataclass(frozen=True)
class TestWaf:
    source: str | None              # None: no media-write counter
    note: str                       # why there is no value ("" when there is one)
    test: IntervalWaf | None = None
    per_round: tuple[IntervalWaf, ...] = field(default=())
    unread: tuple[str, ...] = field(default=())   # "step: why" where the counter was not read
    lifetime: float | None = None   # the drive's WAF since manufacture at its first reading
    lifetime_at: str = ""           # that reading's step
    unit: int | None = None         # bytes per count of the media counter (its resolution)
    others: tuple[TestWaf, ...] = field(default=())   # the other media sources, same steps

    @property
    def value(self) -> float | None:
        return self.test.value if self.test else None

    @property
    def sources(self) -> tuple[TestWaf, ...]:
        """Every media source's WAF: the headline first, then the others."""
        return (self, *self.others)

    def label(self) -> str:
        """The source and its resolution, for the page: "nvme endurance-log: Media Units
        Written, 1 GB resolution"."""
        what = self.source or "no media-write counter"
        return what if self.unit is None else f"{what}, {resolution(self.unit)} resolution"

    def as_dict(self) -> dict:
        """The export's `waf` block: the headline's figures, and `sources`, each source's."""
        return self._figures() | {"sources": [w._figures() | {
            "unit": w.unit, "headline": w is self} for w in self.sources]}

    def _figures(self) -> dict:
        t = self.test
        return {"value": self.value, "media_bytes": t and t.media_bytes,
                "host_bytes": t and t.host_bytes, "host_source": t and t.host_source,
                "fio_bytes": t and t.fio_bytes, "drive_host_bytes": t and t.drive_host_bytes,
                "source": self.source, "note": self.note, "from": t and t.start,
                "to": t and t.end, "per_round": [asdict(r) for r in self.per_round],
                "unread": list(self.unread), "lifetime": self.lifetime,
                "lifetime_at": self.lifetime_at or None}


def of_test(run: RunView, test: TestResult) -> TestWaf:
    return from_records(list(test.records), run.folder)


def media(counters: dict) -> dict:
    """A record's media keys; an emulator record written before they existed (its FTL's
    nand_writes only, e.g. the reference run) reads through media_writes.emulator; an
    endurance-log record written before its unit was fixed (no media_unit) is corrected."""
    if counters.get("media_source") == media_writes.ENDURANCE and "media_unit" not in counters \
            and isinstance(counters.get("media_bytes"), int):
        units = counters["media_bytes"] // OLD_ENDURANCE_UNIT
        return counters | {"media_bytes": units * nvme.ENDURANCE_UNIT_BYTES,
                           "media_unit": nvme.ENDURANCE_UNIT_BYTES}
    if "media_bytes" in counters or "nand_writes" not in counters:
        return counters
    return counters | media_writes.emulator(counters)


def c0_media(counters: dict) -> dict:
    """A record's counters with C0h's Physical Media Units Written (its `ocp_c0` page, 1-byte
    unit) as the media keys; "not read at this step" where the record has no C0h figure."""
    page = counters.get(media_writes.OCP_C0)
    found = page.get("fields", {}).get("physical_media_units_written") \
        if isinstance(page, dict) else None
    if isinstance(found, int):
        return counters | media_writes.keys(found, media_writes.OCP, unit=1)
    if isinstance(page, dict):
        return counters | media_writes.keys(None, None, "the C0h page gives no Physical Media "
                                            "Units Written")
    why = "no C0h page recorded at this step"
    own = str(counters.get("media_note") or "")
    if own.startswith(media_writes.NOT_READ):      # the step's read failed: say how
        why = own.removeprefix(media_writes.NOT_READ).lstrip(": ")
    return counters | media_writes.keys(None, None, why, label=media_writes.NOT_READ)


# Where a media source's keys come from, in a record's counters: the record's own media keys,
# and the C0h page kept beside them (media_writes.OCP_C0)
SOURCES = {"own": media, media_writes.OCP_C0: c0_media}


def from_records(mine: list[records.Record], folder: Path) -> TestWaf:
    """The WAF of one test's records (ledger order), from each media source they carry
    (SOURCES): the record's own, and C0h's where its page was recorded and is not already
    the own source. The headline is the finest-resolution source with a value (else the
    record's own); the others ride along in TestWaf.others."""
    own = of_source(mine, folder, "own")
    c0_kept = any(isinstance(r, records.DeviceCounters) and isinstance(r.counters, dict)
                  and isinstance(r.counters.get(media_writes.OCP_C0), dict) for r in mine)
    if not c0_kept or own.source == media_writes.OCP:
        return own
    found = (own, of_source(mine, folder, media_writes.OCP_C0))
    given = [w for w in found if w.value is not None]
    head = min(given, key=lambda w: w.unit or float("inf")) if given else own
    return dataclasses.replace(head, others=tuple(w for w in found if w is not head))


def of_source(mine: list[records.Record], folder: Path, key: str) -> TestWaf:
    """The WAF of one test's records from one media source (SOURCES[key])."""
    view = SOURCES[key]
    mine = [dataclasses.replace(r, counters=view(media(r.counters)))
            if isinstance(r, records.DeviceCounters) and isinstance(r.counters, dict) else r
            for r in mine]
    steps = [i for i, r in enumerate(mine) if isinstance(r, records.DeviceCounters)
             and isinstance(r.counters, dict) and isinstance(r.counters.get("media_bytes"), int)]
    if not steps:
        read = [r.counters for r in mine
                if isinstance(r, records.DeviceCounters) and isinstance(r.counters, dict)]
        if not read:
            return TestWaf(None, NOT_RECORDED)
        return TestWaf(None, next((n for c in read if (n := c.get("media_note"))), NOT_REPORTED))
    source = mine[steps[0]].counters.get("media_source")
    steps = [i for i in steps if mine[i].counters.get("media_source") == source]
    purged = [i for i in steps if mine[i].when == "after purge"]
    first = purged[0] if purged else steps[0]
    whole = _interval(mine, first, steps[-1], folder) if steps[-1] > first else None
    rounds = tuple(w for a, b in zip(steps, steps[1:], strict=False)
                   if mine[b].round is not None and b > first
                   and (w := _interval(mine, a, b, folder)).media_bytes > 0)
    note = "" if whole and whole.value is not None else _why(whole)
    unread = tuple(f"{r.when}: {n}" for r in mine if isinstance(r, records.DeviceCounters)
                   and isinstance(r.counters, dict) and r.counters.get("media_bytes") is None
                   and str(n := r.counters.get("media_note") or "").startswith(
                       media_writes.NOT_READ))
    # the emulator's counters start with the emulator, not with a drive: no lifetime figure
    life = None if source == media_writes.EMULATOR else lifetime(mine[steps[0]].counters)
    return TestWaf(source, note, whole, rounds, unread, life,
                   mine[steps[0]].when if life is not None else "",
                   media_writes.unit_of(mine[steps[0]].counters))


def _interval(mine, a: int, b: int, folder: Path) -> IntervalWaf:
    start, end = mine[a], mine[b]
    media = end.counters["media_bytes"] - start.counters["media_bytes"]
    fio = host_bytes(mine[a + 1:b], folder)
    ends = [_drive_host(r.counters) for r in (start, end)]
    drive = None if None in ends else ends[1] - ends[0]
    host, by = (drive, HOST_DRIVE) if drive is not None else (fio, HOST_FIO)
    value = media / host if host and host > 0 and media >= 0 else None
    host_unit = end.counters.get("page_size") if by == HOST_DRIVE else 1
    note = "" if value is None else coarse(media, media_writes.unit_of(end.counters),
                                           host, host_unit)
    return IntervalWaf(None if note else value, media, host, by, fio, drive, start.when,
                       end.when, end.round, note)


def coarse(media: int, media_unit: int | None, host: int, host_unit) -> str:
    """Why an interval's WAF is not given ("" when it is): a counter moved by fewer than
    MIN_UNITS of its units, with the writes and the resolution."""
    short = [(what, unit) for what, moved, unit in (("media", media, media_unit),
                                                    ("host", host, host_unit))
             if isinstance(unit, int) and unit > 1 and moved < MIN_UNITS * unit]
    if not short:
        return ""
    at = " and ".join(f"the {what} counter at {resolution(unit)}" for what, unit in short)
    return (f"not given: {_gb(host)} GB of host writes and {_gb(media)} GB of media writes "
            f"between the readings, {at} resolution: under {MIN_UNITS} units (each reading "
            f"drops the part of a unit not yet complete, so under {MIN_UNITS} units the "
            "WAF is uncertain by more than 1 %)")


def resolution(unit: int) -> str:
    """A counter's unit for the page: "1 GB", "512,000 B", "33,554,432 B"."""
    return f"{unit // 10**9:,} GB" if unit % 10**9 == 0 else f"{unit:,} B"


def _gb(nbytes: int) -> str:
    return f"{nbytes / 1e9:,.3g}" if nbytes < 1e12 else f"{nbytes / 1e9:,.0f}"


def host_bytes(between: list[records.Record], folder: Path) -> int | None:
    """What the suite's fio wrote in these records; None if a writer's bytes are unknown."""
    by_raw: dict[str, int] = {}
    total = 0
    for rec in between:
        if rec.TYPE in UNCOUNTED and not _learning(rec):
            return None
        if rec.TYPE not in WRITERS or getattr(rec, "na", False):
            continue
        raw, count = _field(rec, "raw"), next((_field(rec, k) for k in BYTES_KEYS
                                               if isinstance(_field(rec, k), int | float)), None)
        if count is None:
            count = _raw_write_bytes(folder, raw)
            if count is None:
                return None
        if isinstance(raw, str) and raw:
            by_raw[raw] = max(by_raw.get(raw, 0), int(count))
        else:
            total += int(count)
    return total + sum(by_raw.values())


def _learning(rec: records.Record) -> bool:
    """A first round measured stonewalled to learn the drains: nothing measured twice."""
    return isinstance(rec, records.RoundMode) and LEARNING in (rec.reason or "")


def _field(rec: records.Record, name: str):
    """A point's measured field, or another record's attribute."""
    return rec.get(name) if isinstance(rec, records.Point) else getattr(rec, name, None)


def _raw_write_bytes(folder: Path, raw) -> int | None:
    if not isinstance(raw, str) or not raw:
        return None
    try:
        return summarize(parse_output((folder / raw).read_text(encoding="utf-8"))).write.io_bytes
    except (OSError, UnicodeDecodeError, FioOutputError, KeyError, TypeError, ValueError):
        return None


def _drive_host(counters: dict) -> int | None:
    pages, size = counters.get("host_writes"), counters.get("page_size")
    return pages * size if isinstance(pages, int) and isinstance(size, int) else None


def _why(whole: IntervalWaf | None) -> str:
    if whole is None:
        return "one media-write reading only: no interval to measure"
    if whole.note:
        return whole.note
    if whole.host_bytes is None:
        return ("no host-write counter, and the host writes of the test are not all in the "
                "ledger")
    if whole.media_bytes < 0:
        return "the media-write counter went backwards (the drive or emulator restarted)"
    return "no host writes in the test"


def lifetime(counters: dict) -> float | None:
    """A drive's WAF since it was made, from one reading of its cumulative counters (media
    bytes / host bytes: the drive's own host-write counter); None where either is not given,
    or moved by too few units to mean anything (coarse)."""
    counters = media(counters)
    found, host = counters.get("media_bytes"), _drive_host(counters)
    if not isinstance(found, int) or not host:
        return None
    if coarse(found, media_writes.unit_of(counters), host, counters.get("page_size")):
        return None
    return found / host


def latency_monitor(run: RunView, test: str) -> tuple[str, dict] | None:
    """(step, the OCP latency monitor log) of the test's last step that recorded one."""
    found = [(r.when, r.counters["latency_monitor"])
             for r in run.records_of(records.DeviceCounters) if r.test == test
             and isinstance(r.counters, dict) and isinstance(r.counters.get("latency_monitor"),
                                                            dict)]
    return found[-1] if found else None
