"""The platform table and the platform warnings on the report summary, from run.json."""

from __future__ import annotations

import json

from pts.report import render
from tests.support.helpers import pdf_text
from tests.support.synthetic.runfactory import build_run

DEVICE_PLATFORM = {
    "pcie_link": {"pci_function": "0000:01:00.0", "current_speed": "8.0 GT/s PCIe",
                  "max_speed": "16.0 GT/s PCIe", "current_width": 4, "max_width": 4},
    "numa_nodes": 1, "device_numa_node": 0, "fio_cpus": "0-7", "fio_cpu_affinity": None,
    "fio_numa_nodes": [0], "cpufreq_governors": ["powersave"], "cpu_boost": True,
    "irq_affinity": {"45": "0", "46": "1"}, "io_scheduler": "none", "nr_requests": 1023,
    "rq_affinity": 1, "kernel_cmdline": "root=/dev/sda1 quiet",
    "warnings": ["PCIe link below the device's maximum: 8.0 GT/s PCIe of 16.0 GT/s PCIe "
                 "(0000:01:00.0); check the slot and BIOS link settings"],
}


def _with_platform(folder, extra):
    info = json.loads((folder / "run.json").read_text())
    info["platform"].update(extra)
    (folder / "run.json").write_text(json.dumps(info))
    return folder


def test_platform_table_and_warning(tmp_path):
    text = pdf_text(render(_with_platform(build_run(tmp_path), DEVICE_PLATFORM)))
    assert "Warnings (1)" in text
    assert "WARNING: Platform: PCIe link below the device's maximum: 8.0 GT/s PCIe of 16.0 " \
           "GT/s PCIe (0000:01:00.0)" in " ".join(text.split())
    assert "PCIe link: current speed 8.0 GT/s PCIe" in text
    assert "PCIe link: max width 4" in text
    assert "IRQ affinity (irq: CPUs) 45: 0; 46: 1" in text
    assert "CPU governor powersave" in text
    assert "I/O scheduler none" in text


def test_loop_device_platform_shows_na(tmp_path):
    loop = {k: None for k in DEVICE_PLATFORM} | {"warnings": [], "io_scheduler": "none",
                                                  "fio_cpus": "0-1"}
    text = pdf_text(render(_with_platform(build_run(tmp_path), loop)))
    assert "Warnings (0)" in text
    assert "PCIe link n/a" in text and "IRQ affinity (irq: CPUs) n/a" in text
    assert "fio CPU affinity not set (one NUMA node, or the device's node unknown)" in text


def test_old_run_json_without_device_platform_renders(tmp_path):
    text = pdf_text(render(build_run(tmp_path)))
    assert "Warnings (0)" in text and "Hostname testhost" in text
