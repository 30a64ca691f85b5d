"""Media writes as the drive reports them, for write amplification (WAF = media bytes written
/ host bytes written; pts.stored.waf): one set of keys in a device_counters record's counters
for every source, so one WAF function serves them all:

  media_bytes    cumulative bytes written to the media (None: not reported)
  media_source   where it came from (MEDIA_SOURCES, or "smartctl: ATA attribute N NAME")
  media_note     when there is none: why ("not reported by this drive: ...", "not read at
                 this step: ...", or through smartctl "not used: ..." / "not read through
                 smartctl: ...", MEDIA_LABELS)

NVMe: the Endurance Group Information log (`nvme endurance-log`, log 09h: Media Units
Written, in units of 10^9 bytes) when the namespace belongs to an Endurance Group (Identify
Namespace ENDGID != 0), else the OCP extended SMART log (`nvme ocp smart-add-log`, log C0h:
Physical Media Units Written, in bytes). The C0h page is read at every step either way and
kept whole (OCP_C0): a drive with both logs (QEMU 10's NVMe controller in a subsystem: ENDGID
1 and `ocp=on`) has its C0h figures and log page version recorded beside log 09h's media
writes, for the OCP requirement verdicts and a WAF at C0h's 1-byte resolution. C0h is read
as bytes (`nvme get-log --log-id=0xc0 --raw-binary`, kept in the run's ocp-logs/ folder) and
decoded by the spec's table (pts.config.ocp_log_c0), so every field of the page's version is
there whatever nvme-cli's OCP plugin prints (2.3 prints no Power State Change Count, nor the
2.5-2.7 fields); the plugin's JSON of the same page is read beside it as a cross-check (the
fields where the two differ: `cross_check`). Where the bytes cannot be read other than by the
drive's refusal (a drive on another host: its runner keeps no bytes; a page of another GUID;
an nvme-cli error) the JSON alone is kept, `source` saying so. ATA:
pts.device.health_smartctl. The emulated SSD: its FTL's NAND page writes. The OCP latency
monitor (`nvme ocp latency-monitor-log`, log C3h) is read beside them.

  media_unit     bytes per unit of the counter (its resolution: 10^9 for log 09h, 1 for
                 C0h, the page or attribute unit otherwise); pts.stored.waf gives no WAF
                 over an interval that moved it by too few units.

A log the drive refuses (an NVMe status saying it has no such log or command, or ENDGID 0)
is "not reported by this drive", remembered for the run (keyed by the run's commands log)
and not asked again. Any other failure (a timeout, output that does not parse) is "not read
at this step" with the error, and the log is asked again at the next step: one bad read
does not turn the WAF off for the whole run.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

from pts.config import ocp_log_c0
from pts.config.ocp_log_layout import UINT
from pts.tools import commands, nvme, nvme_json, nvme_ocp, ocp_log_decode, ocp_log_read, smartctl

NOT_REPORTED = "not reported by this drive"
NOT_READ = "not read at this step"
# through smartctl (pts.device.health_smartctl): the drive has a media-write attribute whose
# unit is not known (named), or an NVMe drive whose media-write logs smartctl does not print
NOT_USED = "not used"
NOT_READ_BY_SMARTCTL = "not read through smartctl"
MEDIA_LABELS = (NOT_REPORTED, NOT_READ, NOT_USED, NOT_READ_BY_SMARTCTL)
# nvme-cli's status text (libnvme's strings) when the drive answers that it has no such log
# or command: a refusal that the next step would get again.
REFUSALS = ("Invalid Log Page", "Invalid Field in Command", "Invalid Command Opcode",
            "INVALID_LOG_PAGE", "INVALID_FIELD", "INVALID_OPCODE")
# nvme-cli's OCP plugin prints the raw NVMe status instead of its name (nvme-cli 2.3 in the
# QEMU 7.2 guest: "Failure reading the C0 Log Page, ret = 16386", 0x4002 = Do Not Retry +
# Invalid Field in Command; tests/data/qemu-7.2). Bits 10:0 of the status are its Status Code
# Type and Status Code (NVMe Base Specification, Completion Queue Entry: Status Field): the
# refusals are Invalid Command Opcode (0/01h), Invalid Field in Command (0/02h) and Invalid
# Log Page (1/09h).
REFUSAL_STATUS = (0x001, 0x002, 0x109)
_RET = re.compile(r"\bret = (\d+)")
ENDURANCE = "nvme endurance-log: Media Units Written"
OCP = "ocp smart-add-log: Physical Media Units Written"
EMULATOR = "emulator FTL"
MEDIA_SOURCES = (ENDURANCE, OCP, EMULATOR)
LATENCY_MONITOR = "latency_monitor"
OCP_C0 = "ocp_c0"     # the C0h page read for the media writes (c0_summary)
# where the C0h record's fields came from (its "source"): the page's bytes, or nvme-cli's JSON
C0_BYTES, C0_JSON = "bytes", "nvme-cli JSON"
OCP_LOGS = "ocp-logs"   # the run's folder of OCP log pages as bytes (beside commands.log)

# (run's commands log, device, log) -> why it is not reported: the drive refused it, and
# it is not asked again in this run. A log that answered, or failed otherwise, is not listed.
_unsupported: dict[tuple[str, str, str], str] = {}
# the same key -> why it was not read at the latest step (asked again at the next one)
_failed: dict[tuple[str, str, str], str] = {}
# (run's commands log, device) -> its namespace's Endurance Group, once Identify Namespace
# gave it: a namespace's ENDGID does not change within a run, so it is not asked at every
# step (an nvme-cli call less per step; about 0.5 s in the QEMU test guest under TCG)
_groups: dict[tuple[str, str], int] = {}


class Refused(ValueError):
    """The drive says it has no such log (or no Endurance Group): not asked again."""


def keys(media_bytes: int | None, source: str | None, why: str = "",
         unit: int | None = 1, label: str = NOT_REPORTED) -> dict:
    """The counters' media keys: a value, its source and unit (bytes per count of the
    counter), or the note saying why none."""
    if media_bytes is None or not source:
        return {"media_bytes": None, "media_source": None,
                "media_note": f"{label}{': ' + why if why else ''}"}
    found = {"media_bytes": int(media_bytes), "media_source": source}
    return found | ({"media_unit": int(unit)} if unit else {})


def unit_of(counters: dict) -> int | None:
    """Bytes per count of a record's media counter: its media_unit, or for a record written
    before that key existed, what its source counts in (None: not known)."""
    unit = counters.get("media_unit")
    if isinstance(unit, int) and unit > 0:
        return unit
    source = str(counters.get("media_source") or "")
    if source == ENDURANCE:
        return nvme.ENDURANCE_UNIT_BYTES
    if source == OCP:
        return 1
    if source == EMULATOR:
        page = counters.get("page_size")
        return page if isinstance(page, int) and page > 0 else None
    return next((u for name, u in smartctl.ATA_MEDIA_ATTRIBUTES.items()
                 if source.endswith(f" {name}")), None)


def emulator(counters: dict) -> dict:
    """The emulated SSD's media writes: NAND page writes x page size."""
    nand, page = counters.get("nand_writes"), counters.get("page_size")
    if not isinstance(nand, int) or not isinstance(page, int):
        return keys(None, None, "the emulator recorded no nand_writes / page_size")
    return keys(nand * page, EMULATOR, unit=page)


