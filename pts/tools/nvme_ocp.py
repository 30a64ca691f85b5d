"""nvme-cli's OCP plugin (`nvme ocp ...`): the OCP Datacenter NVMe SSD Specification's
SMART / Health Information Extended log (C0h) and latency monitor log (C3h), as JSON.
"""

from __future__ import annotations

from pts.tools.nvme_json import NvmeError, find, read_doc, to_int, uint128


def parse_ocp_smart_add_log(text: str) -> int:
    """`nvme ocp smart-add-log -o json` (OCP Datacenter NVMe SSD spec, SMART / Health
    Information Extended, log C0h, bytes 15:0): Physical Media Units Written, in bytes."""
    doc = read_doc(text, "nvme ocp smart-add-log")
    found = uint128(next((v for k in ("Physical media units written",
                                      "physical_media_units_written")
                          if (v := find(doc, k)) is not None), None))
    if found is None:
        raise NvmeError(f"nvme ocp smart-add-log: no physical media units written in "
                        f"{text[:200]!r}")
    return found


LATENCY_MONITOR_KEYS = ("Active Bucket Counter", "Active Measured Latency")


def parse_ocp_latency_monitor(text: str) -> dict:
    """`nvme ocp latency-monitor-log -o json` (OCP log C3h): the active bucket counters and
    the measured (max) latencies per bucket as the log gives them, e.g.
    {"Active Bucket Counter": {"Bucket 0": {"Read": 3, "Write": 0, ...}}, ...}, plus the
    active bucket timer (minutes) and its threshold."""
    doc = read_doc(text, "nvme ocp latency-monitor-log")
    out: dict = {}
    for key, value in doc.items():
        group = next((g for g in LATENCY_MONITOR_KEYS if key.startswith(g)), None)
        if group and isinstance(value, dict):
            bucket = key[len(group):].strip(" :") or "all"
            out.setdefault(group, {})[bucket] = {k: to_int(v) for k, v in value.items()}
        elif key in ("Active Bucket Timer", "Active Bucket Timer Threshold"):
            out[key] = to_int(value)
    if not any(g in out for g in LATENCY_MONITOR_KEYS):
        raise NvmeError(f"nvme ocp latency-monitor-log: no active bucket counters in "
                        f"{text[:200]!r}")
    return out
