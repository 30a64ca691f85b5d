"""The OCP Datacenter NVMe SSD Specification's other vendor log pages a host reads with Get
Log Page, as data (what a field is: ocp_log_layout.LogField; C0h: ocp_log_c0.py):
C1h Error Recovery, C2h Firmware Activation History (2.0; obsolete in 2.7), C3h Latency
Monitor, C4h Device Capabilities, C5h Unsupported Requirements (the drive's own list of the
requirement IDs it does not meet).

Sources, by the tags in the comments:
- [2.0 s]: the v2.0 r21 PDF (freews/general_parser @e094013b source_doc/), section s: 4.8.6
  C1h, 4.8.7 C2h, 4.8.9 C3h, 4.8.10 C4h (with the DSSD Power State Descriptor), 4.8.11 C5h.
- [2.7 L]: the v2.7 Markdown (circulardrives/cdi-grading-tool @427b743c docs/), line L:
  1946 C1h, 1158 (C2h "Obsolete" in the standard log table), 2229 C3h, 3071 C4h, 3346 C5h.
- [cli]: nvme-cli @e117ee68 plugins/ocp/ocp-nvme.h (the structs; a cross-check of the
  offsets) and ocp-print-json.c (C3h's debug log size printed from version 4; nvme-cli
  #2527: C3h version 4 is OCP 2.5).
The spec writes C3h's per-bucket fields highest bucket first in the lowest bytes for the
time stamps and measured latencies (bucket 3 at 103:96, bucket 0 at 191:168 [2.7 L2461]),
and the counters bucket 0 first (one field each, LMDATA-12..15): the lists here keep the
page's order (time stamps and measured latencies: [bucket 3, 2, 1, 0]).
Not here: C6h Hardware Component (a list of variable-length descriptors, 2.5 and later:
pts.config.ocp_log_c6), C7h TCG Configuration, C9h Telemetry String and CAh Latency Monitor
Debug Telemetry (the telemetry's own format): see the report of issue 49 §1.
"""

from __future__ import annotations

from pts.config.ocp_log_layout import (
    BYTES,
    RESERVED,
    STRUCT,
    UINT,
    LogField,
    LogPage,
)

BOTH = ("2.0", "2.7")


def _f(name: str, offset: int, size: int, rid: str | None, versions: tuple[int, ...],
       specs: tuple[str, ...] = BOTH, kind: str = UINT, unit: str = "", count: int = 1,
       entry: tuple[LogField, ...] = ()) -> LogField:
    ids = () if rid is None else tuple((s, rid) for s in specs)
    return LogField(name, offset, size, ids, versions, kind, unit, count, entry)


# --- C1h Error Recovery: version 2 = 2.0 (0002h, [2.0 4.8.6]), 3 = 2.7 (0003h, [2.7 L2151])
_C1 = (2, 3)
C1 = LogPage(0xC1, "Error Recovery", "0x5a1983ba3dfd4dabae3430fe2131d944",
             {2: 512, 3: 512}, {2: "2.0", 3: "2.7"}, version_at=494, guid_at=496, fields=(
    # 2.0 calls it Panic Reset Wait Time / Panic ID; 2.7 Error Reset Wait Time / Error ID
    _f("error_reset_wait_time", 0, 2, "EREC-1", _C1, unit="ms"),
    _f("error_reset_action", 2, 1, "EREC-2", _C1),           # bits: reset actions
    _f("device_recovery_action_1", 3, 1, "EREC-3", _C1),
    _f("error_id", 4, 8, "EREC-4", _C1),
    _f("device_capabilities", 12, 4, "EREC-5", _C1),          # bits
    _f("vendor_specific_recovery_opcode", 16, 1, "EREC-6", _C1),
    _f("reserved_17", 17, 3, "EREC-7", _C1, kind=RESERVED),
    _f("vendor_specific_command_cdw12", 20, 4, "EREC-8", _C1),
    _f("vendor_specific_command_cdw13", 24, 4, "EREC-9", _C1),
    _f("vendor_specific_command_timeout", 28, 1, "EREC-13", _C1, unit="s"),
    _f("device_recovery_action_2", 29, 1, "EREC-14", _C1),
    _f("device_recovery_action_2_timeout", 30, 1, "EREC-15", _C1, unit="s"),
    # new in 2.7 (version 3): byte 31 and 63:32 [2.7 L2127-2147]; 2.0: reserved 493:31
    _f("error_count", 31, 1, "EREC-16", (3,), ("2.7",), unit="errors"),
    _f("previous_error_ids", 32, 8, "EREC-17", (3,), ("2.7",), count=4),   # N-1 first
    _f("reserved_31", 31, 463, "EREC-10", (2,), ("2.0",), kind=RESERVED),
    _f("reserved_64", 64, 430, "EREC-10", (3,), ("2.7",), kind=RESERVED),
))

