"""Platform capture on constructed sysfs/procfs trees with the kernel's layout: an NVMe
namespace under its controller under a PCI function, NUMA nodes, cpufreq, MSI-X vectors,
the block queue; one test per warning, and a loop device (everything n/a)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pts.device import platform_device as pd
from pts.stored import platform_rows
from pts.tools.fio import Fio, FioError

FUNC = "devices/pci0000:00/0000:00:01.0/0000:01:00.0"


def _w(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def make_tree(root: Path, *, speed=("16.0 GT/s PCIe", "16.0 GT/s PCIe"), width=(4, 4),
              dev_node=0, nodes=("0-1",), governor="performance", sched="[none] mq-deadline",
              boost="1", irq_cpus=("0", "1"), queues=None) -> tuple[Path, Path]:
    sys_root, proc_root = root / "sys", root / "proc"
    func = sys_root / FUNC
    # the upstream bridge has a link too: the capture must take the device's own function
    _w(func.parent / "current_link_speed", "2.5 GT/s PCIe")
    _w(func / "current_link_speed", speed[0])
    _w(func / "max_link_speed", speed[1])
    _w(func / "current_link_width", str(width[0]))
    _w(func / "max_link_width", str(width[1]))
    _w(func / "numa_node", str(dev_node))
    for n, cpus in enumerate(irq_cpus):
        irq = str(45 + n)
        (func / "msi_irqs" / irq).parent.mkdir(parents=True, exist_ok=True)
        _w(func / "msi_irqs" / irq, "msix")
        _w(proc_root / "irq" / irq / "smp_affinity_list", cpus)
    if queues:          # /proc/interrupts: "IRQ: counts per CPU, chip, hwirq, handler name"
        _w(proc_root / "interrupts", "           CPU0       CPU1\n" + "\n".join(
            f" {45 + n}:  {n}  0  PCI-MSIX-0000:01:00.0 {n}-edge  {q}"
            for n, q in enumerate(queues)) + "\n  0:  9  0  IO-APIC 2-edge  timer")
    ns = func / "nvme" / "nvme0" / "nvme0n1"
    _w(ns / "queue" / "scheduler", sched)
    _w(ns / "queue" / "nr_requests", "1023")
    _w(ns / "queue" / "rq_affinity", "1")
    (sys_root / "block").mkdir(parents=True)
    (sys_root / "block" / "nvme0n1").symlink_to(ns)
    for n, cpus in enumerate(nodes):
        _w(sys_root / "devices/system/node" / f"node{n}" / "cpulist", cpus)
    for cpu in pd.parse_cpulist(",".join(nodes)):
        _w(sys_root / f"devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor", governor)
    _w(sys_root / "devices/system/cpu/cpufreq/boost", boost)
    _w(proc_root / "cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet")
    return sys_root, proc_root


def capture(tmp_path, fio_cpus=frozenset({0, 1}), transport="nvme", **kw):
    sys_root, proc_root = make_tree(tmp_path, **kw)
    return pd.capture("nvme0n1", transport, sys_root, proc_root, fio_cpus=set(fio_cpus))


def test_healthy_platform_has_every_value_and_no_warning(tmp_path):
    p = capture(tmp_path)
    assert p["pcie_link"] == {"pci_function": "0000:01:00.0",
                              "current_speed": "16.0 GT/s PCIe", "max_speed": "16.0 GT/s PCIe",
                              "current_width": 4, "max_width": 4}
    assert p["numa_nodes"] == 1 and p["device_numa_node"] == 0
    assert p["fio_cpus"] == "0-1" and p["fio_cpu_affinity"] is None
    assert p["cpufreq_governors"] == ["performance"] and p["cpu_boost"] is True
    assert p["irq_affinity"] == {"45": "0", "46": "1"}
    assert (p["io_scheduler"], p["nr_requests"], p["rq_affinity"]) == ("none", 1023, 1)
    assert p["kernel_cmdline"] == "BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet"
    assert p["warnings"] == []


def test_link_speed_below_max_warns(tmp_path):
    p = capture(tmp_path, speed=("8.0 GT/s PCIe", "16.0 GT/s PCIe"))
    assert p["warnings"] == ["PCIe link below the device's maximum: 8.0 GT/s PCIe of "
                             "16.0 GT/s PCIe (0000:01:00.0); check the slot and BIOS link "
                             "settings"]


def test_link_width_below_max_warns(tmp_path):
    p = capture(tmp_path, width=(2, 4))
    assert p["warnings"] == ["PCIe link below the device's maximum: x2 of x4 (0000:01:00.0); "
                             "check the slot"]


def test_numa_mismatch_warns(tmp_path):
    """Device on node 1 of two, fio's CPUs (given) on node 0 only."""
    sys_root, proc_root = make_tree(tmp_path, dev_node=1, nodes=("0-1", "2-3"),
                                    irq_cpus=("2", "3"))
    p = pd.capture("nvme0n1", "nvme", sys_root, proc_root, fio_cpus={0, 1})
    # with > 1 node the suite binds fio to the device's node itself: no mismatch ...
    assert p["fio_cpus"] == "2-3" and p["fio_numa_nodes"] == [1]
    assert p["fio_cpu_affinity"] == "fio bound to the device's NUMA node 1 (CPUs 2-3)"
    assert p["warnings"] == []
    # ... and the warning fires for CPUs on another node (the check itself)
    p = dict(p, fio_cpus="0-1", fio_numa_nodes=[0], irq_affinity=None)
    assert pd.warnings(p, "nvme") == ["fio runs on NUMA node(s) 0 (CPUs 0-1), the device is "
                                      "on node 1: cross-node I/O"]


