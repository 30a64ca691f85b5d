"""What a run records about a device on another host (ssh://): the DUT host's tool versions
(fio --server must speak the controller's fio protocol) and why the platform block of
run.json describes the controller only."""

from __future__ import annotations

from pathlib import Path

from pts.device.identity import BlockDevice
from pts.tools import commands


def remote_tools(dev: BlockDevice, log_file: Path | None = None) -> dict:
    """{"fio (DUT host)": ..., "nvme-cli (DUT host)": ...} read over ssh; {} for a local
    device. A tool that cannot be run there is recorded as such, never guessed."""
    if dev.remote is None:
        return {}
    out = {}
    for name, argv in (("fio", ["fio", "--version"]), ("nvme-cli", ["nvme", "version"])):
        try:
            text = dev.host.run(argv, log_file=log_file, timeout=60).stdout.strip()
            out[f"{name} (DUT host {dev.remote.host})"] = (text.splitlines() or ["?"])[0]
        except commands.ToolError as exc:
            out[f"{name} (DUT host {dev.remote.host})"] = \
                f"not run: {(str(exc).splitlines() or [''])[0]}"
    return out


def fio_version(dev: BlockDevice, log_file: Path | None = None) -> str:
    """`fio --version` of the fio whose engine runs the drive's I/O: this host's for a local
    drive, the DUT host's (its fio --server) for an ssh:// one. A DUT host whose fio is not
    on ssh's PATH: this host's, the closest reading there is (fio's client/server protocol
    needs a server of the same protocol version: pts.cli.remote checks both when it can)."""
    if dev.remote is not None:
        try:
            text = dev.host.run(["fio", "--version"], log_file=log_file, timeout=60).stdout
            if text.strip():
                return text.strip().splitlines()[0]
        except commands.ToolError:
            pass
    return commands.run(["fio", "--version"], log_file=log_file, timeout=30).stdout.strip()


def remote_platform(dev: BlockDevice) -> dict:
    """The device part of run.json's platform block for a DUT on another host: not
    captured (PCIe link, NUMA, governors, I/O scheduler are the DUT host's), said so as a
    platform warning on the report."""
    assert dev.remote is not None
    return {"dut_host": dev.remote.host, "fio_client": dev.remote.fio_client(),
            "warnings": [f"the device is on host {dev.remote.host} (fio client/server): "
                         "its platform (PCIe link, NUMA node, CPU governors, I/O "
                         "scheduler) was not captured; the platform values shown describe "
                         "the controller running the suite"]}
