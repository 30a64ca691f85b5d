"""The §5 system and DUT facts (pts.device.system_facts) on constructed sysfs trees with the
kernel's layout (DMI, an NVMe namespace under its controller under a root port, a SATA disk
behind libata, SAS and other SCSI disks, a loop device, native NVMe multipath), lspci's
output parsed, and one real read of this machine's sysfs compared with the files themselves."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from pts.device import system_facts as sf
from pts.tools import commands, lspci
from pts.tools.hosts import LOCAL, Host

PORT, CTRL = "0000:00:01.1", "0000:01:00.0"
AHCI = "0000:00:1f.2"
LSPCI_PORT = ('00:01.1 "PCI bridge" "Advanced Micro Devices, Inc. [AMD]" '
              '"Starship/Matisse GPP Bridge" -p00 "" ""\n')


def _w(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def _link(sys_root: Path, kname: str, target: Path) -> None:
    (sys_root / "block").mkdir(parents=True, exist_ok=True)
    (sys_root / "block" / kname).symlink_to(target)


def nvme_tree(root: Path, speed="16.0 GT/s PCIe", width="4") -> Path:
    sys_root = root / "sys"
    port = sys_root / "devices" / "pci0000:00" / PORT
    ctrl = port / CTRL
    _w(port / "vendor", "0x1022")
    _w(port / "device", "0x1483")
    _w(port / "current_link_speed", "8.0 GT/s PCIe")     # the port's own: not the DUT's
    if speed:
        _w(ctrl / "current_link_speed", speed)
        _w(ctrl / "current_link_width", width)
    ns = ctrl / "nvme" / "nvme0" / "nvme0n1"
    ns.mkdir(parents=True)
    _link(sys_root, "nvme0n1", ns)
    dmi = sys_root / "class" / "dmi" / "id"
    for name, text in (("sys_vendor", "Supermicro"), ("product_name", "SYS-1029U"),
                       ("board_vendor", "Supermicro"), ("board_name", "X11DPU")):
        _w(dmi / name, text)
    return sys_root


class FakeHost(Host):
    """This machine's files, a scripted lspci."""

    def __init__(self, lspci_out: str | None):
        self.lspci_out, self.calls = lspci_out, []

    def run(self, argv, *, log_file=None, timeout=None, check=True):
        self.calls.append(list(argv))
        if self.lspci_out is None:
            raise commands.ToolMissing("lspci is not installed (not found on PATH)")
        return commands.CommandResult(tuple(argv), 0, self.lspci_out, "", 0.0)


def test_nvme_adapter_is_the_port_above_its_controller_and_the_link_is_its_own(tmp_path):
    sys_root = nvme_tree(tmp_path)
    host = FakeHost(LSPCI_PORT)
    facts = sf.capture("nvme0n1", "nvme", host, sys_root)
    assert facts["dmi"] == {"sys_vendor": "Supermicro", "product_name": "SYS-1029U",
                            "board_vendor": "Supermicro", "board_name": "X11DPU"}
    assert facts["host_adapter"] == {"pci_function": PORT,
                                     "vendor": "Advanced Micro Devices, Inc. [AMD]",
                                     "device": "Starship/Matisse GPP Bridge",
                                     "names_from": "lspci -mm"}
    assert host.calls == [["lspci", "-mm", "-s", PORT]]
    assert facts["interface"] == {
        "kind": "NVMe over PCIe", "speed": "16.0 GT/s PCIe x4",
        "source": f"sysfs current_link_speed/current_link_width of {CTRL}"}
    assert facts["drive_reports"] == sf.NVME_SAYS


def test_without_pciutils_the_adapter_is_named_by_its_sysfs_ids(tmp_path):
    sys_root = nvme_tree(tmp_path)
    adapter = sf.capture("nvme0n1", "nvme", FakeHost(None), sys_root)["host_adapter"]
    assert adapter == {"pci_function": PORT, "vendor": "0x1022", "device": "0x1483",
                       "names_from": "sysfs ids (pciutils not installed: no names)"}