def _once(key: tuple[str, str, str], read: Callable):
    """read(), or None with why: a refusal is remembered (`_unsupported`, the later steps of
    the run do not ask again); any other failure only for this step (`_failed`)."""
    _failed.pop(key, None)
    if key in _unsupported:
        return None
    try:
        return read()
    except (commands.ToolError, nvme.NvmeError, ValueError) as exc:
        text = " ".join(str(exc).split())[:300] or type(exc).__name__
        refused = isinstance(exc, Refused) or is_refusal(text)
        (_unsupported if refused else _failed)[key] = text
        return None


def is_refusal(text: str) -> bool:
    """Does nvme-cli's message say the drive has no such log or command (by the status's
    name, or its number as the OCP plugin prints it)?"""
    return any(r in text for r in REFUSALS) or any(
        int(n) & 0x7FF in REFUSAL_STATUS for n in _RET.findall(text))


def nvme_counters(path: str, log_file: Path | None, run: Callable | None = None) -> dict:
    """The media keys and the latency monitor of an NVMe drive at one step."""
    on = {"run": run} if run is not None else {}
    base = (str(log_file), path)
    group = _groups.get(base) or _once((*base, "endgid"), lambda: nvme.id_ns(
        path, log_file, **on).endgid or _raise(
            "the namespace is in no Endurance Group (Identify Namespace ENDGID 0)"))
    if group:
        _groups[base] = group
    out = None
    if group:
        units = _once((*base, "endurance-log"),
                      lambda: nvme.endurance_log(path, group, log_file, **on)[1])
        if units is not None:
            out = keys(units * nvme.ENDURANCE_UNIT_BYTES, ENDURANCE,
                       unit=nvme.ENDURANCE_UNIT_BYTES)
    # C0h at every step, also when log 09h gave the media writes (kept under OCP_C0)
    page = _once((*base, C0_LOG), lambda: read_c0(path, log_file, run))
    if out is None:
        found = page and page["fields"].get("physical_media_units_written")
        if page and "physical_media_units_written" in page.get("all_ones", ()):
            found = None
        unread = any((*base, n) in _failed for n in SOURCE_LOGS)
        out = keys(found, OCP) if found is not None else \
            keys(None, None, why(base), label=NOT_READ if unread else NOT_REPORTED)
    monitor = _once((*base, "ocp latency-monitor-log"), lambda: nvme_ocp.parse_ocp_latency_monitor(
        nvme.ocp_log(path, "latency-monitor-log", log_file, **on)))
    return out | {LATENCY_MONITOR: monitor, OCP_C0: page}


