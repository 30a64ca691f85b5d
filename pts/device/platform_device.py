"""The platform around the device under test, from sysfs and procfs: the PCIe link of its
PCI function, its NUMA node and the CPUs fio runs on, the CPU frequency governor and boost,
the CPUs its interrupt vectors are bound to, the block queue (I/O scheduler, nr_requests,
rq_affinity) and the kernel command line. Values that do not apply (a loop device has no
PCI function, a VM may have no cpufreq) are None. Reviews of fast drives find the platform,
not the drive, setting the number (slot, socket, IRQ placement): these are the facts a
reader needs, and `warnings` names the ones that bias the result.

Every read goes through the roots `sys_root` / `proc_root` (default: identity.SYS and
identity.PROC at call time) so that tests replace them with constructed trees."""

from __future__ import annotations

import os
import re
from pathlib import Path

from pts.device import identity
from pts.tools.hosts import Host


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def parse_cpulist(text: str | None) -> set[int]:
    """"0-3,8,10-11" -> {0, 1, 2, 3, 8, 10, 11} (the kernel's cpulist format)."""
    cpus: set[int] = set()
    for part in (text or "").replace("\n", ",").split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        if lo.isdigit() and (not hi or hi.isdigit()):
            cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def format_cpulist(cpus: set[int] | list[int]) -> str:
    """The inverse of parse_cpulist: {0, 1, 2, 3, 8} -> "0-3,8"."""
    out, run = [], []
    for cpu in sorted(set(cpus)):
        if run and cpu == run[-1] + 1:
            run.append(cpu)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [cpu]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


BDF = re.compile(r"[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")


def _pci_ancestor(node: Path, devices: Path) -> Path | None:
    while node != node.parent and node != devices and devices in node.parents:
        if BDF.fullmatch(node.name):
            return node
        node = node.parent
    return None


def pci_function(sys_root: Path, kname: str) -> Path | None:
    """The PCI function the block device sits under: the nearest ancestor of its sysfs
    node named like one (domain:bus:device.function), or None (loop, virtual, no PCI).
    An NVMe namespace of native multipath (/sys/devices/virtual/nvme-subsystem/
    nvme-subsysN/nvmeXnY, the default of Debian's kernel) is followed to the PCI function
    of its subsystem's first controller (the nvmeN links in the subsystem directory)."""
    node = (sys_root / "block" / kname).resolve()
    devices = (sys_root / "devices").resolve()
    found = _pci_ancestor(node, devices)
    subsys = node.parent
    if found is None and subsys.name.startswith("nvme-subsys"):
        for ctrl in sorted(subsys.iterdir()):
            if re.fullmatch(r"nvme\d+", ctrl.name) and \
                    (found := _pci_ancestor(ctrl.resolve(), devices)) is not None:
                break
    return found


def _speed_gts(text: str | None) -> float | None:
    """"8.0 GT/s PCIe" -> 8.0; "Unknown" -> None."""
    m = re.match(r"\s*([0-9.]+)\s*GT/s", text or "")
    return float(m[1]) if m else None


def pcie_link(func: Path | None) -> dict | None:
    """The link of the PCI function (values None where sysfs has no link files: a
    conventional PCI function), or None without a PCI function."""
    if func is None:
        return None
    return {"pci_function": func.name,
            "current_speed": _read(func / "current_link_speed"),
            "max_speed": _read(func / "max_link_speed"),
            "current_width": _int(_read(func / "current_link_width")),
            "max_width": _int(_read(func / "max_link_width"))}


def numa_nodes(sys_root: Path) -> dict[int, set[int]]:
    """NUMA node -> its CPUs (empty dict if the kernel lists no nodes)."""
    base = sys_root / "devices" / "system" / "node"
    out = {}
    for node in sorted(base.glob("node[0-9]*")) if base.exists() else []:
        out[int(node.name[4:])] = parse_cpulist(_read(node / "cpulist"))
    return out


def device_numa_node(func: Path | None) -> int | None:
    """The device's NUMA node; None without a PCI function or when the platform does not
    say (numa_node -1)."""
    node = _int(_read(func / "numa_node")) if func is not None else None
    return node if node is not None and node >= 0 else None


