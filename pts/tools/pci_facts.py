"""An NVMe drive's PCI function and controller registers as facts, from bytes: the PCI
configuration space (sysfs `config`, readable by root), its BARs' sizes (sysfs `resource`), the
link (sysfs current/max link speed and width) and the first bytes of BAR0 (the NVMe registers:
CAP, VS). Tables: pts.config.pci_layout. Pure decoders plus `read_pci`, which reads sysfs.

BAR0 is read only when the kernel lets a process map it (a Debian kernel refuses while the
nvme driver holds it unless booted with iomem=relaxed; nvme-cli 2.3's show-regs fails the same
way: tests/data/qemu-10/README.md); when it cannot, the registers are named in `refused`.
"""

from __future__ import annotations

import mmap
import os
import struct
from pathlib import Path

from pts.config import pci_layout as P
from pts.tools.nvme_facts import Facts, FactsError


def capabilities(config: bytes) -> dict[int, int]:
    """Capability ID -> its offset, walking the list from the Capabilities Pointer."""
    if len(config) < P.CONFIG_SIZE:
        raise FactsError(f"PCI configuration space: {len(config)} bytes, the header and "
                         f"capabilities are {P.CONFIG_SIZE}: read sysfs `config` as root")
    found, at, seen = {}, config[P.CAP_POINTER] & 0xFC, set()
    while at and at not in seen:
        seen.add(at)
        found.setdefault(config[at], at)
        at = config[at + 1] & 0xFC
    return found


def extended_capabilities(config: bytes) -> dict[str, int] | None:
    """Extended capability name (pci_layout.EXT_CAP_NAMES, else its ID as "0003h") -> its
    offset, walking the list from byte 100h; None when `config` holds no extended space (256
    bytes: a conventional PCI host bridge, such as QEMU's pc machine, gives none)."""
    if len(config) < P.EXT_CONFIG_SIZE:
        return None
    found, at, seen = {}, P.EXT_CAP_AT, set()
    while at and at not in seen and at + 4 <= len(config):
        seen.add(at)
        header = int.from_bytes(config[at:at + 4], "little")
        if header in (0, 0xFFFFFFFF):           # no extended capabilities at all
            break
        found.setdefault(P.EXT_CAP_NAMES.get(header & 0xFFFF, f"{header & 0xFFFF:04X}h"), at)
        at = header >> 20 & 0xFFC
    return found


def config_space(config: bytes) -> dict:
    """The fields of pci_layout.FIELDS present, the BARs, which capabilities exist and which
    extended ones (None: the extended space was not there to read); `dsn`: the Device Serial
    Number's 64 bits in hex, when it has one."""
    caps = capabilities(config)
    ext = extended_capabilities(config)
    out = {"capabilities": {P.CAP_NAMES.get(c, f"{c:02X}h"): at for c, at in caps.items()},
           "bars": list(struct.unpack_from("<6I", config, P.BARS_AT)),
           "extended_capabilities": ext}
    if ext and "Device Serial Number" in ext:
        at = ext["Device Serial Number"] + 4
        out["dsn"] = f"{int.from_bytes(config[at:at + 8], 'little'):016x}"
    for cap, offset, size, name in P.FIELDS:
        if cap in caps:
            out[name] = int.from_bytes(config[caps[cap] + offset:caps[cap] + offset + size],
                                       "little")
    return out


def bar_sizes(resource_text: str) -> list[dict]:
    """sysfs `resource`: one line per region (start end flags); the first six are the BARs
    (`start`: the address the host gave it)."""
    out = []
    for i, line in enumerate(resource_text.split("\n")[:P.BAR_COUNT]):
        start, end, flags = (int(x, 16) for x in line.split())
        out.append({"bar": i, "bytes": end - start + 1 if end else 0, "io": bool(flags & 0x100),
                    "mem": bool(flags & 0x200), "start": start})
    return out


def registers(data: bytes) -> dict:
    """CAP's fields and VS from the first bytes of BAR0."""
    if len(data) < 12:
        raise FactsError(f"NVMe registers: {len(data)} bytes, CAP and VS are 12")
    cap = int.from_bytes(data[:8], "little")
    out = {name: cap >> low & ((1 << width) - 1) for name, (low, width) in P.NVME_CAP.items()}
    vs = int.from_bytes(data[P.NVME_VS_AT:P.NVME_VS_AT + 4], "little")
    out.update(cap=f"0x{cap:016x}", vs=f"{vs >> 16}.{vs >> 8 & 0xFF}.{vs & 0xFF}")
    return out


def read_pci(device: Path, folder: Path, facts: Facts) -> None:
    """`device`: the PCI function's sysfs directory (/sys/class/nvme/nvme0/device resolved).
    Its config space, BAR sizes, link and NVMe registers into `facts`, bytes kept in
    `folder`."""
    config = (device / "config").read_bytes()
    (folder / "pci-config.bin").write_bytes(config)
    facts.values["pci"] = config_space(config)
    facts.values["pci_bars"] = bar_sizes((device / "resource").read_text())
    facts.values["pci_link"] = {name: (device / name).read_text().strip() for name in (
        "current_link_speed", "current_link_width", "max_link_speed", "max_link_width")
        if (device / name).exists()}
    facts.files["pci"] = "pci-config.bin"
    try:
        fd = os.open(device / "resource0", os.O_RDONLY | os.O_SYNC)
        try:
            words = memoryview(mmap.mmap(fd, 4096, mmap.MAP_SHARED, mmap.PROT_READ)).cast("I")
            data = struct.pack("<4I", *(words[i] for i in range(4)))   # aligned 32-bit reads
        finally:
            os.close(fd)
    except OSError as exc:
        facts.refused["nvme_registers"] = (f"{device}/resource0 could not be mapped ({exc}): "
                                           "the kernel holds BAR0 for the nvme driver "
                                           "(boot with iomem=relaxed to read CAP)")
        return
    (folder / "nvme-regs-bar0.bin").write_bytes(data)
    facts.values["nvme_registers"] = registers(data)
    facts.files["nvme_registers"] = "nvme-regs-bar0.bin"
