"""The report's platform table and warnings: run.json `platform` (host facts, and the
device's platform as pts.device.platform_device captures it) as rows; nested blocks (the
PCIe link, the IRQ affinity) become one row per field, values that do not apply "n/a"."""

from __future__ import annotations

from pts.stored import fmt

LABELS = {"os": "OS", "cpu": "CPU", "cpus": "CPUs", "pcie_link": "PCIe link",
          "numa_nodes": "NUMA nodes", "device_numa_node": "Device NUMA node",
          "fio_cpus": "CPUs fio runs on", "fio_cpu_affinity": "fio CPU affinity",
          "fio_numa_nodes": "NUMA nodes fio runs on", "cpufreq_governors": "CPU governor",
          "cpu_boost": "CPU boost (turbo)", "irq_affinity": "IRQ affinity (irq: CPUs)",
          "io_scheduler": "I/O scheduler", "nr_requests": "nr_requests",
          "rq_affinity": "rq_affinity", "kernel_cmdline": "Kernel command line",
          "pci_function": "PCI function"}


def label(key: str) -> str:
    return LABELS.get(key) or key.replace("_", " ").capitalize()


def rows(platform: dict) -> list[tuple[str, str]]:
    out = []
    for key, value in platform.items():
        if key == "warnings":
            continue
        if key == "fio_cpu_affinity" and value is None:
            out.append((label(key), "not set (one NUMA node, or the device's node unknown)"))
        elif key == "irq_affinity" and isinstance(value, dict):
            out.append((label(key), "; ".join(f"{i}: {c}" for i, c in value.items())))
        elif isinstance(value, dict):
            out += [(f"{label(key)}: {label(k).lower() if k != 'pci_function' else label(k)}",
                     fmt.text(v)) for k, v in value.items()]
        elif key.endswith("_bytes"):
            out.append((label(key.removesuffix("_bytes")), fmt.capacity(value)))
        else:
            out.append((label(key), fmt.text(value)))
    return out


def warnings(platform: dict) -> list[str]:
    found = platform.get("warnings")
    return [str(w) for w in found] if isinstance(found, list) else []
