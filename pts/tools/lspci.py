"""The one wrapper around lspci (pciutils): the vendor and device names of one PCI function,
from `lspci -mm -s DOMAIN:BUS:DEV.FN` (machine-readable: every field in quotes, names from
the pci.ids database)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass

from pts.tools import commands

TOOL, PACKAGE = "lspci", "pciutils"


@dataclass(frozen=True)
class PciNames:
    pci_class: str
    vendor: str
    device: str


def argv(bdf: str) -> list[str]:
    return [TOOL, "-mm", "-s", bdf]


def parse(text: str) -> PciNames | None:
    """`00:02.0 "SCSI storage controller" "Red Hat, Inc." "Virtio block device" -r01 ...`
    -> the class, vendor and device names; None when lspci printed no such function. The
    -r/-p fields are not quoted and are skipped; a name lspci does not know is its hex id."""
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    try:
        words = [w for w in shlex.split(line) if not w.startswith("-")]
    except ValueError:
        return None
    if len(words) < 4:
        return None
    return PciNames(pci_class=words[1], vendor=words[2], device=words[3])


def names(bdf: str, *, run: Callable = commands.run,
          log_file=None) -> PciNames | None:
    """The names of PCI function `bdf` (run: where lspci runs, this host or a DUT host).
    Raises commands.ToolMissing without pciutils."""
    return parse(run(argv(bdf), log_file=log_file, timeout=30).stdout)
