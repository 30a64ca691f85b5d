"""The NVM Express data structures a host reads to judge command support, power states and
Flexible Data Placement, as data (what a field is: ocp_log_layout.LogField; read by
pts.tools.nvme_facts): Identify Controller (CNS 01h) with its Power State Descriptors,
Identify Namespace (CNS 00h, NVM Command Set) with its LBA formats, the Commands Supported and
Effects log (05h) and the FDP logs of an Endurance Group: FDP Configurations (20h), Reclaim
Unit Handle Usage (21h), FDP Statistics (22h), FDP Events (23h).

Sources: the NVM Express Base Specification 2.0 (Identify Controller, Power State Descriptor,
Commands Supported and Effects; FDP from TP4146, in the Base Specification 2.0c/2.1) and the
NVM Command Set Specification 1.0 (Identify Namespace); each byte offset checked against
libnvme's structs (linux-nvme/libnvme @03297d8b src/nvme/types.h: nvme_id_ctrl,
nvme_id_psd, nvme_id_ns, nvme_lbaf, nvme_cmd_effects_log, nvme_fdp_config_log /
_config_desc / _ruh_desc, nvme_fdp_ruhu_log / _desc, nvme_fdp_stats_log, nvme_fdp_events_log
/ nvme_fdp_event) and, where it prints them, against nvme-cli 2.3's JSON of QEMU 10's
controller (tests/unit/test_host_facts.py). No requirement IDs here: those are the rules'
(pts.stored.host_rules), which name the field they read.
"""

from __future__ import annotations

from pts.config.ocp_log_layout import BYTES, STRUCT, LogField

ANY = (0,)      # these structures carry no page version: one table for every controller


def _f(name: str, offset: int, size: int, count: int = 1, kind: str = "uint",
       entry: tuple[LogField, ...] = (), unit: str = "") -> LogField:
    return LogField(name, offset, size, (), ANY, kind, unit, count, entry)


# Power State Descriptor (32 bytes each, 32 of them at byte 2048 of Identify Controller)
PSD = (
    _f("mp", 0, 2),            # Maximum Power, in the unit flags bit 0 (MXPS) names
    _f("flags", 3, 1),         # bit 0 MXPS (0: 0.01 W, 1: 0.0001 W), bit 1 NOPS
    _f("enlat", 4, 4, unit="us"),
    _f("exlat", 8, 4, unit="us"),
    _f("rrt", 12, 1), _f("rrl", 13, 1), _f("rwt", 14, 1), _f("rwl", 15, 1),
    _f("idlp", 16, 2), _f("ips", 18, 1),           # ips bits 7:6: the scale of idlp
    _f("actp", 20, 2), _f("apw_aps", 22, 1),
)
PSD_AT, PSD_SIZE, PSD_COUNT = 2048, 32, 32

ID_CTRL = (
    _f("vid", 0, 2), _f("ssvid", 2, 2),
    _f("sn", 4, 20, kind="ascii"), _f("mn", 24, 40, kind="ascii"),
    _f("fr", 64, 8, kind="ascii"),
    _f("mdts", 77, 1),          # 2^mdts units of CAP.MPSMIN; 0: no limit
    _f("cntlid", 78, 2), _f("ver", 80, 4),
    _f("oaes", 92, 4), _f("ctratt", 96, 4),
    _f("cntrltype", 111, 1),
    _f("oacs", 256, 2), _f("acl", 258, 1), _f("aerl", 259, 1), _f("frmw", 260, 1),
    _f("lpa", 261, 1), _f("elpe", 262, 1), _f("npss", 263, 1), _f("avscc", 264, 1),
    _f("apsta", 265, 1), _f("wctemp", 266, 2), _f("cctemp", 268, 2), _f("mtfa", 270, 2),
    _f("hmpre", 272, 4), _f("hmmin", 276, 4),
    _f("tnvmcap", 280, 16), _f("unvmcap", 296, 16),
    _f("edstt", 316, 2), _f("dsto", 318, 1), _f("fwug", 319, 1),
    _f("sanicap", 328, 4), _f("endgidmax", 340, 2),
    _f("pels", 352, 4),         # Persistent Event Log Size, 64 KiB units
    _f("sqes", 512, 1), _f("cqes", 513, 1), _f("maxcmd", 514, 2), _f("nn", 516, 4),
    _f("oncs", 520, 2), _f("fuses", 522, 2), _f("fna", 524, 1), _f("vwc", 525, 1),
    _f("awun", 526, 2), _f("awupf", 528, 2), _f("ocfs", 534, 2), _f("sgls", 536, 4),
    _f("subnqn", 768, 256, kind="ascii"),
    _f("psds", PSD_AT, PSD_SIZE, PSD_COUNT, STRUCT, PSD),
)
ID_SIZE = 4096

