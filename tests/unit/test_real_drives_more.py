"""The suite's parsers and the paths that use them on more real drives (tests/data/recorded,
kind "recorded"; see that folder's README): nvme-cli id-ctrl, smart-log and error-log and
smartctl 7.4 JSON of a KIOXIA CM6, an Intel Optane P1600X and an Intel Optane P5800X
(circulardrives/cdi-grading-tool), and smartctl 7.1 / 7.3 JSON of four enterprise NVMe drives
of four vendors (prometheus-community/smartctl_exporter), one of them a Samsung PM1725b
whose capacitor-backed write cache had failed. What they teach, each with its test: VWC
bits 2:1 are the flush behaviour, not a write cache; the purge each drive gets; smart-log
kelvin against smartctl's degrees; error log entries are commands the drive refused, not
a health failure; no C0h, no lifetime WAF (not given, never 0); smartctl's FAILED of an NVMe
drive carries the critical-warning bit that caused it. The FADU and CD8 bundles are
tests/unit/test_real_drives.py."""

from __future__ import annotations

import json

import pytest

from pts.conditioning import purge, write_cache
from pts.device import health, health_smartctl, media_writes
from pts.device.identity import BlockDevice, Identity
from pts.results import records
from pts.stored import waf
from pts.tools import nvme, smartctl
from tests.support.helpers import RECORDED, RecordedRunner, Reply

NEW = ("kioxia-cm6", "intel-p1600x", "intel-p5800x")
ALL = ("fadu-delta-u2", "kioxia-cd8", *NEW)
DEV = BlockDevice("/dev/nvme9n1", "/dev/nvme9n1", "nvme9n1", (259, 9), 1 << 30, 512, 512,
                  "nvme", False, Identity("m", "s", "f", "nvme id-ctrl"))
QEMU_ID_NS = Reply(out="../qemu-7.2/nvme-id-ns.json")     # ENDGID 0, LBA format 0 (512 B)


def text(kind: str, drive: str) -> str:
    return (RECORDED / f"{kind}_{drive}.json").read_text()


@pytest.mark.parametrize("drive, model, firmware, sanitize, crypto_format, all_ns", [
    # CM6: SANICAP 0xa0000002 (block erase; bits 31:29 are NODMMAS/NDI), FNA 2, OACS 0x25f
    ("kioxia-cm6", "KCM61VUL3T20", "0106", ["block"], False, False),
    # P1600X: SANICAP 3 (crypto and block erase), FNA 7 (all three Format attributes)
    ("intel-p1600x", "INTEL SSDPEK1A118GA", "U5110550", ["block", "crypto"], True, True),
    # P5800X: SANICAP 0x60000003, FNA 4 (crypto erase with Format, per namespace)
    ("intel-p5800x", "INTEL SSDPF21Q800GB", "L0310600", ["block", "crypto"], True, False),
])
def test_identify_controller(drive, model, firmware, sanitize, crypto_format, all_ns):
    ctrl = nvme.parse_id_ctrl(text("nvme-id-ctrl", drive))
    assert (ctrl.model, ctrl.firmware) == (model, firmware)
    assert ctrl.serial.startswith(("MOCK", "PH"))      # masked at the source
    assert ctrl.sanitize_actions == sanitize and ctrl.format_supported
    assert (ctrl.format_crypto_erase, ctrl.format_all_namespaces) == (crypto_format, all_ns)


def test_flush_behaviour_bits_are_not_a_write_cache(monkeypatch):
    """The P5800X (Optane: no volatile cache) prints VWC 6: bits 2:1 = 11b are its Flush
    Behavior (NVMe Base Specification 2.0, Identify Controller VWC), bit 0 = 0 says no
    volatile write cache. The suite must not try to switch a cache that is not there."""
    assert nvme.parse_id_ctrl(text("nvme-id-ctrl", "intel-p5800x")).vwc == 6
    run = RecordedRunner({("nvme", "id-ctrl"): [Reply(out="nvme-id-ctrl_intel-p5800x.json")]}
                         ).install(monkeypatch)
    state = write_cache.apply(DEV, "WCD")
    assert (state.actual, state.settable) == (write_cache.ABSENT, False)
    assert state.how == "NVMe id-ctrl VWC bit 0 = 0" and state.deviation() is None
    assert [c[1] for c in run.calls] == ["id-ctrl"]          # no Set Features sent


