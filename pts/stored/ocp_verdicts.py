"""Verdicts on the OCP Datacenter NVMe SSD requirements (pts.config.ocp_requirements) from
what a stored run recorded (here, below every reader of a stored run: `qualify --ocp`, the
export): PASS, FAIL or NOT CHECKED, each with its reason and its evidence
(the log, the step it was read at, the figure, the spec's line). Stored data only.

What a run stores that these verdicts read (the ledger, pts/results/records.py):
  - device_counters records of source "smart-log" (NVMe log 02h at each step: test start,
    after purge, after WIPC, after round N, test end), with the C0h page beside them (`ocp_c0`,
    pts.device.media_writes.read_c0: version, GUID, every field; `source` "bytes": decoded
    from the page's bytes by the spec's table, nvme-cli's JSON a cross-check; "nvme-cli JSON":
    only what nvme-cli printed, so a field it did not print is NOT CHECKED, never FAILed);
  - purge records: the command (nvme format --ses=N / nvme sanitize --sanact=N) and its
    wall time in seconds (pts.conditioning.purge_nvme).
A run on a loop device or the emulated SSD has no NVMe counters: every row that needs them
is NOT CHECKED with that reason. A requirement is never passed by default: no data, no PASS.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from pts.conditioning.purge_nvme import POLL_S
from pts.config import ocp_requirements as ocp
from pts.config.ocp_log_c0 import FIELDS as C0_FIELDS
from pts.device import media_writes
from pts.stored.model import RunView
from pts.stored.ocp_purges import (
    counters_after,
    counters_before,
    kinds_text,
    purge_kind,
    purges_text,
)
from pts.stored.ocp_stored import FAIL, NOT_CHECKED, PASS, Result, Stored, decrease, step

# A Format's recorded seconds also hold nvme-cli's start and exit around the drive's
# (pts.conditioning.purge_nvme._format_plan): a time up to this much over a limit
# is not called a failure (a choice of this suite, not a spec value).
FORMAT_OVERHEAD_S = 1.0
# counters of log 02h and C0h that a purge must not reset (STD-LOG-23) nor a run decrease
KEPT_02H = ("data_units_written", "data_units_read", "media_errors", "error_log_entries",
            "percent_used")
KEPT_C0 = ("physical_media_units_written", "physical_media_units_read")
# SLOG-2 (both versions): a counter that exceeds its field saturates and reads all F's, the
# same value a field the drive does not support reads. For C0h's counters of at most 4 bytes
# (the widths in pts.config.ocp_log_c0.FIELDS) saturation is within a drive's reach (255
# thermal throttling events; 2^32 erases or errors); a wider counter cannot saturate in a
# drive's life (2^56 and more), so its all ones are read as not supported.
SMALL_COUNTERS = {f.name for f in C0_FIELDS if f.size <= 4} & {
    "end_to_end_detected_errors", "end_to_end_corrected_errors", "max_user_data_erase_count",
    "min_user_data_erase_count", "thermal_throttling_events", "incomplete_shutdowns"}


@dataclass(frozen=True)
class OcpVerdict:
    requirement: ocp.OcpRequirement
    verdict: str                      # PASS, FAIL, NOT_CHECKED
    reason: str
    evidence: tuple[str, ...] = ()
    readings: tuple[str, ...] = ()    # the readings (unconfirmed values) the verdict rests on

    def as_dict(self) -> dict:
        r = self.requirement
        return {"version": r.version, "id": r.id, "subject": r.subject, "verdict": self.verdict,
                "reason": self.reason, "evidence": list(self.evidence),
                "readings": list(self.readings), "spec_line": r.line,
                "spec_locator": r.locator, "spec_text": ocp.SPEC_TEXT[r.version]}


def judge_all(run: RunView, version: str) -> list[OcpVerdict]:
    """One verdict per requirement of the version's table, in its order."""
    stored = Stored.of(run)
    return [judge(stored, req) for req in ocp.requirements(version)]