def test_single_node_does_not_bind_fio():
    assert pd.fio_affinity({0: {0, 1}}, 0) is None
    assert pd.fio_affinity({0: {0, 1}, 1: {2, 3}}, None) is None
    assert pd.fio_affinity({0: {0, 1}, 1: {2, 3}}, 1) == {2, 3}


def test_governor_not_performance_warns(tmp_path):
    p = capture(tmp_path, governor="powersave", boost="0")
    assert p["cpu_boost"] is False
    assert p["warnings"] == ["CPU frequency governor powersave on fio's CPUs, not "
                             "performance: latency and IOPS vary with the CPU clock"]


@pytest.mark.parametrize("transport,warned", [("nvme", True), ("scsi", False)])
def test_scheduler_not_none_on_nvme_warns(tmp_path, transport, warned):
    p = capture(tmp_path, sched="none [mq-deadline] kyber", transport=transport)
    assert p["io_scheduler"] == "mq-deadline"
    assert p["warnings"] == (["I/O scheduler mq-deadline on an NVMe device, not none: the "
                              "scheduler, not the drive, may limit the result"] if warned else [])


def test_loop_device_has_no_pci_values(tmp_path):
    sys_root, proc_root = tmp_path / "sys", tmp_path / "proc"
    loop = sys_root / "devices" / "virtual" / "block" / "loop7"
    _w(loop / "queue" / "scheduler", "[none] mq-deadline")
    _w(loop / "queue" / "nr_requests", "128")
    (sys_root / "block").mkdir(parents=True)
    (sys_root / "block" / "loop7").symlink_to(loop)
    p = pd.capture("loop7", "loop", sys_root, proc_root, fio_cpus={0})
    assert p["pcie_link"] is None and p["device_numa_node"] is None
    assert p["irq_affinity"] is None and p["cpufreq_governors"] is None
    assert p["cpu_boost"] is None and p["kernel_cmdline"] is None
    assert p["io_scheduler"] == "none" and p["nr_requests"] == 128
    assert p["warnings"] == []
    shown = dict(platform_rows.rows(p))
    assert shown["PCIe link"] == "n/a" and shown["IRQ affinity (irq: CPUs)"] == "n/a"
    assert shown["I/O scheduler"] == "none"


def test_report_rows_flatten_the_link(tmp_path):
    shown = dict(platform_rows.rows(capture(tmp_path, width=(2, 4))))
    assert shown["PCIe link: current width"] == "2"
    assert shown["PCIe link: PCI function"] == "0000:01:00.0"
    assert shown["IRQ affinity (irq: CPUs)"] == "45: 0; 46: 1"
    assert "Warnings" not in shown


