"""QEMU 10's NVMe controller with FDP as its probe boot recorded it (tests/data/qemu-10/fdp,
tests/support/guest/fdp_probe.py), for the host facts' readers: a stand-in for commands.run
that answers nvme-cli's read-only commands with the recorded bytes and words, and the PCI
function's sysfs directory laid out from the recorded files. Used where no NVMe drive is
there (tests/unit/test_host_facts_step.py) and to hold the live guest's facts against the
recording (tests/e2e/test_qemu_e2e.py)."""

from __future__ import annotations

from pathlib import Path

from pts.tools.commands import CommandResult
from tests.support.helpers import DATA

FDP = DATA / "qemu-10" / "fdp"
STATS = ("0", "after-64MiB-phndl0", "after-16MiB-plain", "after-1MiB-phndl1-update")
REFUSED = (FDP / "log-00h_0.bin.stderr.txt").read_text()     # QEMU 10's words
# Get Features of a DSSD feature the probes did not ask (C2h-C7h, CAh, CBh): not recorded.
# Answered with the refusal QEMU 10.0.2 gave for C8h and C9h at every SEL (recorded,
# feature-c8h_current.txt.stderr.txt), as its hw/nvme/ctrl.c does for every Feature
# Identifier it does not implement (nvme_get_feature: Invalid Field when
# nvme_feature_support[fid] is not set; it sets none of C0h-CFh)
DSSD_NOT_RECORDED = (FDP / "feature-c8h_current.txt.stderr.txt").read_text()
PAGE = 4096
# Set Features C5h (Latency Monitor) with Save, as pts.conditioning.latency_monitor sends it: NOT
# RECORDED (no probe asked it; a set-feature writes). CONSTRUCTED from what QEMU 10's
# hw/nvme/ctrl.c does: nvme_set_feature answers Feature Identifier Not Saveable | DNR (0x410d)
# for a Save on a feature without the saveable capability (none of C0h-CFh has it) before it
# checks support (Invalid Field, 0x4002, without Save); the words as nvme-cli 2.3 prints a
# status (the recorded refusals' form), libnvme 1.3's text for status 0Dh
SET_C5H_REFUSED = ("NVMe status: Feature Identifier Not Saveable: The Feature Identifier "
                   "specified does not support a saveable value(0x410d)\n")


class Drive:
    """commands.run for nvme-cli on the recorded controller: Identify and the logs as bytes
    (cut at --log-len), features as text, refusals as QEMU said them; log 22h answers each
    read with the next of `stats` (a moment of STATS, or None: refused; the last repeats).
    Set Features C5h with Save is refused (SET_C5H_REFUSED, constructed); anything else but a
    read fails the test."""

    def __init__(self, stats=("0",)):
        self.stats, self.calls = list(stats), []

    @staticmethod
    def _arg(argv, name):
        return next((a.split("=", 1)[1] for a in argv if a.startswith(name + "=")), None)

    def __call__(self, argv, *, stdout_path=None, check=True, **kwargs):
        argv = list(argv)
        self.calls.append(argv)
        if argv[1] == "set-feature":          # the one write it answers: refused (above)
            assert self._arg(argv, "--feature-id") == "0xc5" and "--save" in argv, argv
            return CommandResult(tuple(argv), 1, "", SET_C5H_REFUSED, 0.1)
        assert argv[0] == "nvme" and argv[1] in ("id-ctrl", "id-ns", "get-feature", "get-log",
                                                 "admin-passthru"), argv   # reads only
        if argv[1] == "admin-passthru":       # Identify Controller with NSID 1 (NVMe-AD-11)
            assert argv[3:6] == ["--opcode=0x06", "--namespace-id=1", "--cdw10=1"], argv
            self._bytes(argv, stdout_path, "identify-cns01h-nsid1.bin")
            return CommandResult(tuple(argv), 0, "", (FDP / "identify-cns01h-nsid1.bin"
                                                     ".stderr.txt").read_text(), 0.1)
        if argv[1] in ("id-ctrl", "id-ns"):
            return self._bytes(argv, stdout_path, f"nvme-{argv[1]}.bin")
        if argv[1] == "get-feature":
            fid, sel = self._arg(argv, "--feature-id")[2:], self._arg(argv, "--sel")
            name = f"feature-{fid}h_" + {"0": "current", "1": "default",
                                         "3": "capabilities"}[sel] + ".txt"
            return self._text(argv, name)
        log = self._arg(argv, "--log-id")[2:]
        if log == "22":
            moment = self.stats.pop(0) if len(self.stats) > 1 else self.stats[0]
            name = f"log-22h_{moment}.bin" if moment else "refused"
        else:
            names = {"23": ["log-23h-lsp1-host-events_0.bin"]}.get(
                log, [f"log-{log}h_0.bin", f"log-{log}h_support.bin", f"log-{log}h.bin"])
            name = next((n for n in names if (FDP / n).exists()), "refused")
        return self._bytes(argv, stdout_path, name, int(self._arg(argv, "--log-len")))

    @staticmethod
    def _bytes(argv, out, name, length=None):
        if name == "refused" or not (FDP / name).exists():
            return CommandResult(tuple(argv), 1, "", REFUSED, 0.1)
        out.write_bytes((FDP / name).read_bytes()[:length])
        return CommandResult(tuple(argv), 0, "", "", 0.1)

    @staticmethod
    def _text(argv, name):
        if not (FDP / name).exists() and not (FDP / f"{name}.stderr.txt").exists():
            assert name[8:9] == "c", argv           # a DSSD feature C2h-CBh (above)
            return CommandResult(tuple(argv), 1, "", DSSD_NOT_RECORDED, 0.1)
        if not (FDP / name).exists():
            return CommandResult(tuple(argv), 1, "", (FDP / f"{name}.stderr.txt").read_text(),
                                 0.1)
        return CommandResult(tuple(argv), 0, (FDP / name).read_text(), "", 0.1)


def pci_function(folder: Path) -> Path:
    """The PCI function's sysfs directory as the probe read it, under `folder`: config,
    resource, the link files, and resource0 holding BAR0's first registers (the recorded 64
    bytes, the rest of the page zero: read_pci maps one page)."""
    dev = folder / "0000:00:03.0"
    dev.mkdir(parents=True)
    (dev / "config").write_bytes((FDP / "pci-config.bin").read_bytes())
    (dev / "resource").write_text((FDP / "pci-resource.txt").read_text())
    for line in (FDP / "pci-link.txt").read_text().splitlines():
        name, value = line.split(":", 1)
        (dev / name).write_text(value + "\n")
    (dev / "resource0").write_bytes((FDP / "nvme-regs-bar0.bin").read_bytes().ljust(PAGE, b"\0"))
    return dev


def recorded_facts(folder: Path) -> dict:
    """Every host fact of the recorded controller at its first moment, read by the product's
    own reader (pts.tools.host_read.read_all) with Drive and pci_function."""
    from pts.tools import host_read
    return host_read.read_all("/dev/nvme0", "/dev/nvme0n1", folder / "bytes", "0",
                              pci_device=pci_function(folder), run=Drive()).values