@dataclass(frozen=True)
class Summary:
    """The newest tabulated version's verdicts on a run, in table order, as its readers show
    them (the report's page, the dashboard's run page)."""
    version: str
    verdicts: list[OcpVerdict]

    def of(self, *words: str) -> list[OcpVerdict]:
        return [v for v in self.verdicts if v.verdict in words]

    @property
    def counts(self) -> str:
        return ", ".join(f"{len(self.of(w))} {w}" for w in (PASS, FAIL, NOT_CHECKED))

    @property
    def spec_text(self) -> str:
        return ocp.SPEC_TEXT[self.version]


def summary(run: RunView) -> Summary | None:
    """None for a run on a device without NVMe logs (loop, the emulated SSD, SATA / SAS)."""
    if run.device.transport != "nvme" or run.device.emulated:
        return None
    return Summary(ocp.VERSIONS[-1], judge_all(run, ocp.VERSIONS[-1]))


def judge(stored: Stored, req: ocp.OcpRequirement) -> OcpVerdict:
    readings = tuple(f"{x.status}: {x.text}" for x in req.readings)
    if req.check is None:
        evidence = _endud3_evidence(stored) if req.id == "ENDUD-3" else ()
        return OcpVerdict(req, NOT_CHECKED, req.not_checked, evidence)
    verdict, reason, evidence = CHECKS[req.check](stored, req)
    if req.check == ocp.PURGE_TIME:       # only the readings of the purges judged
        kinds = {k[0] for p in stored.purges if (k := purge_kind(p)) in req.limit.purges}
        readings = tuple(f"{x.status}: {x.text}" for x in req.readings
                         if not x.applies_to or x.applies_to in kinds)
    return OcpVerdict(req, verdict, reason, tuple(evidence), readings)


def _on_c0_page(check: Callable) -> Callable[[Stored, ocp.OcpRequirement], Result]:
    """A check judged on the first C0h page the run read (check(stored, req, rec, page));
    NOT CHECKED, saying why, when the run read none."""
    def judged(stored: Stored, req: ocp.OcpRequirement) -> Result:
        if not stored.pages:
            return NOT_CHECKED, stored.no_c0(), []
        rec, page = stored.pages[0]
        return check(stored, req, rec, page)
    return judged


GIVEN, ALL_ONES, LATER, UNPRINTED = "given", "all ones", "later", "not printed"


def _given(page: dict, name: str, all_ones_defined: bool = False, tool: str = "nvme-cli"
           ) -> tuple[int | str | None, str, str]:
    """(value, evidence text, kind) of a C0h field of a stored page. A page read as bytes
    holds every field of its version (`all_ones` / `not_given` name the all-ones and the
    later ones); a page from nvme-cli's JSON only those nvme-cli printed: a field it did not
    print is UNPRINTED, which says nothing of the drive. Runs recorded before the bytes were
    read spell `all_ones` / `not_given` as `not_supported` / `not_in_version`."""
    if name in page.get("all_ones", page.get("not_supported", ())):
        return None, f"{name}: all ones" + ("" if all_ones_defined else
                                            " (not supported)"), ALL_ONES
    if name in page.get("not_given", page.get("not_in_version", ())):
        return None, f"{name}: not in log page version {page['version']}", LATER
    value = page["fields"].get(name)
    if value is not None:
        return value, f"{name} = {value:,}" if isinstance(value, int) else \
            f"{name} = {value!r}", GIVEN
    return None, f"{name}: not printed by {tool}", UNPRINTED


def tool_of(stored: Stored) -> str:
    """nvme-cli and its version as the run recorded them ("nvme-cli 2.3")."""
    found = re.search(r"\d+(?:\.\d+)+", str(stored.run.tools.get("nvme-cli", "")))
    return f"nvme-cli {found[0]}" if found else "nvme-cli"