def test_cpulist_round_trip():
    assert pd.parse_cpulist("0-3,8,10-11") == {0, 1, 2, 3, 8, 10, 11}
    assert pd.format_cpulist({0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11"


def test_fio_job_file_binds_cpus_when_set(tmp_path):
    """The job file is written before fio runs; fio then fails on the missing file."""
    fio = Fio()
    fio.cpus_allowed = "2-3"
    with pytest.raises(FioError):
        fio.run_document("/nonexistent-pts-file", "[global]\nfilename=/nonexistent-pts-file\n"
                         "\n[j]\nrw=read\nsize=4k\n", tmp_path, "t", timeout=60,
                         histograms=False)
    assert (tmp_path / "t.fio").read_text().startswith("[global]\ncpus_allowed=2-3\n")


def test_conventional_pci_function_has_a_link_block_without_values(tmp_path):
    """A PCI (not PCIe) function, e.g. QEMU's NVMe on the default i440fx machine: the
    function, its NUMA node and IRQs are known, the link values are not; no warning."""
    sys_root, proc_root = make_tree(tmp_path)
    func = sys_root / FUNC
    for name in ("current_link_speed", "max_link_speed", "current_link_width",
                 "max_link_width"):
        (func / name).unlink()
    p = pd.capture("nvme0n1", "nvme", sys_root, proc_root, fio_cpus={0})
    assert p["pcie_link"] == {"pci_function": "0000:01:00.0", "current_speed": None,
                              "max_speed": None, "current_width": None, "max_width": None}
    assert p["irq_affinity"] == {"45": "0", "46": "1"} and p["warnings"] == []


def test_nvme_native_multipath_namespace_follows_its_controller(tmp_path):
    """With native NVMe multipath /sys/block/nvme0n1 is the subsystem's namespace head under
    /sys/devices/virtual/nvme-subsystem/; its controller links lead to the PCI function."""
    sys_root, proc_root = make_tree(tmp_path)
    subsys = sys_root / "devices" / "virtual" / "nvme-subsystem" / "nvme-subsys0"
    head = subsys / "nvme0n1"
    _w(head / "queue" / "scheduler", "[none] mq-deadline")
    (subsys / "nvme0").symlink_to(sys_root / FUNC / "nvme" / "nvme0")
    (sys_root / "block" / "nvme0n1").unlink()
    (sys_root / "block" / "nvme0n1").symlink_to(head)
    p = pd.capture("nvme0n1", "nvme", sys_root, proc_root, fio_cpus={0})
    assert p["pcie_link"]["pci_function"] == "0000:01:00.0"
    assert p["irq_affinity"] == {"45": "0", "46": "1"} and p["io_scheduler"] == "none"


NVME_QUEUES = ("nvme0q0", "nvme0q1", "nvme0q2", "nvme0q3", "nvme0q4")


def test_irqs_are_read_per_queue_and_shown_compactly(tmp_path):
    """/proc/interrupts names each vector's queue; the driver's one-CPU-per-queue spread is
    one entry on the report, the admin queue its own."""
    p = capture(tmp_path, fio_cpus={0, 1, 2, 3}, nodes=("0-3",),
                irq_cpus=("0-3", "0", "1", "2", "3"), queues=NVME_QUEUES)
    assert p["irq_queues"] == {str(45 + n): q for n, q in enumerate(NVME_QUEUES)}
    assert p["irq_affinity"] == {"45": "0-3", "46": "0", "47": "1", "48": "2", "49": "3"}
    assert p["warnings"] == []
    shown = dict(platform_rows.rows(p))
    assert shown["IRQ affinity (irq: CPUs)"] == \
        "nvme0q0 (irq 45): 0-3; nvme0q1-q4 (irq 46-49): CPUs 0-3, one each"
    assert "Irq queues" not in shown


def test_queues_out_of_step_are_listed_one_by_one():
    shown = platform_rows.irq_text({"45": "0", "46": "2", "47": "0-1"},
                                   {"45": "nvme0q1", "46": "nvme0q2", "47": "nvme0q3"})
    assert shown == "nvme0q1 (irq 45): 0; nvme0q2 (irq 46): 2; nvme0q3 (irq 47): 0-1"
    # CPUs and irqs in step, a queue missing between: not one run "q1-q3"
    assert platform_rows.irq_text({"45": "0", "46": "1"}, {"45": "nvme0q1", "46": "nvme0q3"}) \
        == "nvme0q1 (irq 45): 0; nvme0q3 (irq 46): 1"


def test_irqs_all_on_one_cpu_while_fio_runs_on_several_warns(tmp_path):
    """The admin queue (nvme0q0, on CPU 3) does not count: it serves no I/O."""
    p = capture(tmp_path, fio_cpus={0, 1, 2, 3}, nodes=("0-3",),
                irq_cpus=("3", "0", "0", "0", "0"), queues=NVME_QUEUES)
    assert p["warnings"] == [
        "all of the drive's interrupts are bound to CPU 0 while fio runs on CPUs 0-3: one "
        "core takes every completion; spread them (/proc/irq/N/smp_affinity_list, "
        "irqbalance) or let the driver manage them"]
    assert platform_rows.warnings(p) == p["warnings"]


def test_irqs_outside_the_device_node_fio_runs_on_warn(tmp_path):
    """Two nodes, the drive on node 1 (fio bound to CPUs 2-3), its I/O vectors on node 0."""
    sys_root, proc_root = make_tree(tmp_path, dev_node=1, nodes=("0-1", "2-3"),
                                    irq_cpus=("2", "0", "1"), queues=NVME_QUEUES[:3])
    p = pd.capture("nvme0n1", "nvme", sys_root, proc_root)
    assert p["fio_cpus"] == "2-3"
    assert p["warnings"] == [
        "the drive's interrupts are bound to CPUs 0-1, none of the CPUs fio runs on (2-3 "
        "(the device's NUMA node)): every completion interrupts another CPU; bind them to "
        "fio's CPUs (/proc/irq/N/smp_affinity_list, or stop irqbalance)"]


class FakeHost:
    remote, name = None, "this host"

    def __init__(self, files):
        self.files = files

    def read(self, path, default=""):
        return self.files.get(str(path), default)


def test_io_poll_needs_the_device_poll_queues():
    path = f"{pd.identity.SYS}/block/nvme0n1/queue/io_poll"
    pd.check_poll(FakeHost({path: "1"}), "nvme0n1", "/dev/nvme0n1")      # accepted
    with pytest.raises(pd.identity.DeviceError) as no:
        pd.check_poll(FakeHost({path: "0"}), "nvme0n1", "/dev/nvme0n1")
    said = str(no.value)
    assert said.startswith("--io-poll: /dev/nvme0n1 has no poll queues")
    assert path in said and "reads '0'" in said and "Nothing was written" in said
    assert "poll_queues=" in said and "without --io-poll" in said
    with pytest.raises(pd.identity.DeviceError, match="reads 'unreadable'"):
        pd.check_poll(FakeHost({}), "nvme0n1", "/dev/nvme0n1")
