"""Media writes as the drive reports them, for write amplification (WAF = media bytes written
/ host bytes written; pts.stored.waf): one set of keys in a device_counters record's counters
for every source, so one WAF function serves them all:

  media_bytes    cumulative bytes written to the media (None: not reported)
  media_source   where it came from (MEDIA_SOURCES, or "smartctl: ATA attribute N NAME")
  media_note     when not reported: why ("not reported by this drive: ...")

NVMe: the Endurance Group Information log (`nvme endurance-log`, log 09h: Media Units
Written) when the namespace belongs to an Endurance Group (Identify Namespace ENDGID != 0),
else the OCP extended SMART log (`nvme ocp smart-add-log`, log C0h: Physical Media Units
Written). ATA: pts.device.health_smartctl. The emulated SSD: its FTL's NAND page writes.
The OCP latency monitor (`nvme ocp latency-monitor-log`, log C3h) is read beside them.

A log the drive does not answer is "not reported by this drive", recorded, not an error: the
first attempt in a run decides (keyed by the run's commands log), and it is not asked again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pts.tools import commands, nvme

NOT_REPORTED = "not reported by this drive"
ENDURANCE = "nvme endurance-log: Media Units Written"
OCP = "ocp smart-add-log: Physical Media Units Written"
EMULATOR = "emulator FTL"
MEDIA_SOURCES = (ENDURANCE, OCP, EMULATOR)
LATENCY_MONITOR = "latency_monitor"

# (run's commands log, device, log) -> why it is not reported; a log that answered once is
# not listed and is asked at every step.
_unsupported: dict[tuple[str, str, str], str] = {}


def keys(media_bytes: int | None, source: str | None, why: str = "") -> dict:
    """The counters' media keys: a value and its source, or the note saying why none."""
    if media_bytes is None or not source:
        return {"media_bytes": None, "media_source": None,
                "media_note": f"{NOT_REPORTED}{': ' + why if why else ''}"}
    return {"media_bytes": int(media_bytes), "media_source": source}


def emulator(counters: dict) -> dict:
    """The emulated SSD's media writes: NAND page writes x page size."""
    nand, page = counters.get("nand_writes"), counters.get("page_size")
    if not isinstance(nand, int) or not isinstance(page, int):
        return keys(None, None, "the emulator recorded no nand_writes / page_size")
    return keys(nand * page, EMULATOR)


def _once(key: tuple[str, str, str], read: Callable):
    """read(), or None with the reason remembered when the drive did not answer it (then
    the later steps of the run do not ask again)."""
    if key in _unsupported:
        return None
    try:
        return read()
    except (commands.ToolError, nvme.NvmeError, ValueError) as exc:
        _unsupported[key] = " ".join(str(exc).split())[:300] or type(exc).__name__
        return None


def nvme_counters(path: str, log_file: Path | None, run: Callable | None = None) -> dict:
    """The media keys and the latency monitor of an NVMe drive at one step."""
    on = {"run": run} if run is not None else {}
    base = (str(log_file), path)
    group = _once((*base, "endgid"), lambda: nvme.id_ns(path, log_file, **on).endgid or
                  _raise("the namespace is in no Endurance Group (Identify Namespace ENDGID 0)"))
    out = None
    if group:
        units = _once((*base, "endurance-log"),
                      lambda: nvme.endurance_log(path, group, log_file, **on)[1])
        if units is not None:
            out = keys(units * nvme.DATA_UNIT_BYTES, ENDURANCE)
    if out is None:
        found = _once((*base, "ocp smart-add-log"), lambda: nvme.parse_ocp_smart_add_log(
            nvme.ocp_log(path, "smart-add-log", log_file, **on)))
        out = keys(found, OCP) if found is not None else keys(None, None, why(base))
    monitor = _once((*base, "ocp latency-monitor-log"), lambda: nvme.parse_ocp_latency_monitor(
        nvme.ocp_log(path, "latency-monitor-log", log_file, **on)))
    return out | {LATENCY_MONITOR: monitor}


def why(base: tuple[str, str]) -> str:
    """What each NVMe source answered, for the record's media_note."""
    parts = [f"{name}: {_unsupported[(*base, name)]}" for name in
             ("endgid", "endurance-log", "ocp smart-add-log") if (*base, name) in _unsupported]
    return "; ".join(parts)


def _raise(text: str):
    raise ValueError(text)