# --- C2h Firmware Activation History, version 1 [2.0 4.8.7]: a header and 20 entries of
# 64 bytes (FAHE-1..13, offsets within an entry); obsolete in 2.7 [2.7 L1158]
_FAHE = tuple(_f(n, o, s, r, (1,), ("2.0",), k) for n, o, s, r, k in (
    ("entry_version", 0, 1, "FAHE-1", UINT), ("entry_length", 1, 1, "FAHE-2", UINT),
    ("reserved_2", 2, 2, "FAHE-3", RESERVED),
    ("activation_count", 4, 2, "FAHE-4", UINT), ("timestamp", 6, 8, "FAHE-5", UINT),
    ("reserved_14", 14, 8, "FAHE-6", RESERVED), ("power_cycle_count", 22, 8, "FAHE-7", UINT),
    ("previous_firmware", 30, 8, "FAHE-8", "ascii"), ("new_firmware", 38, 8, "FAHE-9", "ascii"),
    ("slot_number", 46, 1, "FAHE-10", UINT), ("commit_action", 47, 1, "FAHE-11", UINT),
    ("result", 48, 2, "FAHE-12", UINT), ("reserved_50", 50, 14, "FAHE-13", RESERVED)))
C2 = LogPage(0xC2, "Firmware Activation History", "0xd11cf3ac8ab24de2a3f6dab4769a796d",
             {1: 4096}, {1: "2.0"}, version_at=4078, guid_at=4080, fields=(
    _f("log_identifier", 0, 1, "FAHL-1", (1,), ("2.0",)),     # C2h
    _f("reserved_1", 1, 3, "FAHL-2", (1,), ("2.0",), kind=RESERVED),
    _f("valid_entries", 4, 4, "FAHL-3", (1,), ("2.0",)),
    _f("entries", 8, 64, "FAHL-4", (1,), ("2.0",), STRUCT, count=20, entry=_FAHE),
    _f("reserved_1288", 1288, 2790, "FAHL-5", (1,), ("2.0",), kind=RESERVED),
))

# --- C3h Latency Monitor: version 1 = 2.0 (512 bytes), 4 = 2.5 ([cli] #2527, 512 bytes, the
# debug log size at 447:436), 5 = 2.7 (0005h [2.7 L3057], 4096 bytes: LMDATA-38 "log size
# change" [2.7 L11653])
_C3 = (1, 4, 5)
_COUNTER = (_f("reserved_0", 0, 4, None, _C3, kind=RESERVED),
            *(_f(n, o, 4, None, _C3) for n, o in (("deallocate", 4), ("write", 8),
                                                  ("read", 12))))
_PER_IO = tuple(_f(n, o, 8, None, _C3) for n, o in (("deallocate", 0), ("write", 8),
                                                    ("read", 16)))
_PER_IO_16 = tuple(_f(n, o, 2, None, _C3, unit="ms") for n, o in (
    ("deallocate", 0), ("write", 2), ("read", 4)))


def _buckets(prefix: str, first: int, ids: int) -> tuple[LogField, ...]:
    """Four bucket counters of 16 bytes, LMDATA-<ids>..<ids+3>."""
    return tuple(_f(f"{prefix}_bucket_counter_{b}", first + 16 * b, 16, f"LMDATA-{ids + b}",
                    _C3, kind=STRUCT, entry=_COUNTER) for b in range(4))