def read_c0(path: str, log_file: Path | None, run: Callable | None = None) -> dict:
    """The C0h page at one step as the record keeps it: from its bytes, cross-checked with
    nvme-cli's JSON; from the JSON alone where the bytes could not be read (why: in
    `bytes_error`). Raises Refused when the drive has no C0h; NvmeError / ValueError when
    neither gives a page with the media writes."""
    bytes_error = "a drive on another host: its runner keeps no bytes"
    if run is None:
        try:
            decoded, kept = _c0_bytes(path, log_file)
        except ocp_log_read.OcpLogNotSupported as exc:
            raise Refused(str(exc)) from None
        except (commands.ToolError, nvme.NvmeError, ValueError, OSError) as exc:
            bytes_error = " ".join(str(exc).split())[:300]
        else:
            record = ocp_log_decode.as_record(decoded)
            for name in decoded.all_ones:   # not supported: no value (as from the JSON)
                record["fields"][name] = None
            return record | kept | {"source": C0_BYTES,
                                    "cross_check": _cross_check(path, log_file, decoded)}
    text = nvme.ocp_log(path, "smart-add-log", log_file, **({"run": run} if run else {}))
    return c0_summary(text) | {"bytes_error": bytes_error}


def _c0_bytes(path: str, log_file: Path | None) -> tuple[ocp_log_decode.DecodedLog, dict]:
    """The page decoded, and where its bytes are kept ({"file": path in the run folder})."""
    ctrl = nvme.controller_path(path)
    if log_file is None:          # no run folder (a one-off read): the bytes are not kept
        with tempfile.TemporaryDirectory() as tmp:
            return ocp_log_read.read_log(ctrl, ocp_log_c0.PAGE, Path(tmp) / "c0h.bin"), {}
    folder = log_file.parent / OCP_LOGS
    folder.mkdir(exist_ok=True)
    out = folder / f"c0h-{len(list(folder.glob('c0h-*.bin'))):04d}.bin"
    page = ocp_log_read.read_log(ctrl, ocp_log_c0.PAGE, out, log_file=log_file)
    return page, {"file": f"{OCP_LOGS}/{out.name}"}


def _cross_check(path: str, log_file: Path | None,
                 page: ocp_log_decode.DecodedLog) -> list[str] | str:
    """Where nvme-cli's JSON of the page differs from its bytes (a list: empty when they
    agree), or why the JSON could not be read (a string)."""
    try:
        doc = json.loads(nvme.ocp_log(path, "smart-add-log", log_file))
        return ocp_log_decode.cross_check(ocp_log_c0.PAGE, page, doc)
    except (commands.ToolError, nvme.NvmeError, ValueError) as exc:
        return "nvme-cli's JSON not read: " + " ".join(str(exc).split())[:200]


def c0_summary(text: str) -> dict:
    """The C0h page as nvme-cli's JSON gave it (either key style, 2.3's older spellings),
    as the record keeps it: the fields nvme-cli printed, by the spec's table (a field it did
    not print is absent: nothing is said of the drive); those later than the page's version
    (`not_given`) and those all ones (`all_ones`: not supported) are None. Raises NvmeError
    when the page gives no media writes."""
    nvme_ocp.parse_ocp_smart_add_log(text)      # raises when it gives no media writes
    version, guid, printed = ocp_log_decode.from_nvme_cli_json(
        ocp_log_c0.PAGE, nvme_json.read_doc(text, "nvme ocp smart-add-log"))
    read_as = max([v for v in ocp_log_c0.PAGE.versions if v <= version] or [version])
    fields, later, ones = {}, [], []
    for f in ocp_log_c0.PAGE.fields:
        if f.name not in printed:
            continue
        value = printed[f.name]
        if read_as not in f.versions:
            later.append(f.name)
            value = None
        elif f.kind == UINT and value == (1 << 8 * f.size * f.count) - 1:
            ones.append(f.name)
            value = None
        fields[f.name] = value
    return {"version": version, "guid": guid, "fields": fields, "all_ones": ones,
            "not_given": later, "source": C0_JSON}


C0_LOG = "ocp c0h"
SOURCE_LOGS = ("endgid", "endurance-log", C0_LOG)


def why(base: tuple[str, str]) -> str:
    """What each NVMe source answered, for the record's media_note: a refusal, or the error
    of this step's read (then the note starts NOT_READ: it is asked again next step)."""
    parts = [f"{name}: {found[(*base, name)]}" for name in SOURCE_LOGS
             for found in (_unsupported, _failed) if (*base, name) in found]
    return "; ".join(parts)


def _raise(text: str):
    raise Refused(text)
