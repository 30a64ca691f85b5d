"""The DSSD features of the OCP Datacenter NVMe SSD Specification (v2.7 4.15.5-4.15.24,
Feature Identifiers C2h-CBh) as Get Features answers them, read once at test start beside
the other features (pts.tools.host_read): the current value (SEL 000b), the default (SEL
001b: the text states factory defaults) and the capabilities (SEL 011b, GETF-5: the Saveable
bit decides the Set requirements "the device shall (not) support setting Save to 1b").
Read-only: Get Features changes nothing on the drive; the suite never sends Set Features.

C0h (Event Injection) is left out: what it returns is about injected events, which the suite
never injects; C1h is obsolete. C3h is read although the text says a host "should not"
issue it ("no useful information is returned", 4.15.8): GPCIE-1 asks what it returns.

facts.values["dssd_features"]["C2h"] = {"current": n, "default": n, "capabilities": n}, a
SEL the drive refused as {"refused": nvme-cli's words}; a feature whose current value is
refused is {"refused": words} alone (the other SELs are not asked of a feature the drive
does not support, which saves reads under an emulator).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pts.tools import commands
from pts.tools.nvme_facts import Facts, FactsError, feature_value

FIDS = (0xC2, 0xC3, 0xC4, 0xC5, 0xC6, 0xC7, 0xC8, 0xC9, 0xCA, 0xCB)
SELS = (("current", 0), ("default", 1), ("capabilities", 3))


def _said(argv: list[str], result) -> str:
    return (f"{' '.join(argv)}: exit status {result.returncode}: "
            f"{(result.stderr or result.stdout).strip()[-200:]}")


def read_dssd_features(ctrl: str, facts: Facts, *, run: Callable | None = None,
                       log_file: Path | None = None) -> None:
    """Get Features of every DSSD feature in FIDS into facts.values["dssd_features"]."""
    if run is None:
        commands.require("nvme", "nvme-cli")
        run = commands.run
    out = facts.values.setdefault("dssd_features", {})
    for fid in FIDS:
        got: dict = {}
        for name, sel in SELS:
            argv = ["nvme", "get-feature", ctrl, f"--feature-id=0x{fid:02x}", f"--sel={sel}"]
            result = run(argv, log_file=log_file, timeout=60, check=False)
            if result.returncode != 0:
                if sel == 0:
                    got = {"refused": _said(argv, result)}
                    break
                got[name] = {"refused": _said(argv, result)}
                continue
            try:
                got[name] = feature_value(result.stdout)
            except FactsError as exc:        # no value printed: say so, read on
                got[name] = {"refused": f"{' '.join(argv)}: {exc}"}
        out[f"{fid:02X}h"] = got


__all__ = ["FIDS", "SELS", "read_dssd_features"]
