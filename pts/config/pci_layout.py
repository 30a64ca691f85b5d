"""What a host reads of an NVMe drive's PCI function and controller registers, as data: the
PCI configuration space header's BARs, the capabilities the OCP PCI requirements name (PCI
Express, MSI-X, MSI, Power Management) and their fields, and the NVMe Controller Capabilities
register (CAP, BAR0 offset 0). Read by pts.tools.pci_facts.

Sources: the PCI Express Base Specification (Type 0 header: BARs at 10h-24h, Capabilities
Pointer 34h; PCI Express Capability: Device Capabilities +04h, Link Capabilities +0Ch, Device
Capabilities 2 +24h, Link Capabilities 2 +2Ch; MSI-X: Table Offset/BIR +04h; Power
Management: PMC +02h, PMCSR +04h), as Linux's include/uapi/linux/pci_regs.h names them
(PCI_EXP_DEVCAP_PAYLOAD, PCI_EXP_DEVCAP_FLR, PCI_EXP_DEVCAP2_COMP_TMOUT_*, PCI_PM_CTRL_NO_SOFT_RESET
...); each checked against `lspci -vvv` of QEMU 10's controller (tests/data/qemu-10/fdp).
The NVM Express Base Specification 2.0, "Offset 0h: CAP", for CAP's fields (libnvme @03297d8b
src/nvme/types.h NVME_CAP_*_SHIFT/MASK agree).
"""

from __future__ import annotations

CONFIG_SIZE = 256            # the header and capabilities (the extended space: EXT_CONFIG_SIZE)
BARS_AT, BAR_COUNT = 0x10, 6
CAP_POINTER = 0x34
CAP_PCIE, CAP_MSIX, CAP_MSI, CAP_PM = 0x10, 0x11, 0x05, 0x01
CAP_NAMES = {CAP_PCIE: "PCI Express", CAP_MSIX: "MSI-X", CAP_MSI: "MSI",
             CAP_PM: "Power Management"}

# (capability, byte offset in it, size, name) -> read as a little-endian integer
FIELDS = (
    (CAP_PCIE, 0x04, 4, "devcap"),    # bits 2:0 Max Payload Size Supported, bit 28 FLR
    (CAP_PCIE, 0x08, 2, "devctl"),    # bit 4 Enable Relaxed Ordering (hardwired 0b: never)
    (CAP_PCIE, 0x0C, 4, "lnkcap"),    # bits 3:0 Max Link Speed, bits 9:4 Max Link Width
    (CAP_PCIE, 0x24, 4, "devcap2"),   # bits 3:0 Completion Timeout Ranges, bit 4 CT Disable
    (CAP_PCIE, 0x2C, 4, "lnkcap2"),   # bits 7:1 Supported Link Speeds Vector (0: use lnkcap)
    (CAP_MSIX, 0x04, 4, "msix_table"),   # bits 2:0 Table BIR
    (CAP_PM, 0x02, 2, "pmc"),         # bit 5 DSI
    (CAP_PM, 0x04, 2, "pmcsr"),       # bit 3 No_Soft_Reset
)
# Extended capabilities (from byte 100h of a 4096-byte configuration space): ID -> name
EXT_CAP_AT, EXT_CONFIG_SIZE = 0x100, 4096
EXT_CAP_NAMES = {0x0001: "Advanced Error Reporting", 0x0003: "Device Serial Number",
                 0x000F: "Address Translation Services"}
LINK_SPEEDS = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}      # GT/s
MPS_BYTES = {0: 128, 1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}

# NVMe CAP (64 bits): name -> (low bit, width)
NVME_CAP = {"mqes": (0, 16), "cqr": (16, 1), "ams": (17, 2), "to": (24, 8),
            "dstrd": (32, 4), "nssrs": (36, 1), "css": (37, 8), "bps": (45, 1),
            "cps": (46, 2), "mpsmin": (48, 4), "mpsmax": (52, 4), "pmrs": (56, 1),
            "cmbs": (57, 1), "nsss": (58, 1), "crwms": (59, 1), "crims": (60, 1)}
NVME_VS_AT = 0x08
