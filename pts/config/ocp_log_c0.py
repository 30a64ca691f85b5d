"""The SMART / Health Information Extended log page (Log Identifier C0h) of the OCP Datacenter
NVMe SSD Specification, every field of every log page version, as data (what a field is:
ocp_log_layout.LogField).

Log page versions (SMART-27): 2 = NVMe Cloud SSD Specification 1.0, 3 = OCP 2.0, 4 = 2.5,
5 = 2.6, 6 = 2.7 (nvme-cli #2972, #2966; 3 and 6 stated by the texts: "Shall be set to
0003h", v2.0 r21 p. 21; "0006h", v2.7 line 1794).

Sources of each fact, by the tags used in the comments:
- [2.0 pN]: the v2.0 r21 PDF's C0h table (section 4.8.5), page N (pdftotext of
  freews/general_parser @e094013b source_doc/).
- [2.7 L]: the v2.7 Markdown (circulardrives/cdi-grading-tool @427b743c docs/), line L; its
  revision history (line 11667) names SMART-30, -40 and -52 new in 2.7: page version 6.
- [cli]: nvme-cli's OCP plugin (linux-nvme/nvme-cli @e117ee68, plugins/ocp/
  ocp-smart-extended-log.h: offsets; ocp-print-json.c: its JSON keys, both styles, and the
  versions it prints a field for: 2-3 the DSSD version, errata, retraining and power state
  change fields; 4 adds bytes 131 and 215:208; 5 the rest up to byte 357; 6 bytes 223 and
  365:358). No 2.5 / 2.6 text was at hand: the first version of the fields added in 4 and 5
  is nvme-cli's (the 2.0 text has none of them and 2.7's history names only -30, -40, -52
  as its own).
- The Cloud SSD 1.0 text (version 2) was not found: a version 2 page carries the fields of
  bytes 0-97, 104-129 and 136-191 that v2.0 keeps under the same IDs; the fields v2.0 has in
  bytes 98-103, 130 and 192-207 are taken as first in version 3 (a real version 2 page, the
  FADU's in tests/data/recorded, prints 0 in all of them).

SMART IDs: v2.0 and v2.7 give the same ID to the same field [2.0 p15-21; 2.7 L1250-1799]; what
the same ID names differently is reserved space: v2.0's SMART-30 is bytes 135:131 reserved
(2.7: byte 131-133 errata versions, SMART-30 Proactive Bad Die Retirement at 135:134) and
SMART-26 is 493:208 reserved (2.7: 493:366).
"""

from __future__ import annotations

from pts.config.ocp_log_layout import ASCII, RESERVED, UINT, UUID, LogField, LogPage, since

NEWEST = 6
GUID = "0xafd514c97c6f4f9ca4f2bfea2810afc5"   # SMART-28 [2.0 p21; 2.7 L1799]
SPEC_OF = {2: "Cloud SSD 1.0", 3: "2.0", 4: "2.5", 5: "2.6", 6: "2.7"}


def _f(name: str, offset: int, size: int, rid: str | None, first: int, k1: str | None,
       k2: str | None, unit: str = "", kind: str = UINT, old: tuple[str, ...] = ()
       ) -> LogField:
    """A C0h field; its ID is the same in 2.0 and 2.7 when version 3 (2.0) carries it."""
    ids = () if rid is None else ((("2.0", rid),) if first <= 3 else ()) + (("2.7", rid),)
    return LogField(name, offset, size, ids, since(first, NEWEST), kind, unit,
                    keys=(k1, k2), old_keys=old)