def fio_affinity(nodes: dict[int, set[int]], device_node: int | None) -> set[int] | None:
    """The CPUs fio is bound to: the device's node when the platform has more than one node
    and the device's node is known, else None (fio runs where the scheduler puts it)."""
    if len(nodes) > 1 and device_node is not None and nodes.get(device_node):
        return nodes[device_node]
    return None


def cpufreq(sys_root: Path, cpus: set[int]) -> tuple[list[str] | None, bool | None]:
    """The governors of `cpus` (sorted, distinct; None without cpufreq) and whether boost
    (turbo) is on (None if the platform does not expose it)."""
    base = sys_root / "devices" / "system" / "cpu"
    govs = {g for c in cpus if (g := _read(base / f"cpu{c}" / "cpufreq" / "scaling_governor"))}
    boost = _int(_read(base / "cpufreq" / "boost"))
    no_turbo = _int(_read(base / "intel_pstate" / "no_turbo"))
    on = bool(boost) if boost is not None else (not no_turbo if no_turbo is not None else None)
    return (sorted(govs) or None), on


def irq_affinity(proc_root: Path, func: Path | None) -> dict[str, str] | None:
    """IRQ number -> the CPUs it is bound to, for the PCI function's MSI/MSI-X vectors (or
    its legacy irq)."""
    if func is None:
        return None
    irqs = sorted((p.name for p in (func / "msi_irqs").iterdir()), key=int) \
        if (func / "msi_irqs").is_dir() else []
    if not irqs and _int(_read(func / "irq")):
        irqs = [str(_read(func / "irq"))]
    return {irq: _read(proc_root / "irq" / irq / "smp_affinity_list") or "unknown"
            for irq in irqs} or None


def irq_queues(proc_root: Path, irqs: dict[str, str] | None) -> dict[str, str] | None:
    """IRQ number -> the name its handler has in /proc/interrupts (the last column): for an
    NVMe drive the queue it serves (nvme0q0 the admin queue, nvme0q1.. the I/O queues)."""
    names = {}
    for line in (_read(proc_root / "interrupts") or "").splitlines():
        irq, _, rest = line.strip().partition(":")
        if irqs and irq in irqs and rest.split():
            names[irq] = rest.split()[-1]
    return names or None


def check_poll(host: Host, kname: str, given: str) -> None:
    """--io-poll needs the device's poll queues: /sys/block/KNAME/queue/io_poll reads 1 (read
    on the device's host). Raises DeviceError before anything is written otherwise."""
    path = f"{identity.SYS}/block/{kname}/queue/io_poll"
    value = host.read(path, "unreadable")
    if value != "1":
        where = "" if host.remote is None else f" on {host.name}"
        raise identity.DeviceError(
            f"--io-poll: {given} has no poll queues ({path}{where} reads {value!r}, not 1): "
            "polled completion would fail on every I/O. Nothing was written. Run without "
            "--io-poll, or give the drive poll queues (NVMe: load the nvme module with "
            "poll_queues=N, e.g. `modprobe nvme poll_queues=4` after unloading it, or "
            "nvme.poll_queues=N on the kernel command line)")


def scheduler(text: str | None) -> str | None:
    """"[none] mq-deadline kyber" -> "none" (the active one); "none" -> "none"."""
    if not text:
        return None
    m = re.search(r"\[([^\]]+)\]", text)
    return m[1] if m else text.split()[0]