def _source(page: dict) -> str:
    """Where a stored page's fields came from, for the evidence."""
    if page.get("source") == media_writes.C0_BYTES:
        return "read as bytes"
    why = page.get("bytes_error")
    return "from nvme-cli's JSON" + (f" (bytes not read: {why})" if why else "")


def _differences(page: dict, names) -> list[str]:
    """nvme-cli's JSON against the bytes, where they differ on `names`."""
    found = page.get("cross_check")
    if not isinstance(found, list):
        return []
    mine = [d for d in found if d.split(":")[0] in names]
    return [f"nvme-cli's JSON differs from the bytes: {'; '.join(mine)}"] if mine else []


@_on_c0_page
def c0_field(stored: Stored, req: ocp.OcpRequirement, rec, page: dict) -> Result:
    tool = tool_of(stored)
    found = [_given(page, name, bool(req.all_ones), tool) for name in req.fields]
    evidence = [f"C0h log page version {page['version']} at {step(rec)} ({_source(page)}): "
                + "; ".join(text for _, text, _ in found)] \
        + _differences(page, req.fields)
    missing = [text for _, text, kind in found if kind in (ALL_ONES, LATER)]
    kinds = dict(zip(req.fields, (kind for _, _, kind in found), strict=True))
    all_ones = [name for name, kind in kinds.items() if kind == ALL_ONES]
    unprinted = [name for name, kind in kinds.items() if kind == UNPRINTED]
    if missing and req.all_ones and len(all_ones) == len(req.fields):
        return PASS, req.all_ones, evidence
    if missing and all_ones and len(all_ones) == len(missing) \
            and set(all_ones) <= SMALL_COUNTERS:
        return NOT_CHECKED, (f"{', '.join(all_ones)}: all ones, which is either a saturated "
                             "counter (SLOG-2: a counter that exceeds its field reads all F's) "
                             "or a field the drive does not support; the page does not tell "
                             "them apart"), evidence
    if missing:
        return FAIL, f"the drive does not give {req.subject} ({'; '.join(missing)})", evidence
    if unprinted:      # nvme-cli did not print it: not a field the drive lacks
        return NOT_CHECKED, (f"{tool} does not print {', '.join(unprinted)}; read the page "
                             "as bytes"), evidence
    for name in set(req.fields) & set(KEPT_C0):
        drop = decrease(stored.pages, lambda p, n=name: p["fields"].get(n))
        if drop:
            return FAIL, f"{name} decreased: {drop}", evidence
    return PASS, f"C0h gives {req.subject} (its value is not judged)", evidence


def _c0_value(key: str, label: str, required: dict) -> Callable:
    """The page's `key` equal to the version's value in `required` ({version: (value,
    status, source)}): SMART-27's log page version, SMART-28's GUID."""
    @_on_c0_page
    def check(stored: Stored, req: ocp.OcpRequirement, rec, page: dict) -> Result:
        want, _, source = required[req.version]
        evidence = [f"C0h at {step(rec)}: {label} {page[key]}", f"required: {want} ({source})",
                    *_differences(page, (label,))]
        if page[key] == want:
            return PASS, f"{label} {want}", evidence
        return FAIL, f"{label} {page[key]}, not {want}", evidence
    return check


c0_version = _c0_value("version", "log page version", ocp.C0_LOG_VERSION)
c0_guid = _c0_value("guid", "log page GUID", ocp.C0_GUID_VALUE)


@_on_c0_page
def c0_dssd(stored: Stored, req: ocp.OcpRequirement, rec, page: dict) -> Result:
    want, source = ocp.DSSD_VERSION[req.version]
    found = {name: page["fields"].get(name) for name in want}
    shown = ", ".join(f"{k} {v}" for k, v in found.items())
    evidence = [f"C0h log page version {page['version']} at {step(rec)}: {shown}",
                "required: " + ", ".join(f"{k} {v}" for k, v in want.items())
                + f" ({source})"]
    if any(v is None for v in found.values()):
        return FAIL, (f"the page (log page version {page['version']}) gives no DSSD "
                      "specification version"), evidence
    if found != want:
        return FAIL, (f"declares DSSD {found['major_version']}.{found['minor_version']}."
                      f"{found['point_version']} (errata {found['errata_version']}), not "
                      f"{req.version}"), evidence
    return PASS, f"declares DSSD {req.version}", evidence


