"""sg3_utils and sdparm (SCSI/SAS): argv and parsing of REPORT SUPPORTED OPERATION CODES
(sg_opcodes), REQUEST SENSE progress (sg_requests), exit statuses (sg3_utils(8)) and the
Caching mode page WCE bit (sdparm). Plain values only; purge and cache policy live in
pts.conditioning.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pts.tools import commands

PACKAGE = "sg3-utils"
SHORT_S = 300                  # starting a command with IMMED set; a single REQUEST SENSE

SANITIZE_ARGS = {"block": ["--block"], "crypto": ["--crypto"], "overwrite": ["--overwrite",
                                                                            "--zero"]}
# sg3_utils(8) exit statuses that name a cause a user can act on.
EXIT_MEANING = {2: "the device is not ready", 3: "medium or hardware error",
                5: "illegal request: the device does not support this command or service action",
                6: "unit attention", 7: "data protect (writes are blocked)",
                9: "invalid opcode: the device does not support this command",
                11: "aborted command", 15: "the device could not be opened",
                33: "the command timed out"}
_PROGRESS = re.compile(r"Progress indication:\s*([\d.]+)\s*%")
_OPCODE_NAMES = {"sanitize, overwrite": "overwrite", "sanitize, block erase": "block",
                 "sanitize, cryptographic erase": "crypto"}


@dataclass(frozen=True)
class ScsiSupport:
    sanitize: frozenset[str]    # "block", "crypto", "overwrite"
    format_unit: bool
    listed: bool                # False: the device cannot list its commands (sg_opcodes failed)


def parse_opcodes(text: str) -> ScsiSupport:
    """Parse `sg_opcodes DEV`: rows like ' 48     2    10   0,0    Sanitize, block erase'."""
    actions, format_unit = set(), False
    for line in text.splitlines():
        words = line.split()
        name = " ".join(words).lower()
        if words[:1] == ["48"]:
            actions.update(a for n, a in _OPCODE_NAMES.items() if name.endswith(n))
        elif words[:1] == ["04"] and name.endswith("format unit"):
            format_unit = True
    return ScsiSupport(frozenset(actions), format_unit, listed=True)


def support(dev_path: str, *, run: Callable = commands.run,
            log_file: Path | None = None) -> ScsiSupport:
    """What the device says it supports (REPORT SUPPORTED OPERATION CODES). A device that
    cannot answer gives listed=False: its support is unknown, not absent."""
    res = run(["sg_opcodes", dev_path], log_file=log_file, timeout=SHORT_S, check=False)
    if res.returncode != 0:
        return ScsiSupport(frozenset(), False, listed=False)
    return parse_opcodes(res.stdout)


def exit_text(res: commands.CommandResult) -> str:
    meaning = EXIT_MEANING.get(res.returncode, "see sg3_utils(8)")
    return f"exit status {res.returncode} ({meaning}): {res.excerpt()}"

# --- write cache (PTS-E WCD / PTS-C WCE): Caching mode page, WCE bit ----------------------

def parse_wce(text: str) -> bool | None:
    """`WCE           1  [cha: y, def:  1, sav:  1]` (--get=WCE) or `WCE  1` (--get=WCE=1,
    the current value alone) -> True; no WCE line -> None."""
    m = re.search(r"^\s*WCE\s+(\d+)", text, re.MULTILINE)
    return bool(int(m.group(1))) if m else None


def read_write_cache(dev_path: str, *, run: Callable = commands.run,
                     log_file: Path | None = None) -> bool | None:
    """The WCE bit of the current Caching mode page; None when the device has no such field.
    Only the current value is asked for (--get=WCE=1): a device without saved pages (QEMU's
    scsi-hd) fails the saved-value read of plain --get=WCE with ILLEGAL REQUEST (exit status
    5) after printing the current value. A failing sdparm raises commands.ToolError."""
    return parse_wce(run(["sdparm", "--get=WCE=1", dev_path], log_file=log_file,
                         timeout=SHORT_S).stdout)



def write_cache_argv(dev_path: str, enabled: bool) -> list[str]:
    return ["sdparm", f"--set=WCE={1 if enabled else 0}", dev_path]


def progress_percent(text: str) -> float | None:
    """`sg_requests --progress` output -> percent done, None when no operation is running."""
    m = _PROGRESS.search(text)
    return float(m.group(1)) if m else None
