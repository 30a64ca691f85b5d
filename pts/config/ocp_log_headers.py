"""The headers of the OCP vendor log pages C7h TCG Configuration and C9h Telemetry String, as
data in the form of ocp_log_layout (a LogPage of the header's fields), and where the two
header bytes of CAh Latency Monitor Debug Telemetry stand; from the v2.7 Markdown
(circulardrives/cdi-grading-tool @427b743c docs/; [L] its line). Read by
pts.tools.ocp_header_facts. No rule judges these IDs from the bytes yet: TCGL-* are NOT
CHECKED as needing TCG sessions, TELSTR-LOG-* as needing the telemetry data areas parsed
(pts.config.ocp_id_classes), LMLOG-18 is the requirement table's.

- C7h [L3572-3812]: 512 bytes; Log Page Version 0003h at 495:494 (TCGL-21), GUID
  54E02A9DFA5447C083E6E07EBD244006h at 511:496 (TCGL-22), reserved 3:1 (TCGL-2) and 493:450
  (TCGL-20). The state fields between are TCG's, not decoded here.
- C9h [L3866-3889]: its header; Log Page Version 01h at byte 0 (one byte, TELSTR-LOG-1: read
  here as the two bytes 1:0, byte 1 being reserved and zero, so a non-zero byte 1 shows as
  a reserved byte and a wrong version), reserved 15:1, GUID B13A83691A8F408B9EA495940057AA44h
  at 31:16, the page's size in Dwords (SLPS) at 39:32, reserved 63:40, the Statistics
  Identifier String Table's start in Dwords (SITS, 6Ch asked) at 71:64. The page is longer
  (SLPS Dwords); its first 512 bytes are what the support read of log C9h keeps.
- CAh [L2223-2226, LMLOG-18]: byte 0 the Log Page Identifier (CAh asked), byte 380 the
  Telemetry Host-Initiated Scope (01h asked), when LMDATA-1 bit 3 is set.
"""

from __future__ import annotations

from pts.config.ocp_log_layout import RESERVED, UINT, LogField, LogPage


def _f(name: str, offset: int, size: int, rid: str, versions: tuple[int, ...],
       kind: str = UINT, unit: str = "") -> LogField:
    return LogField(name, offset, size, (("2.7", rid),), versions, kind, unit)


C7 = LogPage(0xC7, "TCG Configuration", "0x54e02a9dfa5447c083e6e07ebd244006",
             {3: 512}, {3: "2.7"}, version_at=494, guid_at=496, fields=(
    _f("reserved_1", 1, 3, "TCGL-2", (3,), RESERVED),
    _f("reserved_450", 450, 44, "TCGL-20", (3,), RESERVED),
))
C9 = LogPage(0xC9, "Telemetry String", "0xb13a83691a8f408b9ea495940057aa44",
             {1: 512}, {1: "2.7"}, version_at=0, guid_at=16, fields=(
    _f("reserved_2", 2, 14, "TELSTR-LOG-2", (1,), RESERVED),
    _f("string_log_page_size", 32, 8, "TELSTR-LOG-4", (1,), unit="Dwords"),
    _f("reserved_40", 40, 24, "TELSTR-LOG-5", (1,), RESERVED),
    _f("statistics_identifier_string_table_start", 64, 8, "TELSTR-LOG-6", (1,),
       unit="Dwords"),
))
CA_SIZE, CA_LID_AT, CA_SCOPE_AT = 512, 0, 380