def nuse_after_format(stored: Stored, req: ocp.OcpRequirement) -> Result:
    formats = [p for p in stored.purges if purge_kind(p) == ocp.FORMAT_UDE]
    if not stored.read:
        return NOT_CHECKED, stored.no_counters(), []
    if not formats:
        return NOT_CHECKED, ("no Format SES=1 (user data erase) ran in this run (purges: "
                             f"{purges_text(stored.purges)})"), []
    evidence, values = [], []
    for p in formats:
        after = counters_after(stored.ordered, p)
        page = after.counters.get(media_writes.OCP_C0) if after is not None and \
            isinstance(after.counters, dict) else None
        if page is None:
            evidence.append(f"{p.test}: no C0h page read after the Format")
            continue
        value, text, _ = _given(page, "nuse", tool=tool_of(stored))
        evidence.append(f"C0h at {step(after)}, after `{' '.join(p.command)}`: {text}")
        if value is not None:
            values.append(value)
    if not values:
        return NOT_CHECKED, "no NUSE read after a Format SES=1", evidence
    if any(values):
        return FAIL, f"NUSE {max(values):,} blocks after a Format SES=1, not 0", evidence
    return PASS, f"NUSE 0 after each of {len(values)} Format SES=1", evidence


def purge_time(stored: Stored, req: ocp.OcpRequirement) -> Result:
    limit = req.limit
    mine = [p for p in stored.purges if purge_kind(p) in limit.purges]
    if not mine:
        return NOT_CHECKED, (f"no {kinds_text(limit.purges)} ran in this run (purges: "
                             f"{purges_text(stored.purges)})"), []
    capacity = stored.run.device.capacity_bytes
    if limit.per_tb and not capacity:
        return NOT_CHECKED, "the run does not record the device's capacity", []
    seconds = limit.seconds * (capacity / 1e12 if limit.per_tb else 1)
    how = (f"{limit.seconds:g} s/TB x {capacity / 1e12:.3f} TB = {seconds:.1f} s"
           if limit.per_tb else f"{seconds:g} s")
    verdicts, evidence = [], []
    for p in mine:
        slack = POLL_S if purge_kind(p)[0] == "sanitize" else FORMAT_OVERHEAD_S
        if p.seconds is None:
            verdicts.append(NOT_CHECKED)
            evidence.append(f"{p.test}: {p.method}: no time recorded")
            continue
        v = PASS if p.seconds <= seconds else FAIL if p.seconds - slack > seconds else \
            NOT_CHECKED
        verdicts.append(v)
        evidence.append(f"{p.test}: `{' '.join(p.command)}` took {p.seconds:.1f} s: {v}")
    kinds = {purge_kind(p)[0] for p in mine}
    evidence.append(f"limit {how}; a recorded time is up to "
                    + " / ".join(f"{POLL_S if k == 'sanitize' else FORMAT_OVERHEAD_S:g} s ({k})"
                                 for k in sorted(kinds))
                    + " over the drive's: over the limit by less is NOT CHECKED")
    if FAIL in verdicts:
        return FAIL, f"a {kinds_text(limit.purges)} took longer than {how}", evidence
    if NOT_CHECKED in verdicts:
        return NOT_CHECKED, ("over the limit by less than the recorded time's resolution, "
                             "or not timed"), evidence
    return PASS, f"{len(mine)} purge(s) within {how}", evidence