def test_blank_dmi_and_a_function_without_link_files_are_none_with_the_reason(tmp_path):
    sys_root = nvme_tree(tmp_path, speed=None)
    for name in ("sys_vendor", "board_name"):
        _w(sys_root / "class" / "dmi" / "id" / name, "")        # blank, as in VMs
    (sys_root / "class" / "dmi" / "id" / "product_name").unlink()    # absent
    facts = sf.capture("nvme0n1", "nvme", FakeHost(LSPCI_PORT), sys_root)
    assert facts["dmi"] == {"sys_vendor": None, "product_name": None,
                            "board_vendor": "Supermicro", "board_name": None}
    assert facts["interface"] == {"kind": "NVMe over PCIe", "speed": None,
                                  "source": f"n/a: {CTRL} has no current_link_speed in sysfs"}


def test_native_multipath_namespace_follows_its_subsystems_controller(tmp_path):
    sys_root = nvme_tree(tmp_path)
    (sys_root / "block" / "nvme0n1").unlink()
    subsys = sys_root / "devices" / "virtual" / "nvme-subsystem" / "nvme-subsys0"
    (subsys / "nvme0n1").mkdir(parents=True)
    (subsys / "nvme0").symlink_to(sys_root / "devices/pci0000:00" / PORT / CTRL / "nvme/nvme0")
    _link(sys_root, "nvme0n1", subsys / "nvme0n1")
    facts = sf.capture("nvme0n1", "nvme", FakeHost(None), sys_root)
    assert facts["host_adapter"]["pci_function"] == PORT
    assert facts["interface"]["speed"] == "16.0 GT/s PCIe x4"


def test_sata_disk_behind_libata_has_its_link_speed_and_the_ahci_controller(tmp_path):
    sys_root = tmp_path / "sys"
    ahci = sys_root / "devices" / "pci0000:00" / AHCI
    _w(ahci / "vendor", "0x8086")
    _w(ahci / "device", "0x2922")
    _w(ahci / "ata1" / "link1" / "ata_link" / "link1" / "sata_spd", "6.0 Gbps")
    disk = ahci / "ata1" / "host0" / "target0:0:0" / "0:0:0:0" / "block" / "sda"
    disk.mkdir(parents=True)
    _link(sys_root, "sda", disk)
    facts = sf.capture("sda", "scsi", FakeHost(None), sys_root)
    assert facts["host_adapter"] == {"pci_function": AHCI, "vendor": "0x8086",
                                     "device": "0x2922", "names_from":
                                     "sysfs ids (pciutils not installed: no names)"}
    assert facts["interface"] == {"kind": "SATA", "speed": "6.0 Gbps",
                                  "source": "sysfs ata1/link1 sata_spd"}


def scsi_tree(root: Path, under: str, host: str, driver: str, vendor: str) -> Path:
    """A SCSI disk sdb at devices/pci0000:00/HBA/`under`/H:C:T:L, its adapter's proc_name."""
    sys_root = root / "sys"
    hba = sys_root / "devices" / "pci0000:00" / "0000:00:05.0"
    device = hba / under / "2:0:0:0"
    _w(device / "vendor", vendor)
    _w(hba / under[:under.index(host)] / host / "scsi_host" / host / "proc_name", driver)
    (device / "block" / "sdb").mkdir(parents=True)
    (device / "block" / "sdb" / "device").symlink_to(device)
    _link(sys_root, "sdb", device / "block" / "sdb")
    return sys_root


# The SAS transport class's layout: hostH/port-H:N/end_device-H:N/targetH:0:N, the port
# holding its phys (phy-H:N/sas_phy/phy-H:N). Constructed: QEMU 7.2's LSI SAS1068 gives
# Linux 6.1's mptsas an HBA whose phy 0 links at 3.0 Gbit, but no SAS port or end device.
SAS = "host2/port-2:0/end_device-2:0/target2:0:0"


def test_sas_disk_has_its_phys_negotiated_rate(tmp_path):
    sys_root = scsi_tree(tmp_path, SAS, "host2", "mpt3sas", "SEAGATE")
    port = sys_root / "devices/pci0000:00/0000:00:05.0/host2/port-2:0"
    _w(port / "phy-2:0" / "sas_phy" / "phy-2:0" / "negotiated_linkrate", "12.0 Gbit")
    assert sf.interface(LOCAL, sys_root, "sdb", "scsi") == {
        "kind": "SAS", "speed": "12.0 Gbit", "source": "sysfs port-2:0/phy-2:0 "
                                                       "negotiated_linkrate"}


def test_sata_drive_behind_a_sas_hba_is_named_so(tmp_path):
    sys_root = scsi_tree(tmp_path, SAS, "host2", "mpt3sas", "ATA")
    assert sf.interface(LOCAL, sys_root, "sdb", "scsi") == {
        "kind": "SATA behind a SAS HBA", "speed": None,
        "source": "n/a: no negotiated_linkrate under port-2:0"}