def capture(kname: str, transport: str, sys_root: Path | None = None,
            proc_root: Path | None = None, fio_cpus: set[int] | None = None) -> dict:
    """The device's platform block of run.json (see docs/results-format.md `platform`)."""
    sys_root = identity.SYS if sys_root is None else sys_root
    proc_root = identity.PROC if proc_root is None else proc_root
    func = pci_function(sys_root, kname)
    nodes = numa_nodes(sys_root)
    dev_node = device_numa_node(func)
    bound = fio_affinity(nodes, dev_node)
    cpus = bound or fio_cpus or set(os.sched_getaffinity(0))
    governors, boost = cpufreq(sys_root, cpus)
    queue = sys_root / "block" / kname / "queue"
    out = {
        "pcie_link": pcie_link(func),
        "numa_nodes": len(nodes) or None,
        "device_numa_node": dev_node,
        "fio_cpus": format_cpulist(cpus),
        "fio_cpu_affinity": None if bound is None else
        f"fio bound to the device's NUMA node {dev_node} (CPUs {format_cpulist(bound)})",
        "fio_numa_nodes": sorted(n for n, c in nodes.items() if c & cpus) or None,
        "cpufreq_governors": governors,
        "cpu_boost": boost,
        "irq_affinity": (irqs := irq_affinity(proc_root, func)),
        "irq_queues": irq_queues(proc_root, irqs),
        "io_scheduler": scheduler(_read(queue / "scheduler")),
        "nr_requests": _int(_read(queue / "nr_requests")),
        "rq_affinity": _int(_read(queue / "rq_affinity")),
        "kernel_cmdline": _read(proc_root / "cmdline"),
    }
    out["warnings"] = warnings(out, transport)
    return out


def warnings(p: dict, transport: str) -> list[str]:
    """What in the platform biases the result (empty list: nothing found)."""
    out = []
    link = p.get("pcie_link")
    if link:
        cur, top = _speed_gts(link.get("current_speed")), _speed_gts(link.get("max_speed"))
        if cur is not None and top is not None and cur < top:
            out.append(f"PCIe link below the device's maximum: {link['current_speed']} of "
                       f"{link['max_speed']} ({link['pci_function']}); check the slot and "
                       "BIOS link settings")
        cw, mw = link.get("current_width"), link.get("max_width")
        if cw is not None and mw is not None and cw < mw:
            out.append(f"PCIe link below the device's maximum: x{cw} of x{mw} "
                       f"({link['pci_function']}); check the slot")
    node, fio_nodes = p.get("device_numa_node"), p.get("fio_numa_nodes")
    if node is not None and fio_nodes and fio_nodes != [node]:
        out.append(f"fio runs on NUMA node(s) {', '.join(map(str, fio_nodes))} (CPUs "
                   f"{p.get('fio_cpus')}), the device is on node {node}: cross-node I/O")
    others = [g for g in p.get("cpufreq_governors") or [] if g != "performance"]
    if others:
        out.append(f"CPU frequency governor {', '.join(others)} on fio's CPUs, not "
                   "performance: latency and IOPS vary with the CPU clock")
    out += irq_warnings(p)
    sched = p.get("io_scheduler")
    if transport == "nvme" and sched not in (None, "none"):
        out.append(f"I/O scheduler {sched} on an NVMe device, not none: the scheduler, not "
                   "the drive, may limit the result")
    return out


def irq_warnings(p: dict) -> list[str]:
    """The drive's I/O-queue interrupts (the admin queue, NAMEq0, serves no I/O) bound to no
    CPU fio runs on (every completion interrupts another CPU, across the node when fio is on
    the device's node), or all to one CPU while fio runs on several (one core takes every
    completion: the "interrupts all on core 0" a review of fast drives found costing up to a
    third of the write throughput, issue 33)."""
    names = p.get("irq_queues") or {}
    io = [parse_cpulist(cpus) for irq, cpus in (p.get("irq_affinity") or {}).items()
          if not names.get(irq, "").endswith("q0")]
    bound = set().union(*io) if io and all(io) else set()
    fio = parse_cpulist(p.get("fio_cpus"))
    if not bound or not fio:
        return []
    node = " (the device's NUMA node)" if p.get("fio_cpu_affinity") else ""
    if not bound & fio:
        return [f"the drive's interrupts are bound to CPUs {format_cpulist(bound)}, none of "
                f"the CPUs fio runs on ({p.get('fio_cpus')}{node}): every completion "
                "interrupts another CPU; bind them to fio's CPUs (/proc/irq/N/"
                "smp_affinity_list, or stop irqbalance)"]
    if len(bound) == 1 and len(fio) > 1:
        return [f"all of the drive's interrupts are bound to CPU {format_cpulist(bound)} "
                f"while fio runs on CPUs {p.get('fio_cpus')}: one core takes every "
                "completion; spread them (/proc/irq/N/smp_affinity_list, irqbalance) or "
                "let the driver manage them"]
    return []