FIELDS = (
    # bytes 31:0 [2.0 p15; 2.7 L1250-1254; cli]
    _f("physical_media_units_written", 0, 16, "SMART-1", 2, "Physical media units written",
       "physical_media_units_written", "bytes"),
    _f("physical_media_units_read", 16, 16, "SMART-2", 2, "Physical media units read",
       "physical_media_units_read", "bytes"),
    # SMART-3 / -4: raw 6 bytes, normalized 2 bytes (39:38, 47:46) [2.7 L1264-1290]
    _f("bad_user_nand_blocks_raw", 32, 6, "SMART-3", 2, "Bad user nand blocks - Raw",
       "bad_user_nand_blocks_raw", "blocks"),
    _f("bad_user_nand_blocks_normalized", 38, 2, "SMART-3", 2,
       "Bad user nand blocks - Normalized", "bad_user_nand_blocks_normalized", "%"),
    _f("bad_system_nand_blocks_raw", 40, 6, "SMART-4", 2, "Bad system nand blocks - Raw",
       "bad_system_nand_blocks_raw", "blocks"),
    _f("bad_system_nand_blocks_normalized", 46, 2, "SMART-4", 2,
       "Bad system nand blocks - Normalized", "bad_system_nand_blocks_normalized", "%"),
    # [2.0 p16-17; 2.7 L1299-1347]
    _f("xor_recovery_count", 48, 8, "SMART-5", 2, "XOR recovery count", "xor_recovery_count"),
    _f("uncorrectable_read_errors", 56, 8, "SMART-6", 2, "Uncorrectable read error count",
       "uncorrectable_read_errors"),
    _f("soft_ecc_error_count", 64, 8, "SMART-7", 2, "Soft ecc error count",
       "soft_ecc_error_count"),
    # SMART-8: detected 75:72, corrected 79:76 [2.7 L1323-1337]
    _f("end_to_end_detected_errors", 72, 4, "SMART-8", 2, "End to end detected errors",
       "end_to_end_detected_errors"),
    _f("end_to_end_corrected_errors", 76, 4, "SMART-8", 2, "End to end corrected errors",
       "end_to_end_corrected_errors"),
    _f("system_data_percent_used", 80, 1, "SMART-9", 2, "System data percent used",
       "system_data_percent_used", "%"),
    _f("refresh_count", 81, 7, "SMART-10", 2, "Refresh counts", "refresh_count", "blocks"),
    # SMART-11: maximum 91:88, minimum 95:92 [2.7 L1364-1375]
    _f("max_user_data_erase_count", 88, 4, "SMART-11", 2, "Max User data erase counts",
       "max_user_data_erase_count", "erase cycles"),
    _f("min_user_data_erase_count", 92, 4, "SMART-11", 2, "Min User data erase counts",
       "min_user_data_erase_count", "erase cycles"),
    # SMART-12: events byte 96, current status byte 97 (00h-03h) [2.7 L1381-1393]
    _f("thermal_throttling_events", 96, 1, "SMART-12", 2,
       "Number of Thermal throttling events", "thermal_throttling_events", "events"),
    _f("current_throttling_status", 97, 1, "SMART-12", 2, "Current throttling status",
       "current_throttling_status"),
    # SMART-13: 98 errata, 100:99 point, 102:101 minor, 103 major [2.0 p18; 2.7 L1396-1400]
    _f("errata_version", 98, 1, "SMART-13", 3, "Errata Version Field", "errata_version_field"),
    _f("point_version", 99, 2, "SMART-13", 3, "Point Version Field", "point_version_field"),
    _f("minor_version", 101, 2, "SMART-13", 3, "Minor Version Field", "minor_version_field"),
    _f("major_version", 103, 1, "SMART-13", 3, "Major Version Field", "major_version_field"),
    # [2.0 p19; 2.7 L1412-1452]
    _f("pcie_correctable_errors", 104, 8, "SMART-14", 2, "PCIe correctable error count",
       "pcie_correctable_errors"),
    _f("incomplete_shutdowns", 112, 4, "SMART-15", 2, "Incomplete shutdowns",
       "incomplete_shutdowns"),
    _f("reserved_116", 116, 4, "SMART-16", 2, None, None, kind=RESERVED),
    _f("percent_free_blocks", 120, 1, "SMART-17", 2, "Percent free blocks",
       "percent_free_blocks", "%"),
    _f("reserved_121", 121, 7, "SMART-18", 2, None, None, kind=RESERVED),
    # FFFFh: no PLP protection [2.7 L1443-1452]
    _f("capacitor_health", 128, 2, "SMART-19", 2, "Capacitor health", "capacitor_health", "%"),
    # Errata revisions: an ASCII letter ('a', 'b', ...) or 0 [2.0 p20; 2.7 L1468-1500]; nvme-cli
    # prints the byte's value. nvme-cli 2.3 spells byte 130 "NVMe Errata Version".
    _f("nvme_base_errata_version", 130, 1, "SMART-20", 3, "NVMe Base Errata Version",
       "nvme_base_errata_version", "ASCII code", old=("NVMe Errata Version",)),
    _f("nvme_command_set_errata_version", 131, 1, "SMART-32", 4,
       "NVMe Command Set Errata Version", "nvme_command_set_errata_version", "ASCII code"),
    _f("nvme_over_pcie_errata_version", 132, 1, "SMART-34", 5,
       "NVMe Over Pcie Errata Version", "nvme_over_pcie_errata_version", "ASCII code"),
    _f("nvme_mi_errata_version", 133, 1, "SMART-35", 5, "NVMe Mi Errata Version",
       "nvme_mi_errata_version", "ASCII code"),
    # new in 2.7 [2.7 L1501, L11667]; nvme-cli prints no such field (its rsvd134)
    _f("proactive_bad_die_retirement", 134, 2, "SMART-30", 6, None, None, "dies"),
    # [2.0 p20-21; 2.7 L1513-1556]
    _f("unaligned_io", 136, 8, "SMART-21", 2, "Unaligned I/O", "unaligned_io", "I/Os"),
    _f("security_version_number", 144, 8, "SMART-22", 2, "Security Version Number",
       "security_version_number"),
    _f("nuse", 152, 8, "SMART-23", 2, "NUSE - Namespace utilization",
       "nuse_namespace_utilization", "logical blocks"),
    _f("plp_start_count", 160, 16, "SMART-24", 2, "PLP start count", "plp_start_count"),
    _f("endurance_estimate", 176, 16, "SMART-25", 2, "Endurance estimate",
       "endurance_estimate", "bytes"),
    _f("pcie_link_retraining_count", 192, 8, "SMART-29", 3, "PCIe Link Retraining Count",
       "pcie_link_retraining_count"),
    _f("power_state_change_count", 200, 8, "SMART-31", 3, "Power State Change Count",
       "power_state_change_count"),
    # The Firmware Revision (8 ASCII bytes in NVMe) of the lowest revision rollback may reach
    # [2.7 L1574]; nvme-cli prints the 8 bytes as a number: kept a number here (its bytes:
    # value.to_bytes(8, "little")).
    _f("lowest_permitted_firmware_revision", 208, 8, "SMART-33", 4,
       "Lowest Permitted Firmware Revision", "lowest_permitted_firmware_revision"),
    # [2.7 L1583-1609]
    _f("total_media_dies", 216, 2, "SMART-36", 5, "Total media dies", "total_media_dies",
       "dies"),
    _f("media_die_failure_tolerance", 218, 2, "SMART-37", 5, "Total die failure tolerance",
       "total_die_failure_tolerance", "dies"),
    _f("media_dies_offline", 220, 2, "SMART-38", 5, "Media dies offline",
       "media_dies_offline", "dies"),
    _f("max_temperature_recorded", 222, 1, "SMART-39", 5, "Max temperature recorded",
       "max_temperature_recorded", "°C"),
    # new in 2.7 [2.7 L1599, L11667]; nvme-cli's style 2 lacks the version 6 fields
    _f("form_factor", 223, 1, "SMART-40", 6, "Form factor", None),
    _f("nand_avg_erase_count", 224, 8, "SMART-41", 5, "Nand avg erase count",
       "nand_avg_erase_count", "erase cycles"),
    _f("command_timeouts", 232, 4, "SMART-42", 5, "Command timeouts", "command_timeouts"),
    # SMART-43..45: 4 bytes raw, 1 byte normalized, 3 reserved [2.7 L1615-1657; 2.7's
    # history: "fixed byte addresses" of 2.6's text, nvme-cli reads 2.6 pages at these]
    _f("system_area_program_fail_raw", 236, 4, "SMART-43", 5,
       "Sys area program fail count raw", "sys_area_program_fail_count_raw"),
    _f("system_area_program_fail_normalized", 240, 1, "SMART-43", 5,
       "Sys area program fail count noralized", "sys_area_program_fail_count_noralized", "%"),
    _f("reserved_241", 241, 3, "SMART-43", 5, None, None, kind=RESERVED),
    _f("system_area_uncorrectable_raw", 244, 4, "SMART-44", 5,
       "Sys area uncorrectable read count raw", "sys_area_uncorrectable_read_count_raw"),
    _f("system_area_uncorrectable_normalized", 248, 1, "SMART-44", 5,
       "Sys area uncorrectable read count noralized",
       "sys_area_uncorrectable_read_count_noralized", "%"),
    _f("reserved_249", 249, 3, "SMART-44", 5, None, None, kind=RESERVED),
    _f("system_area_erase_fail_raw", 252, 4, "SMART-45", 5, "Sys area erase fail count raw",
       "sys_area_erase_fail_count_raw"),
    _f("system_area_erase_fail_normalized", 256, 1, "SMART-45", 5,
       "Sys area erase fail count noralized", "sys_area_erase_fail_count_noralized", "%"),
    _f("reserved_257", 257, 3, "SMART-45", 5, None, None, kind=RESERVED),
    # [2.7 L1658-1700]
    _f("max_peak_power_capability", 260, 2, "SMART-46", 5, "Max peak power capability",
       "max_peak_power_capability", "W"),
    _f("current_average_power", 262, 2, "SMART-47", 5, "Current max avg power",
       "current_max_avg_power", "W"),
    _f("lifetime_power_consumed", 264, 6, "SMART-48", 5, "Lifetime power consumed",
       "lifetime_power_consumed", "kWh"),
    # "<major>.<minor>.<release>" space padded [2.7 L1701-1746]
    _f("dssd_firmware_revision", 270, 8, "SMART-49", 5, "Dssd firmware revision",
       "dssd_firmware_revision", kind=ASCII),
    _f("dssd_firmware_build_uuid", 278, 16, "SMART-50", 5, "Dssd firmware build UUID",
       "dssd_firmware_build_uuid", kind=UUID),
    _f("dssd_firmware_build_label", 294, 64, "SMART-51", 5, "Dssd firmware build label",
       "dssd_firmware_build_label", kind=ASCII),
    # SMART-52: raw 363:358, normalized 365:364 [cli; 2.7 L1767-1790 repeats SMART-4's
    # sub-table (47:46, 45:40), a copying slip: 8 bytes at 365:358 as SMART-3's split]
    _f("dies_in_use_bad_nand_blocks_raw", 358, 6, "SMART-52", 6, "Die use badnandblock raw",
       None, "blocks"),
    _f("dies_in_use_bad_nand_blocks_normalized", 364, 2, "SMART-52", 6,
       "Die use badnandblock normal", None, "%"),
    _f("reserved_366", 366, 128, "SMART-26", 6, None, None, kind=RESERVED),
)
# v2.0's reserved spans, under IDs v2.7 gives to fields [2.0 p20-21]
RESERVED_2_0 = (
    LogField("reserved_131", 131, 5, (("2.0", "SMART-30"),), (3,), RESERVED),
    LogField("reserved_208", 208, 286, (("2.0", "SMART-26"),), (3,), RESERVED),
)
# SMART-27 Log Page Version (495:494), SMART-28 Log Page GUID (511:496) [2.0 p21; 2.7 L1794]
PAGE = LogPage(0xC0, "SMART / Health Information Extended", GUID,
               {v: 512 for v in SPEC_OF}, SPEC_OF, version_at=494, guid_at=496,
               fields=FIELDS)
VERSION_ID = {"2.0": "SMART-27", "2.7": "SMART-27"}
GUID_ID = {"2.0": "SMART-28", "2.7": "SMART-28"}