C3 = LogPage(0xC3, "Latency Monitor", "0x85d45e58d4e643709c6c84d08cc07a92",
             {1: 512, 4: 512, 5: 4096}, {1: "2.0", 4: "2.5", 5: "2.7"},
             version_at=494, guid_at=496, fields=(
    _f("feature_status", 0, 1, "LMDATA-1", _C3),              # bits
    _f("reserved_1", 1, 1, "LMDATA-2", _C3, kind=RESERVED),
    _f("active_bucket_timer", 2, 2, "LMDATA-3", _C3, unit="5 min"),
    _f("active_bucket_timer_threshold", 4, 2, "LMDATA-4", _C3, unit="5 min"),
    *(_f(f"active_threshold_{x}", 6 + i, 1, f"LMDATA-{5 + i}", _C3, unit="5 ms")
      for i, x in enumerate("abcd")),
    _f("active_latency_configuration", 10, 2, "LMDATA-9", _C3),   # bits
    _f("active_latency_minimum_window", 12, 1, "LMDATA-10", _C3, unit="100 ms"),
    _f("reserved_13", 13, 19, "LMDATA-11", _C3, kind=RESERVED),
    *_buckets("active", 32, 12),
    _f("active_latency_timestamp", 96, 24, "LMDATA-16", _C3, kind=STRUCT, count=4,
       entry=_PER_IO),                                        # bucket 3 first
    _f("active_measured_latency", 192, 6, "LMDATA-17", _C3, kind=STRUCT, count=4,
       entry=_PER_IO_16),                                     # bucket 3 first
    _f("active_latency_stamp_units", 216, 2, "LMDATA-18", _C3),   # bits
    _f("reserved_218", 218, 22, "LMDATA-19", _C3, kind=RESERVED),
    *_buckets("static", 240, 20),
    _f("static_latency_timestamp", 304, 24, "LMDATA-24", _C3, kind=STRUCT, count=4,
       entry=_PER_IO),
    _f("static_measured_latency", 400, 6, "LMDATA-25", _C3, kind=STRUCT, count=4,
       entry=_PER_IO_16),
    _f("static_latency_stamp_units", 424, 2, "LMDATA-26", _C3),
    _f("reserved_426", 426, 22, "LMDATA-27", (1,), ("2.0",), kind=RESERVED),
    _f("reserved_426_436", 426, 10, "LMDATA-27", (4, 5), ("2.7",), kind=RESERVED),
    # Dwords of the Latency Monitor Debug Log [2.7 L2884-2890]; 12 bytes, kept as bytes
    _f("debug_log_size", 436, 12, "LMDATA-37", (4, 5), ("2.7",), BYTES),
    _f("debug_log_trigger_enable", 448, 2, "LMDATA-28", _C3),  # bits
    _f("debug_log_measured_latency", 450, 2, "LMDATA-29", _C3, unit="ms"),
    _f("debug_log_latency_stamp", 452, 8, "LMDATA-30", _C3),
    _f("debug_log_pointer", 460, 2, "LMDATA-31", _C3),
    _f("debug_counter_trigger_source", 462, 2, "LMDATA-32", _C3),  # bits
    _f("debug_log_stamp_units", 464, 1, "LMDATA-33", _C3),
    _f("reserved_465", 465, 29, "LMDATA-34", _C3, kind=RESERVED),
    _f("reserved_512", 512, 3584, "LMDATA-38", (5,), ("2.7",), kind=RESERVED),
))

# --- C4h Device Capabilities: version 1 = 2.0 (0001h [2.0 4.8.10]), 2 = 2.7 (0002h [2.7
# L3299]); 4096 bytes. DSSD Power State Descriptors: one byte per DSSD power state, byte 16
# reserved ([2.0 4.8.10]: bit 7 valid, 4:0 the NVMe power state it runs in)
_C4 = (1, 2)
C4 = LogPage(0xC4, "Device Capabilities", "0xb7053c914b58495d98c9e1d10d054297",
             {1: 4096, 2: 4096}, {1: "2.0", 2: "2.7"}, version_at=4078, guid_at=4080, fields=(
    _f("pcie_ports", 0, 2, "DCLP-1", _C4, unit="ports"),
    _f("oob_management_support", 2, 2, "DCLP-2", _C4),        # bits, as the four below
    _f("write_zeroes_support", 4, 2, "DCLP-3", _C4),
    _f("sanitize_support", 6, 2, "DCLP-4", _C4),
    _f("dataset_management_support", 8, 2, "DCLP-5", _C4),
    _f("write_uncorrectable_support", 10, 2, "DCLP-6", _C4),
    _f("fused_operation_support", 12, 2, "DCLP-7", _C4),
    _f("minimum_valid_dssd_power_state", 14, 2, "DCLP-8", _C4),
    _f("dssd_power_state_descriptors", 16, 1, "DCLP-9", _C4, count=128),
    # FIPS 140 validation status, bits 3:0 (0h-4h) [2.7 L3265-3295], new in 2.7
    _f("fips_140_validation", 144, 2, "DCLP-13", (2,), ("2.7",)),
    _f("reserved_144", 144, 3934, "DCLP-10", (1,), ("2.0",), kind=RESERVED),
    _f("reserved_146", 146, 3932, "DCLP-10", (2,), ("2.7",), kind=RESERVED),
))