def test_other_scsi_disks_name_their_adapters_driver(tmp_path):
    usb = scsi_tree(tmp_path / "u", "usb2/2-1/2-1:1.0/host6/target6:0:0", "host6",
                    "usb-storage", "Samsung")
    assert sf.interface(LOCAL, usb, "sdb", "scsi") == {
        "kind": "USB (usb-storage)", "speed": None,
        "source": "n/a: no link speed in sysfs for a USB device"}
    vscsi = scsi_tree(tmp_path / "v", "virtio2/host0/target0:0:0", "host0", "virtio_scsi",
                      "QEMU")
    assert sf.interface(LOCAL, vscsi, "sdb", "scsi")["kind"] == "scsi (virtio_scsi)"


def test_loop_device_has_no_adapter_and_no_interface_said_so(tmp_path):
    sys_root = tmp_path / "sys"
    node = sys_root / "devices" / "virtual" / "block" / "loop3"
    node.mkdir(parents=True)
    _link(sys_root, "loop3", node)
    host = FakeHost(LSPCI_PORT)
    facts = sf.capture("loop3", "loop", host, sys_root)
    assert facts["host_adapter"] == {"none": "none (loop device: I/O goes to a file, no "
                                             "adapter)"}
    assert facts["interface"]["kind"] == "none (loop device)"
    assert facts["interface"]["speed"] is None and host.calls == []
    assert facts["dmi"] == dict.fromkeys(sf.DMI_FIELDS)     # no DMI in this tree


def test_lspci_machine_readable_line_parsed():
    assert lspci.parse(LSPCI_PORT) == lspci.PciNames(
        "PCI bridge", "Advanced Micro Devices, Inc. [AMD]", "Starship/Matisse GPP Bridge")
    assert lspci.parse('00:02.0 "SCSI storage controller" "Red Hat, Inc." "Virtio block '
                       'device" -r01 "Red Hat, Inc." "Device 0002"').device == \
        "Virtio block device"
    assert lspci.parse("") is None                      # no such function: lspci prints nothing


def _file(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace").strip() or None
    except OSError:
        return None


@pytest.mark.needs("lspci")
def test_this_machines_sysfs_read_as_the_files_say():
    """A real read: DMI (absent in many VMs: then None) and, for every whole block device
    with a PCI parent, its adapter's names as lspci gives them. Every
    such device is checked (counted here from the realpaths alone); on a machine with none
    but NVMe namespaces there is nothing to compare, and the test says so as a skip."""
    sys_root = Path("/sys")
    facts = sf.dmi(LOCAL, sys_root)
    assert facts == {f: _file(sys_root / "class/dmi/id" / f) for f in sf.DMI_FIELDS}
    expected = sorted(k for k in os.listdir(sys_root / "block") if not k.startswith("nvme")
                      and any(sf.BDF.fullmatch(p.name) for p in
                              Path(os.path.realpath(sys_root / "block" / k)).parents))
    checked = 0
    for kname in sorted(os.listdir(sys_root / "block")):
        chain = sf.pci_chain(LOCAL, sys_root, kname)
        real = Path(os.path.realpath(sys_root / "block" / kname))
        assert [p.name for p in chain] == [p.name for p in real.parents
                                           if sf.BDF.fullmatch(p.name)]
        if not chain or kname.startswith("nvme"):
            continue
        adapter = sf.host_adapter(LOCAL, sys_root, kname, "virtio")
        assert adapter["pci_function"] == chain[0].name
        # lspci -mm's quoted fields 3 and 4: vendor and device names (without pciutils the
        # sysfs ids: test_without_pciutils_the_adapter_is_named_by_its_sysfs_ids)
        fields = subprocess.run(["lspci", "-mm", "-s", chain[0].name], check=True,
                                capture_output=True, text=True).stdout.split('"')
        assert (adapter["vendor"], adapter["device"], adapter["names_from"]) == (
            fields[3], fields[5], "lspci -mm")
        checked += 1
    print(f"DMI {facts}; {checked} block device(s) with a PCI parent checked")
    if not expected:
        pytest.skip("no whole block device with a PCI parent other than an NVMe namespace on "
                    "this machine: no adapter to compare with its files")
    assert checked == len(expected), expected