def smart_log_read(stored: Stored, req: ocp.OcpRequirement) -> Result:
    if stored.read:
        return PASS, f"log 02h read at {len(stored.read)} steps", \
            [f"nvme smart-log at {step(stored.read[0])}: data_units_written "
             f"{stored.read[0].counters.get('data_units_written')}"]
    if not stored.smart:
        return NOT_CHECKED, stored.no_counters(), []
    errors = [f"{step(r)}: {r.error}" for r in stored.smart]
    if all(media_writes.is_refusal(str(r.error)) for r in stored.smart):
        return FAIL, "the drive refused log 02h at every step", errors
    return NOT_CHECKED, "log 02h could not be read (not a refusal by the drive)", errors


def percent_used_kept(stored: Stored, req: ocp.OcpRequirement) -> Result:
    found = [(r, r.counters.get("percent_used")) for r in stored.read
             if r.counters.get("percent_used") is not None]
    if len(found) < 2:
        return NOT_CHECKED, (stored.no_counters() if not stored.read else
                             f"Percentage Used read at {len(found)} step(s); two are needed"), []
    drop = decrease(found, lambda v: v)
    evidence = [f"Percentage Used {found[0][1]} % at {step(found[0][0])} .. {found[-1][1]} % "
                f"at {step(found[-1][0])} ({len(found)} readings)"]
    if drop:
        return FAIL, f"Percentage Used decreased: {drop}", evidence
    return PASS, f"never decreased over {len(found)} readings", evidence


def logs_kept_over_purge(stored: Stored, req: ocp.OcpRequirement) -> Result:
    pairs = [(b, p, a) for p in stored.purges
             if isinstance(getattr(b := counters_before(stored.ordered, p), "counters", None),
                           dict)
             and isinstance(getattr(a := counters_after(stored.ordered, p), "counters", None),
                            dict)]
    if not pairs:
        return NOT_CHECKED, (stored.no_counters() if not stored.read else
                             "no purge with log 02h read before and after it"), []
    evidence, lost = [], []
    for before, purge, after in pairs:
        got = [(f"02h {k}", before.counters.get(k), after.counters.get(k)) for k in KEPT_02H]
        b0, a0 = (r.counters.get(media_writes.OCP_C0) for r in (before, after))
        if isinstance(b0, dict) and isinstance(a0, dict):
            got += [(f"C0h {k}", b0["fields"].get(k), a0["fields"].get(k)) for k in KEPT_C0]
        got = [g for g in got if g[1] is not None and g[2] is not None]
        evidence.append(f"{purge.test}: {purge.method}: " + "; ".join(
            f"{k} {x:,} -> {y:,}" for k, x, y in got))
        lost += [f"{purge.test}: {k} {x:,} -> {y:,}" for k, x, y in got if y < x]
    if lost:
        return FAIL, "counters reset by the purge: " + "; ".join(lost), evidence
    return PASS, f"02h{' and C0h' if any('C0h' in e for e in evidence) else ''} counters " \
                 f"kept over {len(pairs)} purge(s)", evidence


def _endud3_evidence(stored: Stored) -> tuple[str, ...]:
    found = [r for r in stored.read if r.counters.get("percent_used") is not None]
    if len(found) < 2:
        return ()
    a, b = found[0].counters, found[-1].counters
    written = (b.get("data_units_written") or 0) - (a.get("data_units_written") or 0)
    return (f"Percentage Used {a['percent_used']} % -> {b['percent_used']} % while Data Units "
            f"Written rose by {written:,} (x 512,000 bytes)",)


CHECKS: dict[str, Callable[[Stored, ocp.OcpRequirement], Result]] = {
    ocp.C0_FIELD: c0_field, ocp.C0_VERSION: c0_version, ocp.C0_GUID: c0_guid,
    ocp.C0_DSSD: c0_dssd, ocp.NUSE_AFTER_FORMAT: nuse_after_format,
    ocp.PURGE_TIME: purge_time, ocp.SMART_LOG_READ: smart_log_read,
    ocp.PERCENT_USED_KEPT: percent_used_kept, ocp.LOGS_KEPT_OVER_PURGE: logs_kept_over_purge,
}
