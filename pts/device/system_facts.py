"""The test system and DUT facts PTS-E 1.0 §5 asks the report to give and the system itself
can tell: system make/model and motherboard (DMI), the DUT's host adapter (its PCI parent,
named by lspci or given as sysfs ids), the DUT interface and its speed (PCIe link, SATA
link). run.json `system` (docs/results-format.md); the report puts them on page 1 beside
what the operator gave (pts.config.report_info).

Every read goes through a Host (pts.tools.hosts): this machine for a local device, the DUT
host over ssh for an ssh:// device, so the facts are those of the system the drive is in.
A fact the system does not give is None, with the reason where there is one; nothing is
guessed. Roots are parameters so that tests use constructed sysfs trees."""

from __future__ import annotations

import re
from pathlib import Path

from pts.device import identity
from pts.tools import commands, lspci
from pts.tools.hosts import LOCAL, Host

DMI_FIELDS = ("sys_vendor", "product_name", "board_vendor", "board_name")
BDF = re.compile(r"[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")
# What a drive says about its form factor and media: NVMe Identify Controller (NVMe Base
# 2.0 §5.17.2.1) has no field for either, and nvme-cli's id-ctrl JSON offers none.
NVME_SAYS = "the NVMe Identify Controller data has no form-factor or media-type field"


def dmi(host: Host, sys_root: Path) -> dict[str, str | None]:
    """/sys/class/dmi/id: {field: text, or None when the file is absent or blank (VMs)}."""
    base = sys_root / "class" / "dmi" / "id"
    return {f: host.read(base / f) or None for f in DMI_FIELDS}


def pci_chain(host: Host, sys_root: Path, kname: str) -> list[Path]:
    """The sysfs directories of the PCI functions above the block device, nearest first
    ([] for loop/virtual devices). An NVMe namespace of native multipath (/sys/devices/
    virtual/nvme-subsystem/nvme-subsysN/nvmeXnY) is followed through its subsystem's first
    controller."""
    node = Path(host.realpath(sys_root / "block" / kname))
    chain = [p for p in node.parents if BDF.fullmatch(p.name)]
    if not chain and node.parent.name.startswith("nvme-subsys"):
        for ctrl in host.listdir(node.parent):
            if re.fullmatch(r"nvme\d+", ctrl):
                ctrl_node = Path(host.realpath(node.parent / ctrl))
                chain = [p for p in [ctrl_node, *ctrl_node.parents] if BDF.fullmatch(p.name)]
                if chain:
                    break
    return chain


def pci_names(host: Host, func: Path, log_file=None) -> dict:
    """{pci_function, vendor, device, names_from} of the PCI function at `func`: lspci's
    names, or (no pciutils, lspci failed) the numeric ids sysfs holds ("0x8086")."""
    try:
        found = lspci.names(func.name, run=host.run, log_file=log_file)
        why = "sysfs ids (lspci does not list the function)"
    except commands.ToolMissing:
        found, why = None, "sysfs ids (pciutils not installed: no names)"
    except commands.ToolError as exc:
        found, why = None, f"sysfs ids (lspci failed: {(str(exc).splitlines() or [''])[0]})"
    if found is not None:
        return {"pci_function": func.name, "vendor": found.vendor, "device": found.device,
                "names_from": "lspci -mm"}
    return {"pci_function": func.name, "vendor": host.read(func / "vendor") or None,
            "device": host.read(func / "device") or None, "names_from": why}


def host_adapter(host: Host, sys_root: Path, kname: str, transport: str,
                 log_file=None) -> dict:
    """The DUT's host adapter: the PCI function it hangs off; for NVMe that function is the
    drive's own controller, so the adapter is the port above it (None: on the root
    complex). `none` says why there is none (loop device, no PCI parent)."""
    if transport == "loop":
        return {"none": "none (loop device: I/O goes to a file, no adapter)"}
    chain = pci_chain(host, sys_root, kname)
    if transport == "nvme":
        chain = chain[1:]
        if not chain:
            return {"none": "none: the NVMe controller sits on the PCI root complex "
                            "(no port above it)"}
    if not chain:
        return {"none": f"none: {kname} has no PCI parent in sysfs ({transport} device)"}
    return pci_names(host, chain[0], log_file)


