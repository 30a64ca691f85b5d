"""The report's platform table and warnings: run.json `platform` (host facts, and the
device's platform as pts.device.platform_device captures it) as rows; nested blocks (the
PCIe link, the IRQ affinity) become one row per field, values that do not apply "n/a"."""

from __future__ import annotations

import re

from pts.stored import fmt

LABELS = {"os": "OS", "cpu": "CPU", "cpus": "CPUs", "pcie_link": "PCIe link",
          "numa_nodes": "NUMA nodes", "device_numa_node": "Device NUMA node",
          "fio_cpus": "CPUs fio runs on", "fio_cpu_affinity": "fio CPU affinity",
          "fio_numa_nodes": "NUMA nodes fio runs on", "cpufreq_governors": "CPU governor",
          "cpu_boost": "CPU boost (turbo)", "irq_affinity": "IRQ affinity (irq: CPUs)",
          "io_scheduler": "I/O scheduler", "nr_requests": "nr_requests",
          "rq_affinity": "rq_affinity", "kernel_cmdline": "Kernel command line",
          "pci_function": "PCI function"}


# run.json options naming fio's engine (--ioengine, --io-poll): shown and compared as one
ENGINE_KEYS = ("ioengine", "io_poll")


def engine(options: dict) -> str:
    """fio's I/O engine of a run, from run.json `options` as pts.tools.fio.engine_options
    sets it (a run from before --ioengine has no `ioengine`: it ran libaio)."""
    name = options.get("ioengine") or "libaio"
    if name != "io_uring":
        return str(name)
    return ("io_uring (fixed buffers, registered files"
            + (", polled completion)" if options.get("io_poll") else ")"))


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
            out.append((label(key), irq_text(value, platform.get("irq_queues") or {})))
        elif key == "irq_queues":
            continue                    # shown with irq_affinity
        elif isinstance(value, dict):
            out += [(f"{label(key)}: {label(k).lower() if k != 'pci_function' else label(k)}",
                     fmt.text(v)) for k, v in value.items()]
        elif key.endswith("_bytes"):
            out.append((label(key.removesuffix("_bytes")), fmt.capacity(value)))
        else:
            out.append((label(key), fmt.text(value)))
    return out


def irq_text(affinity: dict, queues: dict) -> str:
    """Each interrupt as "queue (irq N): CPUs", a run of queues on one CPU each, in step
    (the driver's managed spread: nvme0q1 on CPU 0, nvme0q2 on CPU 1, ...) folded into one
    "nvme0q1-q8 (irq 46-53): CPUs 0-7, one each" (a 64-queue drive stays one line)."""
    runs: list[list] = []           # [prefix, first q, last q, first irq, last irq, cpus]
    for irq, cpus in affinity.items():
        m = re.fullmatch(r"(.*\D)(\d+)", queues.get(irq, ""))
        prev = runs[-1] if runs else None
        if prev and m and str(cpus).isdigit() and prev[0] == m[1] and \
                int(m[2]) == prev[2] + 1 and str(int(irq) - 1) == prev[4] and \
                isinstance(prev[5], list) and int(cpus) == prev[5][-1] + 1:
            prev[2], prev[4] = int(m[2]), irq
            prev[5].append(int(cpus))
            continue
        one = [int(cpus)] if str(cpus).isdigit() else cpus
        runs.append([m[1], int(m[2]), int(m[2]), irq, irq, one] if m else
                    [queues.get(irq), None, None, irq, irq, one])
    out = []
    for prefix, q0, q1, i0, i1, cpus in runs:
        name = f"{prefix}{q0}" if q0 is not None else (prefix or "")
        if q1 != q0:
            out.append(f"{name}-q{q1} (irq {i0}-{i1}): CPUs {cpus[0]}-{cpus[-1]}, one each")
            continue
        where = f"{name} (irq {i0})" if name else i0
        out.append(f"{where}: {cpus[0] if isinstance(cpus, list) else cpus}")
    return "; ".join(out)


def warnings(platform: dict) -> list[str]:
    found = platform.get("warnings")
    return [str(w) for w in found] if isinstance(found, list) else []
