"""nvme-cli's OCP plugin (`nvme ocp ...`): the OCP Datacenter NVMe SSD Specification's
SMART / Health Information Extended log (C0h) and latency monitor log (C3h), as JSON.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pts.tools.nvme_json import NvmeError, read_doc, to_int, uint128

# The C0h fields read: (name here, nvme-cli's v1 JSON key, its v2 key (--output-format-version
# 2), size in bytes, the first log page version that has the field). Keys match case- and
# punctuation-blind. Sizes and offsets: OCP Datacenter NVMe SSD Specification v2.7, SMART /
# Health Information Extended (C0h); key names: nvme-cli's OCP plugin printers. Page
# versions: 2 = NVMe Cloud SSD 1.0, 3 = OCP 2.0, 4 = 2.5, 5 = 2.6, 6 = 2.7 (nvme-cli #2972,
# #2966). nvme-cli prints every field it knows whatever the page's version, the later ones
# as zeros (both real pages in tests/data/recorded do), so a field the page's version does
# not have is not given.
# The first version of each gated field, from the specification's own text: Datacenter NVMe
# SSD Specification Version 2.0 (07302021, r21; the PDF in freews/general_parser @e094013b,
# source_doc/), whose C0h table says Log Page Version "Shall be set to 0003h" (SMART-27, p.
# 21), defines the DSSD Specification Version, bytes 103:98 with the Errata Version Field at
# byte 98 (SMART-13, p. 18), the NVMe Errata revision at byte 130 (SMART-20, p. 20), PCIe
# Link Retraining Count at 199:192 (SMART-29, p. 21) and Power State Change Count at 207:200
# (SMART-31, p. 21): all from version 3. (v2.7, circulardrives/cdi-grading-tool docs/, keeps
# those IDs and offsets and calls byte 130 the NVM Express Base Errata Version.) The NVMe
# Cloud SSD Specification 1.0 (version 2) text was not found: the version 3 fields stay not
# given on a version 2 page (the FADU's prints 0 in all of them; Major Version 0 names no
# DSSD version).
# Older key spellings: nvme-cli 2.3's OCP plugin prints byte 130 as "NVMe Errata Version"
# (tests/data/qemu-10's C0h pages, version 5).
OLDER_KEYS = {"nvme_base_errata_version": ("NVMe Errata Version",)}
C0_FIELDS = (
    ("physical_media_units_written", "Physical media units written", None, 16, 0),
    ("physical_media_units_read", "Physical media units read", None, 16, 0),
    ("bad_user_nand_blocks_raw", "Bad user nand blocks - Raw", None, 6, 0),
    ("bad_user_nand_blocks_normalized", "Bad user nand blocks - Normalized", None, 2, 0),
    ("bad_system_nand_blocks_raw", "Bad system nand blocks - Raw", None, 6, 0),
    ("bad_system_nand_blocks_normalized", "Bad system nand blocks - Normalized", None, 2, 0),
    ("xor_recovery_count", "XOR recovery count", None, 8, 0),
    ("uncorrectable_read_errors", "Uncorrectable read error count", None, 8, 0),
    ("soft_ecc_error_count", "Soft ecc error count", None, 8, 0),
    ("end_to_end_detected_errors", "End to end detected errors", None, 4, 0),
    ("end_to_end_corrected_errors", "End to end corrected errors", None, 4, 0),
    ("system_data_percent_used", "System data percent used", None, 1, 0),
    ("refresh_count", "Refresh counts", None, 7, 0),
    ("max_user_data_erase_count", "Max User data erase counts", None, 4, 0),
    ("min_user_data_erase_count", "Min User data erase counts", None, 4, 0),
    ("thermal_throttling_events", "Number of Thermal throttling events", None, 1, 0),
    ("current_throttling_status", "Current throttling status", None, 1, 0),
    ("errata_version", "Errata Version Field", "errata_version_field", 1, 3),
    ("point_version", "Point Version Field", "point_version_field", 2, 3),
    ("minor_version", "Minor Version Field", "minor_version_field", 2, 3),
    ("major_version", "Major Version Field", "major_version_field", 1, 3),
    ("pcie_correctable_errors", "PCIe correctable error count", None, 8, 0),
    ("incomplete_shutdowns", "Incomplete shutdowns", None, 4, 0),
    ("percent_free_blocks", "Percent free blocks", None, 1, 0),
    ("capacitor_health", "Capacitor health", None, 2, 0),
    ("nvme_base_errata_version", "NVMe Base Errata Version", None, 1, 3),
    ("unaligned_io", "Unaligned I/O", None, 8, 0),
    ("security_version_number", "Security Version Number", None, 8, 0),
    ("nuse", "NUSE - Namespace utilization", "nuse_namespace_utilization", 8, 0),
    ("plp_start_count", "PLP start count", None, 16, 0),
    ("endurance_estimate", "Endurance estimate", None, 16, 0),
    ("pcie_link_retraining_count", "PCIe Link Retraining Count", None, 8, 3),
    ("power_state_change_count", "Power State Change Count", None, 8, 3),
)
OCP_C0_GUID = "0xafd514c97c6f4f9ca4f2bfea2810afc5"   # the C0h GUID as nvme-cli prints it


@dataclass(frozen=True)
class OcpC0:
    """One C0h page: its version and GUID, and each C0_FIELDS value; None where the page
    does not give it (absent, not in its version, or all ones: not supported)."""

    version: int
    guid: str | None
    fields: dict
    not_supported: tuple[str, ...]     # all ones (raw FFh.., normalised 65535)
    not_in_version: tuple[str, ...]    # printed, but later than the page's version


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def parse_ocp_c0(text: str) -> OcpC0:
    """`nvme ocp smart-add-log -o json`, either key style of nvme-cli's OCP plugin (v1
    "Physical media units written", v2 "physical_media_units_written"), counters as
    {hi, lo}, a number or a decimal string."""
    doc = read_doc(text, "nvme ocp smart-add-log")
    flat = {_key(k): v for k, v in doc.items()}
    version = to_int(flat.get("logpageversion"), 0)
    guid = flat.get("logpageguid")
    fields, unsupported, later = {}, [], []
    for name, v1, v2, size, since in C0_FIELDS:
        keys = (v1, v2 or name, *OLDER_KEYS.get(name, ()))
        raw = next((flat[k] for k in map(_key, keys) if k in flat), None)
        value = uint128(raw)
        if value is not None and since > version:
            later.append(name)
            value = None
        elif value == (1 << 8 * size) - 1:
            unsupported.append(name)
            value = None
        fields[name] = value
    return OcpC0(version, None if guid is None else str(guid).lower(), fields,
                 tuple(unsupported), tuple(later))


def parse_ocp_smart_add_log(text: str) -> int:
    """`nvme ocp smart-add-log -o json` (OCP Datacenter NVMe SSD spec, SMART / Health
    Information Extended, log C0h, bytes 15:0): Physical Media Units Written, in bytes."""
    found = parse_ocp_c0(text).fields["physical_media_units_written"]
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