@pytest.mark.parametrize("drive, method, sanact", [
    ("fadu-delta-u2", "NVMe Sanitize (crypto erase)", 4),   # crypto erase only
    ("kioxia-cd8", "NVMe Sanitize (block erase)", 2),
    ("kioxia-cm6", "NVMe Sanitize (block erase)", 2),
    ("intel-p1600x", "NVMe Sanitize (block erase)", 2),     # block and crypto: block first
    ("intel-p5800x", "NVMe Sanitize (block erase)", 2),
])
def test_the_purge_each_real_drive_gets(monkeypatch, drive, method, sanact):
    """`--purge auto` on each drive's own Identify Controller (the namespace: QEMU's id-ns):
    planning reads only, and picks the Sanitize action SANICAP offers, block erase first."""
    run = RecordedRunner({("nvme", "id-ctrl"): [Reply(out=f"nvme-id-ctrl_{drive}.json")],
                          ("nvme", "id-ns"): [QEMU_ID_NS]}).install(monkeypatch)
    chosen = purge.plan("auto", DEV, say=lambda s: None)
    assert chosen.method == method
    assert chosen.command == ["nvme", "sanitize", "/dev/nvme9", f"--sanact={sanact}"]
    assert [c[1] for c in run.calls] == ["id-ctrl", "id-ns"]


@pytest.mark.parametrize("drive, kelvin", [("fadu-delta-u2", 307), ("kioxia-cd8", 307),
                                           ("kioxia-cm6", 309), ("intel-p1600x", 313),
                                           ("intel-p5800x", 301)])
def test_smart_log_kelvin_is_smartctls_celsius(drive, kelvin):
    """nvme-cli's smart-log and smartctl read the same log 02h of the same drive in the same
    bundle: composite temperature in kelvin there, degrees Celsius here (K - 273), and the
    same Data Units Written, Percentage Used and error log entry count."""
    doc = json.loads(text("nvme-smart-log", drive))
    smart = nvme.parse_smart_log(text("nvme-smart-log", drive))
    other = json.loads(text("smartctl-json_nvme", drive))
    log = other["nvme_smart_health_information_log"]
    assert doc["temperature"] == kelvin
    assert smart.temperature_c == kelvin - 273 == other["temperature"]["current"]
    assert (smart.data_units_written, smart.percent_used, smart.error_log_entries) == \
        (log["data_units_written"], log["percentage_used"], log["num_err_log_entries"])
    assert smartctl.parse(text("smartctl-json_nvme", drive)).data_units_written == \
        smart.data_units_written


def test_smart_logs_of_the_cm6_and_the_optanes():
    cm6 = nvme.parse_smart_log(text("nvme-smart-log", "kioxia-cm6"))
    assert (cm6.percent_used, cm6.data_units_written, cm6.media_errors) == (2, 2_579_165_678, 0)
    p1600x = nvme.parse_smart_log(text("nvme-smart-log", "intel-p1600x"))
    assert (p1600x.warning_temp_minutes, p1600x.data_units_written) == (1, 1_111_158)
    p5800x = nvme.parse_smart_log(text("nvme-smart-log", "intel-p5800x"))
    # 9,300,569,805 data units: 4.76 PB written by the host to an 800 GB drive, 5 % used
    assert (p5800x.percent_used, p5800x.bytes_written) == (5, 9_300_569_805 * 512_000)


def counters_at(when: str, smart: nvme.Smart, **more) -> records.DeviceCounters:
    return records.DeviceCounters(test="iops", when=when, round=None, source=health.SOURCE,
                                  counters=smart.as_dict() | more)


def test_error_log_entries_are_refused_commands_not_a_health_failure():
    """The CM6's smart-log counts 121 error log entries with 0 media errors and no critical
    warning; its error log keeps the newest (error_count 121, 120, 119): status 0x6002 is
    Invalid Field in Command (SCT 0, SC 02h) with More and Do Not Retry, at byte 40 or 43 of
    the command (CDW10: the host asked for something the drive does not have), no LBA (all
    ones). A drive refusing a host's question is healthy: the health check stays quiet while
    the count rises, as it does when a run asks a drive for logs it lacks."""
    smart = nvme.parse_smart_log(text("nvme-smart-log", "kioxia-cm6"))
    entries = [e for e in json.loads(text("nvme-error-log", "kioxia-cm6"))["errors"]
               if e["error_count"]]
    assert [e["error_count"] for e in entries] == [121, 120, 119] == \
        [smart.error_log_entries - i for i in range(3)]
    for e in entries:
        status = e["status_field"]
        assert (status >> 8 & 0x7, status & 0xFF, bool(status & 0x2000),
                bool(status & 0x4000)) == (0, 0x02, True, True)
        assert e["parm_error_location"] in (40, 43) and e["lba"] == (1 << 64) - 1
    later = smart.as_dict() | {"error_log_entries": smart.error_log_entries + 4}
    found = [counters_at("test start", smart), counters_at("test end", smart, **later)]
    assert health.problems(found) == []
    # the same log with a critical warning is a health failure (the check does look)
    warned = smart.as_dict() | {"critical_warning": 0x10}
    assert health.problems([counters_at("test start", smart),
                            counters_at("test end", smart, **warned)]) == \
        ["critical warning 0x10 (volatile memory backup failed) at 1 of 2 steps, first at "
         "test end"]


