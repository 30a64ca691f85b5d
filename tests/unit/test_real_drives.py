"""Every parser of the suite on what real NVMe drives printed (tests/data/recorded, kind
"recorded": a FADU DELTA U.2 1.92TB and a KIOXIA CD8 KCD81VUG6T40, nvme-cli and smartctl
7.4 JSON from circulardrives/cdi-grading-tool; see that folder's README), and the rules
those outputs teach (both key styles of nvme-cli's OCP plugin, on what nvme-cli printed:
tests/unit/test_ocp_key_styles.py): 128-bit counters as {hi, lo},
a number or a decimal string, all-FF raw and 65535 normalised values as "not supported",
fields gated on the C0 log page version, kelvin temperatures, critical_warning as a number
or an object. A figure a drive does not give is None (not given), never 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pts.device import media_writes
from pts.report.pages.counters import waf_block
from pts.results import records
from pts.stored import waf
from pts.tools import nvme, nvme_ocp, smartctl
from tests.support.helpers import RECORDED
from tests.support.synthetic.drive_logs import recorded_counters

DRIVES = ("fadu-delta-u2", "kioxia-cd8")


def text(kind: str, drive: str) -> str:
    return (RECORDED / f"{kind}_{drive}.json").read_text()


def test_identify_controller():
    fadu = nvme.parse_id_ctrl(text("nvme-id-ctrl", "fadu-delta-u2"))
    assert (fadu.model, fadu.serial, fadu.firmware) == ("FADU DELTA U.2 1.92TB", "MOCK000002",
                                                        "1LZ090VQ")
    # SANICAP 0x60000001: crypto erase only; FNA 4: crypto erase with Format; OACS 0x0f
    assert fadu.sanitize_actions == ["crypto"] and fadu.format_crypto_erase
    assert fadu.format_supported and not fadu.write_cache_present       # VWC 4: bit 0 clear
    cd8 = nvme.parse_id_ctrl(text("nvme-id-ctrl", "kioxia-cd8"))
    assert (cd8.model, cd8.firmware) == ("KIOXIA KCD81VUG6T40", "0103")
    # SANICAP 0xa0000002: block erase only; FNA 2: no crypto erase with Format; OACS 0x25f
    assert cd8.sanitize_actions == ["block"] and not cd8.format_crypto_erase
    assert cd8.format_supported and not cd8.format_all_namespaces


def test_smart_log_in_kelvin_with_a_numeric_critical_warning():
    """nvme-cli prints the composite temperature in kelvin: 307 K is 34 degrees C, what
    smartctl printed for the same drive at the same moment (its JSON: temperature 34)."""
    fadu = nvme.parse_smart_log(text("nvme-smart-log", "fadu-delta-u2"))
    assert (fadu.temperature_c, fadu.critical_warning, fadu.percent_used) == (34, 0, 0)
    assert (fadu.data_units_written, fadu.error_log_entries) == (1_803_919, 0)
    cd8 = nvme.parse_smart_log(text("nvme-smart-log", "kioxia-cd8"))
    assert (cd8.temperature_c, cd8.percent_used, cd8.data_units_written) == (34, 1,
                                                                            1_832_600_650)
    assert (cd8.thermal_transitions, cd8.warning_temp_minutes) == (3 + 1, 53)
    for drive in DRIVES:
        smart = json.loads(text("smartctl-json_nvme", drive))
        assert nvme.parse_smart_log(text("nvme-smart-log", drive)).temperature_c == \
            smart["temperature"]["current"]


def test_critical_warning_as_the_object_newer_nvme_cli_prints():
    """nvme-cli 2.11 prints critical_warning as an object (its "value" and one key per bit;
    shape read in netdata's v2.11 testdata): the Kioxia log with that object, bits 0 and 2
    set, reads 0x05 as the number form does."""
    doc = json.loads(text("nvme-smart-log", "kioxia-cd8"))
    doc["critical_warning"] = {"value": 5, "available_spare": 1, "temp_threshold": 0,
                               "reliability_degraded": 1, "ro": 0, "vmbu_failed": 0,
                               "pmr_ro": 0}
    assert nvme.parse_smart_log(json.dumps(doc)).critical_warning == 5
    doc["critical_warning"] = 5
    assert nvme.parse_smart_log(json.dumps(doc)).critical_warning == 5


def test_error_log_agrees_with_the_smart_log():
    """No parser reads `nvme error-log` yet (the purge names it for a person to run); its
    recorded entries all have error_count 0, as the smart-log's 0 error entries say."""
    for drive in DRIVES:
        entries = json.loads(text("nvme-error-log", drive))["errors"]
        assert len(entries) == 64
        assert sum(e["error_count"] != 0 for e in entries) == \
            nvme.parse_smart_log(text("nvme-smart-log", drive)).error_log_entries == 0


def test_ocp_c0_of_both_drives():
    fadu = nvme_ocp.parse_ocp_c0(text("nvme-ocp-smart-add-log", "fadu-delta-u2"))
    assert (fadu.version, fadu.guid) == (2, "0xafd514c97c6f4f9ca4f2bfea2810afc5")
    assert fadu.fields["physical_media_units_written"] == 1_011_179_618_304
    assert fadu.fields["bad_system_nand_blocks_raw"] == 0
    assert fadu.fields["bad_system_nand_blocks_normalized"] == 100
    assert fadu.fields["endurance_estimate"] == 24_785_187_892_101_120
    cd8 = nvme_ocp.parse_ocp_c0(text("nvme-ocp-smart-add-log", "kioxia-cd8"))
    assert cd8.version == 3 and cd8.fields["soft_ecc_error_count"] == 106_686
    assert cd8.fields["physical_media_units_written"] == 1_359_892_586_692_608


def test_all_ff_raw_and_65535_normalised_are_not_supported():
    """The CD8 prints Bad System NAND Blocks raw 281474976710655 (0xFFFFFFFFFFFF, the 6-byte
    field all ones) and normalised 65535 (0xFFFF): it does not count them. Not given, not a
    count of 281 trillion bad blocks and not 0; its bad user NAND blocks (0, 100) are real."""
    cd8 = nvme_ocp.parse_ocp_c0(text("nvme-ocp-smart-add-log", "kioxia-cd8"))
    assert cd8.fields["bad_system_nand_blocks_raw"] is None
    assert cd8.fields["bad_system_nand_blocks_normalized"] is None
    assert (cd8.fields["bad_user_nand_blocks_raw"],
            cd8.fields["bad_user_nand_blocks_normalized"]) == (0, 100)
    assert {"bad_system_nand_blocks_raw", "bad_system_nand_blocks_normalized"} <= \
        set(cd8.not_supported)


def test_fields_gated_on_the_log_page_version():
    """Both pages print every field nvme-cli knows, later ones as zeros. The DSSD
    specification version (bytes 103:98), the NVMe Base Errata Version (byte 130), PCIe Link
    Retraining Count and Power State Change Count are fields from version 3: the OCP 2.0 r21
    text (log page version 0003h) defines them as SMART-13, -20, -29 and -31. The CD8's v3
    page gives them (Major 2, the others 0); the FADU's v2 page (NVMe Cloud SSD 1.0) prints 0
    there: not given."""
    fadu = nvme_ocp.parse_ocp_c0(text("nvme-ocp-smart-add-log", "fadu-delta-u2"))
    cd8 = nvme_ocp.parse_ocp_c0(text("nvme-ocp-smart-add-log", "kioxia-cd8"))
    assert fadu.fields["major_version"] is None and cd8.fields["major_version"] == 2
    v3 = ("nvme_base_errata_version", "pcie_link_retraining_count", "power_state_change_count")
    for name in v3:
        assert fadu.fields[name] is None and name in fadu.not_in_version, name
        assert cd8.fields[name] == 0 and name not in cd8.not_in_version, name
    assert cd8.not_in_version == ()
    # the same field on a version 4 page is read
    doc = json.loads(text("nvme-ocp-smart-add-log", "kioxia-cd8"))
    doc["Log page version"], doc["PCIe Link Retraining Count"] = 4, 7
    assert nvme_ocp.parse_ocp_c0(json.dumps(doc)).fields["pcie_link_retraining_count"] == 7


@pytest.mark.parametrize("printed", [{"hi": 0, "lo": 1_359_892_586_692_608},
                                     1_359_892_586_692_608, "1359892586692608",
                                     "1,359,892,586,692,608"])
def test_128_bit_counters_in_every_form(printed):
    doc = json.loads(text("nvme-ocp-smart-add-log", "kioxia-cd8"))
    doc["Physical media units written"] = printed
    assert nvme_ocp.parse_ocp_c0(json.dumps(doc)).fields["physical_media_units_written"] == \
        1_359_892_586_692_608
    big = {"hi": 1, "lo": 5}
    assert nvme.uint128(big) == (1 << 64) + 5


def test_smartctl_json_of_an_nvme_drive():
    """smartctl 7.4's JSON of the CD8: its NVMe health log gives percentage used, media
    errors and host writes (Data Units Written, kept in the drive's unit of 512,000 bytes, not
    as 1,000 sectors of 512 bytes: the counter moves once per unit); an NVMe drive has no
    reallocated / pending / offline-uncorrectable sectors: not given (None), not 0."""
    h = smartctl.parse(text("smartctl-json_nvme", "kioxia-cd8"))
    assert (h.protocol, h.smart_passed, h.temperature_c, h.power_on_hours) == ("NVMe", 1, 34,
                                                                               17_011)
    assert (h.percent_used, h.media_errors) == (1, 0)
    assert (h.data_units_written, h.sectors_written, h.sector_bytes) == (1_832_600_650, None,
                                                                         None)
    assert (h.reallocated_sectors, h.pending_sectors, h.offline_uncorrectable) == (None,) * 3
    fadu = smartctl.parse(text("smartctl-json_nvme", "fadu-delta-u2"))
    assert (fadu.percent_used, fadu.data_units_written) == (0, 1_803_919)


def test_lifetime_waf_of_the_real_drives(monkeypatch, tmp_path):
    """Lifetime WAF = Physical Media Units Written (C0h, bytes) / (Data Units Written x
    512,000 bytes), by hand:
      FADU: 1,011,179,618,304 / (1,803,919 x 512,000 = 923,606,528,000) = 1.09482
      CD8:  1,359,892,586,692,608 / (1,832,600,650 x 512,000 = 938,291,532,800,000) = 1.44933
    """
    fadu = recorded_counters(monkeypatch, tmp_path, "fadu-delta-u2")
    assert fadu["media_source"] == media_writes.OCP
    assert waf.lifetime(fadu) == pytest.approx(1_011_179_618_304 / 923_606_528_000)
    assert waf.lifetime(fadu) == pytest.approx(1.095, abs=0.0005)
    cd8 = recorded_counters(monkeypatch, tmp_path / "cd8", "kioxia-cd8")
    assert waf.lifetime(cd8) == pytest.approx(1_359_892_586_692_608 / 938_291_532_800_000)
    assert waf.lifetime(cd8) == pytest.approx(1.449, abs=0.0005)
    # a drive without a media counter has no lifetime WAF: not given, not 0
    assert waf.lifetime({"host_writes": 5, "page_size": 512_000} |
                        media_writes.keys(None, None, "endgid: 0")) is None


def test_the_counters_page_gives_the_drive_lifetime_waf(monkeypatch, tmp_path):
    """The CD8's counters at two steps of a test (the second 100 GB later, hand-made): the
    page gives the test's WAF and the drive's lifetime WAF at its first reading, 1.449."""
    first = recorded_counters(monkeypatch, tmp_path, "kioxia-cd8")
    later = first | {"host_writes": first["host_writes"] + 195_313,      # 100.000256 GB
                     "media_bytes": first["media_bytes"] + 150_000_000_000}
    found = waf.from_records([records.DeviceCounters(test="iops", when=w, round=None,
                                                     source="smart-log", counters=c)
                              for w, c in (("after purge", first), ("test end", later))],
                             Path("."))
    assert found.value == pytest.approx(150e9 / (195_313 * 512_000))
    assert (found.lifetime_at, round(found.lifetime, 3)) == ("after purge", 1.449)
    text = " ".join(f.text for f in waf_block(found))
    assert "Lifetime WAF of the drive at after purge: 1.449" in text
    assert found.as_dict()["lifetime"] == found.lifetime