# --- C5h Unsupported Requirements, version 1 in 2.0 and 2.7 (0001h [2.0 4.8.11; 2.7 L3380]):
# a count and up to 253 16-byte zero-padded ASCII requirement IDs, alphabetical
C5 = LogPage(0xC5, "Unsupported Requirements", "0xc7bb98b7d0324863bb2c23990e9c722f",
             {1: 4096}, {1: "2.0, 2.7"}, version_at=4078, guid_at=4080, fields=(
    _f("unsupported_count", 0, 2, "URLP-1", (1,), unit="IDs"),
    _f("reserved_2", 2, 14, "URLP-2", (1,), kind=RESERVED),
    _f("unsupported_requirements", 16, 16, "URLP-3", (1,), kind="ascii", count=253),
    _f("reserved_4064", 4064, 14, "URLP-4", (1,), kind=RESERVED),
))

PAGES = {p.log_id: p for p in (C1, C2, C3, C4, C5)}


def unsupported_ids(fields: dict) -> list[str]:
    """The requirement IDs a decoded C5h page lists (its count first, no blanks)."""
    return [i for i in fields["unsupported_requirements"][:fields["unsupported_count"]] if i]


# The Log Page Version and GUID of each page are bytes of its table too (LogPage.version_at,
# guid_at), with requirement IDs of their own and the version the text asks:
# (spec, log) -> (version's ID, the version asked, GUID's ID) [2.7 L2151-2155 C1h, L3057-3059
# C3h, L3299-3302 C4h, L3386-3390 C5h]
HEADER_IDS = {
    ("2.7", 0xC1): ("EREC-11", 3, "EREC-12"),
    ("2.7", 0xC3): ("LMDATA-35", 5, "LMDATA-36"),
    ("2.7", 0xC4): ("DCLP-11", 2, "DCLP-12"),
    ("2.7", 0xC5): ("URLP-5", 1, "URLP-6"),
}

# Bits of a field the text reserves ("Shall be cleared to zero"), as a mask per field:
# C1h [2.7 L1963-2141], C3h [2.7 L2253-3048], C4h [2.7 L3079-3295]
RESERVED_BITS = {
    (0xC1, "error_reset_action"): 0xC0,             # EREC-2 bits 7:6
    (0xC1, "device_recovery_action_1"): 0x80,       # EREC-3 bit 7
    (0xC1, "device_capabilities"): 0xFFFFFFFC,      # EREC-5 bits 31:2
    (0xC1, "device_recovery_action_2"): 0xC0,       # EREC-14 bits 7:6
    (0xC3, "feature_status"): 0xF0,                 # LMDATA-1 bits 7:4
    (0xC3, "active_latency_configuration"): 0xF000,  # LMDATA-9 bits 15:12
    (0xC3, "active_latency_stamp_units"): 0xF000,   # LMDATA-18 bits 15:12
    (0xC3, "static_latency_stamp_units"): 0xF000,   # LMDATA-26 bits 15:12
    (0xC3, "debug_log_trigger_enable"): 0xF000,     # LMDATA-28 bits 15:12
    (0xC3, "debug_counter_trigger_source"): 0xF000,  # LMDATA-32 bits 15:12
    (0xC3, "debug_log_stamp_units"): 0xFE,          # LMDATA-33 bits 7:1
    (0xC4, "oob_management_support"): 0x7FF8,       # DCLP-2 bits 14:3
    (0xC4, "write_zeroes_support"): 0x7FE0,         # DCLP-3 bits 14:5
    (0xC4, "sanitize_support"): 0x7FE0,             # DCLP-4 bits 14:5
    (0xC4, "dataset_management_support"): 0x7FFC,   # DCLP-5 bits 14:2
    (0xC4, "write_uncorrectable_support"): 0x7FF0,  # DCLP-6 bits 14:4
    (0xC4, "fused_operation_support"): 0x7FFE,      # DCLP-7 bits 14:1
    (0xC4, "fips_140_validation"): 0xFFF0,          # DCLP-13 bits 15:4
}
# A DSSD Power State Descriptor (one byte of DCLP-9) [2.7 L3330-3345]: bit 7 valid
# (DSSDPSD-1), 6:5 reserved (DSSDPSD-2), 4:0 the NVMe power state it runs in (DSSDPSD-3)
DSSD_VALID, DSSD_RESERVED, DSSD_NVME_STATE = 0x80, 0x60, 0x1F
