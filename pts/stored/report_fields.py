"""Page 1's report fields (PTS-E 1.0 §5, common reporting requirements): Test Operator,
Auditor, Test Sponsor, Report Date, test dates, the test system (make/model, motherboard) and
the DUT's host adapter, interface and speed, form factor and media type.

Each value comes from run.json: `report_info` (what the operator gave: --operator,
--auditor, --sponsor, --report-info) and `system` (what the DUT's system said at run start:
pts.device.system_facts). A value the system reports is shown as read, with a given one
that differs beside it; a value neither read nor given is declared missing on the page and
in the warnings, never left out. The Report Date is the one value not from the run folder:
the date the PDF is rendered (`python -m pts report RUN` re-renders with a new date), or the
date of SOURCE_DATE_EPOCH when set (reproducible builds: the project's tests set it).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

from pts.stored import fmt
from pts.stored.model import RunView

CLAUSE = "PTS-E 1.0 §5"


def report_date(environ=os.environ) -> str:
    """The render date (UTC), or SOURCE_DATE_EPOCH's date, with where it comes from."""
    epoch = environ.get("SOURCE_DATE_EPOCH", "")
    if epoch.isdigit():
        day = datetime.fromtimestamp(int(epoch), UTC).strftime("%Y-%m-%d")
        return f"{day} (rendering date, fixed by SOURCE_DATE_EPOCH)"
    return f"{datetime.now(UTC).strftime('%Y-%m-%d')} (the date this report was rendered)"


def missing(what: str, how: str, why: str = "") -> str:
    return f"NOT GIVEN{f' ({why})' if why else ''}: required by {CLAUSE}; give {how}"


def _pick(read: str | None, given: str | None, key: str, source: str) -> str | None:
    """A system value as read (with a differing given one beside it), else the given one,
    else None (missing)."""
    if read and given and given != read:
        return f"{read} ({source}); given in report info: {given}"
    if read:
        return f"{read} ({source})"
    if given:
        return f"{given} (given in report info, {key})"
    return None


def _joined(*parts: str | None) -> str | None:
    found = [p for p in parts if p]
    return " ".join(found) or None


def rows(run: RunView, date: str | None = None) -> tuple[list[tuple[str, str]], list[str]]:
    """(label, value) rows for page 1 and the labels of the required fields missing."""
    info, system = run.report_info, run.system
    gaps: list[str] = []

    def need(label: str, value: str | None, how: str, why: str = "") -> tuple[str, str]:
        if value is None:
            gaps.append(label)
            return label, missing(label, how, why)
        return label, value

    out = [need("Test Operator", info.get("operator"), "--operator NAME"),
           ("Auditor", info.get("auditor") or "none named"),
           ("Test Sponsor", info.get("sponsor") or "not given (--sponsor)"),
           ("Report Date", date or report_date()),
           ("Test dates", f"{fmt.iso_utc(run.started)} to {fmt.utc(run.finished)} "
                          "(run start to the last ledger record)")]
    if not system:
        gaps.append("system and DUT facts")
        return out + [("System and DUT facts", "NOT RECORDED: run.json has no `system` "
                       f"block (a run of an older version); required by {CLAUSE}")], gaps
    dmi = system.get("dmi") or {}
    blank = "not reported by the system (DMI blank or absent)"
    out += [
        need("System make / model",
             _pick(_joined(dmi.get("sys_vendor"), dmi.get("product_name")),
                   _joined(info.get("system_make"), info.get("system_model")),
                   "system_make, system_model", "DMI sys_vendor, product_name"),
             "system_make and system_model in --report-info", blank),
        need("Motherboard",
             _pick(_joined(dmi.get("board_vendor"), dmi.get("board_name")),
                   info.get("motherboard"), "motherboard", "DMI board_vendor, board_name"),
             "motherboard in --report-info", blank),
        need("DUT host adapter", _adapter(system.get("host_adapter") or {},
                                          info.get("host_adapter")),
             "host_adapter in --report-info"),
        need("DUT interface and speed", _interface(system.get("interface") or {},
                                                   info.get("interface")),
             "interface in --report-info"),
    ]
    drive = str(system.get("drive_reports") or "the drive was not asked")
    declared = run.options.get("form_factor")      # --form-factor: the OCP IDs' form factor
    for label, key in (("DUT form factor", "form_factor"), ("DUT media type", "media_type")):
        given = info.get(key)
        value = f"{given} (given in report info, {key})" if given else None
        if key == "form_factor" and declared:          # one fact: both shown, neither lost
            said = f"{declared} (declared with --form-factor)"
            value = f"{value}; {said}" if value else said
        out.append(need(label, value, f"{key} in --report-info or --form-factor"
                        if key == "form_factor" else f"{key} in --report-info",
                        f"not reported by the drive: {drive}"))
    if info.get("notable_features"):
        out.append(("DUT notable features", str(info["notable_features"])))
    if info.get("file"):
        out.append(("Report info file", str(info["file"])))
    return out, gaps


def _adapter(a: dict, given: str | None) -> str | None:
    if a.get("none"):
        read = str(a["none"])
        return f"{read}; given in report info: {given}" if given else read
    names = _joined(a.get("vendor"), a.get("device"))
    read = f"{names} at PCI {a.get('pci_function')}" if names else None
    return _pick(read, given, "host_adapter", f"names from {a.get('names_from')}")


def _interface(i: dict, given: str | None) -> str | None:
    if not i:
        return given and f"{given} (given in report info, interface)"
    if i.get("speed"):
        return _pick(f"{i.get('kind')}, {i['speed']}", given, "interface",
                     str(i.get("source")))
    read = f"{i.get('kind')}; speed {i.get('source')}"
    return f"{read}; given in report info: {given}" if given else read


def warning(gaps: list[str]) -> list[str]:
    """The run-level warning for missing required report fields (empty list: none)."""
    if not gaps:
        return []
    return [f"Required report fields missing ({CLAUSE}): {', '.join(gaps)}. Give them with "
            "--operator NAME and/or --report-info FILE.toml (keys: pytest --help); the page "
            "1 table says which."]