def interface(host: Host, sys_root: Path, kname: str, transport: str) -> dict:
    """{kind, speed, source}: the DUT interface and the speed its link runs at now; speed
    None with `source` saying why where sysfs has no link speed."""
    if transport == "loop":
        return {"kind": "none (loop device)", "speed": None,
                "source": "n/a: a loop device has no interface"}
    if transport == "nvme":
        chain = pci_chain(host, sys_root, kname)
        return _pcie("NVMe over PCIe", host, chain[0]) if chain else \
            {"kind": "NVMe", "speed": None, "source": "n/a: no PCI function in sysfs"}
    node = Path(host.realpath(sys_root / "block" / kname))
    ata = next((p for p in node.parents if re.fullmatch(r"ata\d+", p.name)), None)
    if ata is not None:
        return _sata(host, ata)
    end = next((p for p in node.parents if p.name.startswith("end_device-")), None)
    if end is not None:
        sata = host.read(node / "device" / "vendor") == "ATA"     # SAT: a SATA drive
        return _sas("SATA behind a SAS HBA" if sata else "SAS", host, end.parent)
    if transport == "virtio":
        return {"kind": "virtio-blk (virtual)", "speed": None,
                "source": "n/a: a virtual device has no link speed"}
    kind = "USB" if any(re.fullmatch(r"usb\d+", p.name) for p in node.parents) else transport
    adapter = next((p for p in node.parents if re.fullmatch(r"host\d+", p.name)), None)
    driver = adapter and host.read(adapter / "scsi_host" / adapter.name / "proc_name")
    return {"kind": f"{kind} ({driver})" if driver else kind, "speed": None,
            "source": f"n/a: no link speed in sysfs for a {kind} device"}


def _sas(kind: str, host: Host, port: Path) -> dict:
    """The SAS transport class: the end device's port (port-H:N) holds its phys, each with
    the rate it negotiated (sas_phy negotiated_linkrate, e.g. "12.0 Gbit")."""
    for phy in sorted(host.listdir(port)):
        if phy.startswith("phy-"):
            rate = host.read(port / phy / "sas_phy" / phy / "negotiated_linkrate")
            if rate:
                return {"kind": kind, "speed": rate,
                        "source": f"sysfs {port.name}/{phy} negotiated_linkrate"}
    return {"kind": kind, "speed": None,
            "source": f"n/a: no negotiated_linkrate under {port.name}"}


def _pcie(kind: str, host: Host, func: Path) -> dict:
    speed, width = host.read(func / "current_link_speed"), host.read(func / "current_link_width")
    if not speed:
        return {"kind": kind, "speed": None,
                "source": f"n/a: {func.name} has no current_link_speed in sysfs"}
    return {"kind": kind, "speed": f"{speed} x{width}" if width else speed,
            "source": f"sysfs current_link_speed/current_link_width of {func.name}"}


def _sata(host: Host, ata: Path) -> dict:
    """libata: the link's negotiated speed (ata_link sata_spd, e.g. "6.0 Gbps")."""
    for link in host.listdir(ata):
        if re.fullmatch(r"link\d+", link):
            spd = host.read(ata / link / "ata_link" / link / "sata_spd")
            if spd:
                return {"kind": "SATA", "speed": spd,
                        "source": f"sysfs {ata.name}/{link} sata_spd"}
    return {"kind": "SATA", "speed": None, "source": f"n/a: no sata_spd under {ata.name}"}


def capture(kname: str, transport: str, host: Host = LOCAL, sys_root: Path | None = None,
            log_file=None) -> dict:
    """run.json `system` (docs/results-format.md); sys_root defaults to identity.SYS."""
    sys_root = identity.SYS if sys_root is None else sys_root
    return {"read_on": host.name,
            "dmi": dmi(host, sys_root),
            "host_adapter": host_adapter(host, sys_root, kname, transport, log_file),
            "interface": interface(host, sys_root, kname, transport),
            "drive_reports": NVME_SAYS if transport == "nvme" else
            f"form factor and media type are not read from a {transport} device"}
