"""The runs list's rows and filters, whichever source feeds it: the run folders read one by
one (pts.serve.index: no results index) or the results index (pts.serve.indexed). One row
shape, one filter meaning, one order (newest first: pts.serve.index.sort_time, ties by id),
one page size, so that both sources give the same list (tests/serve/test_serve_indexed.py).

Filters (query parameters): model, serial, firmware, host (substrings, ASCII case folded:
pts.index.query.fold), test (a test the run has), verdict (compliant / not compliant), state
(running, finished, ...), from / to (YYYY-MM-DD, UTC days, inclusive, on the run's start
time), page (PAGE_ROWS rows a page)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime

from pts.index.query import COMPLIANT, NOT_COMPLIANT, TEXT_FILTERS, Filters, fold
from pts.index.rows import epoch
from pts.serve import state
from pts.serve.index import Entry, RunIndex

PAGE_ROWS = 500
FIELDS = (*TEXT_FILTERS, "test", "verdict", "state", "from", "to")
VERDICTS = (COMPLIANT, NOT_COMPLIANT)
LIST_STATES = (*state.STATES, state.ERROR)


@dataclass
class Wanted:
    """The filters asked for: as typed (`raw`, for the form), as SQL filters (`filters`), the
    state (computed per row, not stored), the page, and what was refused (`errors`)."""

    raw: dict[str, str]
    filters: Filters = field(default_factory=Filters)
    state: str = ""
    page: int = 1
    errors: list[str] = field(default_factory=list)


def wanted(params) -> Wanted:
    """The filters of a request's query parameters; a bad value is named in `errors` (the
    page says it and the filter is not applied)."""
    raw = {k: (params.get(k) or "").strip() for k in (*FIELDS, "page")}
    w = Wanted(raw)
    f = Filters(**{k: raw[k] for k in (*TEXT_FILTERS, "test")})
    if raw["verdict"] in VERDICTS:
        f = replace(f, verdict=raw["verdict"])
    elif raw["verdict"]:
        w.errors.append(f"verdict {raw['verdict']!r}: give compliant or not compliant")
    if raw["state"] in LIST_STATES:
        w.state = raw["state"]
    elif raw["state"]:
        w.errors.append(f"state {raw['state']!r}: give one of {', '.join(LIST_STATES)}")
    since, to = (_day(raw[k], k, w.errors) for k in ("from", "to"))
    f = replace(f, since=since, before=None if to is None else to + 86400.0)
    if raw["page"]:
        if raw["page"].isdigit() and int(raw["page"]) >= 1:
            w.page = int(raw["page"])
        else:
            w.errors.append(f"page {raw['page']!r}: give a page number, 1 or more")
    w.filters = f
    return w


def _day(text: str, name: str, errors: list[str]) -> float | None:
    """Midnight UTC of a YYYY-MM-DD day, as Unix seconds."""
    if not text:
        return None
    try:
        day = date.fromisoformat(text)
    except ValueError:
        errors.append(f"{name} {text!r}: give a day as YYYY-MM-DD (UTC)")
        return None
    return datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()


@dataclass
class Listing:
    rows: list[dict]          # this page's rows
    matching: int             # rows passing the filters, every page
    total: int                # folders listed, unfiltered
    tests: list[str]          # the test names present (the form's choices)
    page: int
    pages: int


def pages_of(matching: int) -> int:
    return max(1, -(-matching // PAGE_ROWS))


def row(entry: Entry, stale_after: float, index: RunIndex) -> dict:
    """What the runs list shows of a folder read from its files (and filters on)."""
    run = entry.view
    out = {"id": entry.id, "kind": entry.kind, "error": entry.error,
           "state": state.run_state(entry, stale_after), "tests": [], "model": "",
           "serial": "", "firmware": "", "host": "", "spec": "", "verdict": "",
           "compliant": None, "deviations": "", "started": "", "started_at": None, "ended": ""}
    if run is not None:
        host = run.platform.get("hostname")
        out.update(model=run.device.model, serial=run.device.serial,
                   firmware=run.device.firmware, host="" if host is None else str(host),
                   spec=run.spec_title, tests=[t.name for t in run.tests],
                   verdict=run.verdict.text, compliant=run.verdict.compliant,
                   deviations=len(run.deviations), started=run.started or "",
                   started_at=epoch(run.started),
                   ended=when(run.finished) if out["state"] != state.RUNNING else "")
    elif entry.identity is not None:          # its ledger cannot be read: run.json's word
        i = entry.identity
        out.update(model=i["model"], serial=i["serial"], firmware=i["firmware"],
                   host=i["host"] or "", spec=i["spec"], started=i["started"] or "",
                   started_at=epoch(i["started"]))
    elif entry.kind == "session":
        devices = entry.session.get("devices") or []
        out.update(model=", ".join(str(d.get("label", "?")) for d in devices
                                   if isinstance(d, dict)), started=entry.folder.name,
                   spec=f"session of {len(devices)} devices")
    return out


def matches(r: dict, w: Wanted) -> bool:
    """The filters `w` applied to a row, as pts.index.query.where applies them in SQL."""
    f = w.filters
    for name in TEXT_FILTERS:
        if getattr(f, name) and fold(getattr(f, name)) not in fold(r[name] or ""):
            return False
    if f.test and f.test not in r["tests"]:
        return False
    if f.verdict and (r["compliant"] is None or r["compliant"] != (f.verdict == COMPLIANT)):
        return False
    if (f.since is not None or f.before is not None) and r["started_at"] is None:
        return False
    if f.since is not None and r["started_at"] < f.since:
        return False
    if f.before is not None and r["started_at"] >= f.before:
        return False
    return not w.state or w.state == r["state"]


def from_folders(index: RunIndex, stale_after: float, w: Wanted) -> Listing:
    """Every folder read (only the changed ones again), filtered and paged here."""
    rows = [row(e, stale_after, index) for e in index.refresh()]
    shown = [r for r in rows if matches(r, w)]
    start = (w.page - 1) * PAGE_ROWS
    return Listing(shown[start:start + PAGE_ROWS], len(shown), len(rows),
                   sorted({t for r in rows for t in r["tests"]}), w.page, pages_of(len(shown)))


def when(t: float | None) -> str:
    return "" if t is None else datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


def short(text: str) -> str:
    """A time as the list shows it (the full text in its title): 2026-11-21 12:00, in UTC
    when the text says its offset."""
    try:
        t = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return text
    return (t.astimezone(UTC) if t.tzinfo else t).strftime("%Y-%m-%d %H:%M")