LBAF = (_f("ms", 0, 2), _f("lbads", 2, 1), _f("rp", 3, 1))   # rp bits 1:0
ID_NS = (
    _f("nsze", 0, 8), _f("ncap", 8, 8), _f("nuse", 16, 8),
    _f("nsfeat", 24, 1), _f("nlbaf", 25, 1), _f("flbas", 26, 1), _f("mc", 27, 1),
    _f("dpc", 28, 1), _f("dps", 29, 1), _f("nmic", 30, 1), _f("rescap", 31, 1),
    _f("fpi", 32, 1), _f("dlfeat", 33, 1), _f("nawun", 34, 2), _f("nawupf", 36, 2),
    _f("npwg", 64, 2), _f("npwa", 66, 2), _f("npdg", 68, 2), _f("npda", 70, 2),
    _f("nows", 72, 2), _f("endgid", 102, 2),
    _f("nguid", 104, 16, kind=BYTES), _f("eui64", 120, 8, kind=BYTES),
    _f("lbafs", 128, 4, 64, STRUCT, LBAF),
)

# Commands Supported and Effects (05h): one 4-byte entry per opcode, bit 0 CSUPP
EFFECTS = (_f("acs", 0, 4, 256), _f("iocs", 1024, 4, 256))
EFFECTS_SIZE = 4096

# FDP Configurations (20h): a header, then descriptors of `size` bytes each (variable:
# 64 bytes and one 4-byte Reclaim Unit Handle descriptor per handle)
FDP_CONFIG_HEADER = (_f("n", 0, 2), _f("version", 2, 1), _f("size", 4, 4))
FDP_CONFIG_HEADER_SIZE = 16
FDP_CONFIG = (
    _f("size", 0, 2),
    _f("fdpa", 2, 1),           # bits 3:0 RGIF, bit 4 FDPVWC, bit 7 valid
    _f("vss", 3, 1), _f("nrg", 4, 4), _f("nruh", 8, 2), _f("maxpids", 10, 2),
    _f("nnss", 12, 4), _f("runs", 16, 8, unit="bytes"), _f("erutl", 24, 4, unit="s"),
)
FDP_CONFIG_FIXED = 64
RUH_DESC_SIZE = 4       # byte 0: Reclaim Unit Handle Type (1 initially, 2 persistently isolated)
RUHT_INITIALLY_ISOLATED, RUHT_PERSISTENTLY_ISOLATED = 1, 2

# Reclaim Unit Handle Usage (21h): 8-byte header, 8 bytes per handle; ruha bit 0 host
# specified, bit 1 controller specified
RUHU_HEADER = (_f("nruh", 0, 2),)
RUHU_AT, RUHU_SIZE = 8, 8

FDP_STATS = (_f("hbmw", 0, 16, unit="bytes"), _f("mbmw", 16, 16, unit="bytes"),
             _f("mbe", 32, 16, unit="bytes"))
FDP_STATS_SIZE = 64

# FDP Events (23h): LSP bit 0 set = host events, cleared = controller events
FDP_EVENT = (
    _f("type", 0, 1),          # 0h RU not fully written, 1h RU time limit exceeded, 2h
                               # controller level reset modified RUHs, 3h invalid placement
                               # identifier; 80h media reallocated, 81h implicitly modified RUH
    _f("flags", 1, 1),         # bit 0 PIV, bit 1 NSIDV, bit 2 LV
    _f("pid", 2, 2), _f("timestamp", 4, 6), _f("nsid", 12, 4),
    _f("type_specific", 16, 16, kind=BYTES), _f("rgid", 32, 2), _f("ruhid", 34, 1),
)
FDP_EVENTS_AT, FDP_EVENT_SIZE, FDP_EVENTS_MAX = 64, 64, 63
FDP_EVENT_TYPES = {0x00: "Reclaim Unit Not Fully Written",
                   0x01: "Reclaim Unit Time Limit Exceeded",
                   0x02: "Controller Level Reset Modified Reclaim Unit Handles",
                   0x03: "Invalid Placement Identifier",
                   0x80: "Media Reallocated", 0x81: "Implicitly Modified Reclaim Unit Handle"}
FDP_EVENT_FLAGS = {0: "PIV", 1: "NSIDV", 2: "LV"}
