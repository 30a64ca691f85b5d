"""nvme-cli output parsing, on output captured from QEMU 7.2's emulated NVMe controller with
nvme-cli 2.3 (tests/data/qemu-7.2/, see its README), plus the variants other nvme-cli versions
print (string numbers, Celsius, nested logs), written here from nvme-cli's JSON printer."""

import json

import pytest

from pts.tools import nvme
from tests.support.helpers import DATA

QEMU = DATA / "qemu-7.2"


def read(name: str) -> str:
    return (QEMU / name).read_text()


def test_id_ctrl_identity_and_capabilities():
    ctrl = nvme.parse_id_ctrl(read("nvme-id-ctrl.json"))
    assert (ctrl.model, ctrl.serial, ctrl.firmware) == ("QEMU NVMe Ctrl", "PTSQEMU0001",
                                                        "7.2.22")
    assert ctrl.format_supported and ctrl.sanitize_actions == []
    assert not ctrl.format_crypto_erase and not ctrl.format_all_namespaces
    assert ctrl.write_cache_present


def test_missing_fields_are_unknown_not_errors():
    ctrl = nvme.parse_id_ctrl(json.dumps({"vid": 1}))
    assert (ctrl.model, ctrl.serial) == ("unknown", "unknown")
    assert not ctrl.format_supported and ctrl.sanicap == 0


def test_id_ns_capacity_is_nsze_times_lba_size():
    ns = nvme.parse_id_ns(read("nvme-id-ns.json"))
    assert (ns.nsze, ns.lba_format, ns.lba_bytes) == (524288, 0, 512)
    assert ns.capacity_bytes == 256 << 20
    assert ns.deallocated_reads_zero


def test_id_ns_format_in_use_selects_the_size():
    doc = json.loads(read("nvme-id-ns.json"))
    doc["flbas"], doc["nsze"] = 4, 65536          # QEMU's LBA format 4 is 4 KiB
    ns = nvme.parse_id_ns(json.dumps(doc))
    assert (ns.lba_bytes, ns.capacity_bytes) == (4096, 256 << 20)
    doc["flbas"] = 15
    with pytest.raises(nvme.NvmeError, match="LBA format 15 in use, but only 8"):
        nvme.parse_id_ns(json.dumps(doc))


def test_smart_log_recorded():
    fresh = nvme.parse_smart_log(read("nvme-smart-log_fresh.json"))
    after = nvme.parse_smart_log(read("nvme-smart-log_after-iops-run.json"))
    assert fresh.temperature_c == 50 and fresh.critical_warning == 0
    assert after.data_units_written > fresh.data_units_written
    assert after.bytes_written == after.data_units_written * 512_000


def test_smart_log_variants_of_other_versions():
    text = json.dumps({"nvme0": {"critical_warning": {"value": 2}, "temperature": "45 C",
                                 "percentage_used": "3%", "data_units_written": "1,234",
                                 "thm_temp1_trans_count": 1, "thm_temp2_trans_count": 2}})
    smart = nvme.parse_smart_log(text)
    assert (smart.critical_warning, smart.temperature_c, smart.percent_used) == (2, 45, 3)
    assert (smart.data_units_written, smart.thermal_transitions) == (1234, 3)
    with pytest.raises(nvme.NvmeError, match="no data_units_written"):
        nvme.parse_smart_log('{"temperature": 300}')
    with pytest.raises(nvme.NvmeError, match="printed no JSON"):
        nvme.parse_smart_log("smart log: Invalid argument")


@pytest.mark.parametrize("sstat, state", [({"status": "(2) Sanitize in Progress"}, 2),
                                          ({"status": 1}, 1), (0x103, 3)])
def test_sanitize_log_status_forms(sstat, state):
    text = json.dumps({"nvme0": {"sprog": 32768, "sstat": sstat}})
    status = nvme.parse_sanitize_log(text)
    assert (status.progress, status.state) == (0.5, state)


def test_feature_value_forms():
    assert nvme.parse_feature_value(read("nvme-get-feature-6_enabled.txt")) == 1
    assert nvme.parse_feature_value(read("nvme-get-feature-6_disabled.txt")) == 0
    assert nvme.parse_feature_value('{"value": 1}') == 1
    with pytest.raises(nvme.NvmeError, match="no current value"):
        nvme.parse_feature_value("get-feature: Invalid argument")


def test_controller_path():
    assert nvme.controller_path("/dev/nvme12n3") == "/dev/nvme12"
    with pytest.raises(nvme.NvmeError, match="not an NVMe namespace block device"):
        nvme.controller_path("/dev/loop0")