@pytest.mark.parametrize("drive", NEW)
def test_no_c0h_no_lifetime_waf(monkeypatch, tmp_path, drive):
    """The CM6 and the two Optanes print no OCP C0h (their bundles have none): media writes
    and lifetime WAF are not given, never 0, and the record says why. nvme-cli's refusal is
    QEMU 10's recorded answer to `nvme get-log --log-id=0xc3` (a log it lacks: Invalid Field
    in Command, 0x4002; the C0h page is read as bytes) and QEMU 7.2's to `nvme ocp
    smart-add-log` (`ret = 16386`), standing in for theirs, which were not recorded; the
    namespace is QEMU's (ENDGID 0: no Endurance Group)."""
    RecordedRunner({("nvme", "id-ns"): [QEMU_ID_NS],
                    ("nvme", "get-log"): [Reply(rc=1, err=(
                        "../qemu-10/nvme-get-log-c3h_refused.stderr.txt"))],
                    ("nvme", "ocp"): [Reply(rc=1, err=(
                        "../qemu-7.2/nvme-ocp-smart-add-log_invalid-field.stderr.txt"))]}
                   ).install(monkeypatch)
    smart = nvme.parse_smart_log(text("nvme-smart-log", drive))
    counters = {"host_writes": smart.data_units_written, "page_size": nvme.DATA_UNIT_BYTES,
                **smart.as_dict(),
                **media_writes.nvme_counters("/dev/nvme9n1", tmp_path / f"{drive}.log")}
    assert counters["media_bytes"] is None and counters["media_source"] is None
    assert counters["media_note"].startswith(media_writes.NOT_REPORTED)
    assert "ocp c0h: log C0h: /dev/nvme9 does not support it" in counters["media_note"]
    assert counters[media_writes.OCP_C0] is None
    assert waf.lifetime(counters) is None


# smartctl JSON of enterprise NVMe drives (smartctl_exporter testdata): file, smartctl
# version, overall health, exit status, temperature, percentage used, media errors,
# power-on hours, Data Units Written, critical warning.
SMARTCTL_DRIVES = [
    ("samsung-mzwll3t2hajq_failed", [7, 3], 0, 8, 40, 0, 0, 18_376, 147_556_750, 0x10),
    ("hgst-husmr7632bhp301", [7, 1], 1, 0, 40, 5, 0, 482, 2_824_080_560, 0),
    ("micron-7450-mtfdkcc3t2tfs", [7, 3], 1, 0, 33, 0, 0, 2_884, 1_248_078, 0),
    ("intel-ssdpe2kx010t8", [7, 3], 1, 0, 36, 73, 0, 8_843, 5_165_815_292, 0),
]


@pytest.mark.parametrize("name, version, passed, status, temp, used, errors, hours, units, cw",
                         SMARTCTL_DRIVES)
def test_smartctl_json_of_enterprise_nvme_drives(name, version, passed, status, temp, used,
                                                 errors, hours, units, cw):
    t = text("smartctl-json_nvme", name)
    assert json.loads(t)["smartctl"]["version"] == version
    h = smartctl.parse(t)
    assert (h.protocol, h.smart_passed, h.exit_status) == ("NVMe", passed, status)
    assert (h.temperature_c, h.percent_used, h.media_errors, h.power_on_hours) == \
        (temp, used, errors, hours)
    assert (h.data_units_written, h.sectors_written, h.sector_bytes) == (units, None, None)
    assert h.critical_warning == cw
    assert (h.reallocated_sectors, h.pending_sectors, h.offline_uncorrectable,
            h.media_bytes) == (None,) * 4          # NVMe has none of them: not given


def test_a_failed_drive_says_which_warning_failed_it():
    """The Samsung PM1725b (MZWLL3T2HAJQ-00005): smartctl 7.3 printed overall health FAILED
    (passed false) and exit status 8 (bit 3, "DISK FAILING", smartctl(8)): a complete
    reading, not a failed read. The cause is Critical Warning 0x10, bit 4: volatile memory
    backup failed (its power-loss capacitors). Read through the suite's smartctl path, the
    counters keep the bit, and the health check fails the test."""
    run = RecordedRunner({("smartctl",): [Reply(
        out="smartctl-json_nvme_samsung-mzwll3t2hajq_failed.json", rc=8)]})
    counters, error = health_smartctl.read("/dev/nvme0", run=run)
    assert error is None and run.calls == [("smartctl", "--json", "-x", "/dev/nvme0")]
    assert (counters["smart_passed"], counters["critical_warning"]) == (0, 0x10)
    assert [nvme.CRITICAL_WARNING_BITS[b] for b in range(6) if counters["critical_warning"]
            >> b & 1] == ["volatile memory backup failed"]
    # host writes in the drive's own unit (Data Units Written, 512,000 bytes), as nvme-cli's
    # smart-log records keep them: the WAF's resolution rule works at that unit
    assert (counters["host_writes"], counters["page_size"]) == (147_556_750, 512_000)
    assert health_smartctl.problems([counters, counters], ["test start", "test end"]) == \
        ["SMART overall-health self-assessment FAILED at 2 of 2 steps, first at test start"]
