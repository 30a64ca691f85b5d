"""hdparm (ATA): argv and parsing of IDENTIFY (security and sanitize feature sets),
sanitize status and the write-cache flag. Output formats are those of hdparm 9.x
(identify.c, hdparm.c). Plain values only; purge and cache policy live in pts.conditioning.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pts.tools import commands

TOOL = "hdparm"
PACKAGE = "hdparm"
SHORT_S = 120                  # identify, set-pass, disable: hdparm's own limit is 15 s

SANITIZE_ARGS = {"block": ["--sanitize-block-erase"],
                 "crypto": ["--sanitize-crypto-scramble"],
                 # One pass of zeros; hdparm's default of 0 passes means 16.
                 "overwrite": ["--sanitize-overwrite-passes", "1",
                               "--sanitize-overwrite", "hex:00000000"]}


@dataclass(frozen=True)
class AtaIdentity:
    model: str = ""
    security_supported: bool = False     # False also when hdparm prints no Security section
    security_enabled: bool = False       # a user password is set
    locked: bool = False
    frozen: bool = False
    count_expired: bool = False          # too many wrong passwords: needs a power cycle
    enhanced_erase_supported: bool = False
    erase_minutes: int | None = None     # the drive's estimate (IDENTIFY word 89)
    enhanced_erase_minutes: int | None = None  # word 90
    sanitize_supported: bool = False
    sanitize_block_erase: bool = False
    sanitize_crypto_scramble: bool = False
    sanitize_overwrite: bool = False

    def sanitize_actions(self) -> list[str]:
        if not self.sanitize_supported:
            return []
        have = {"block": self.sanitize_block_erase, "crypto": self.sanitize_crypto_scramble,
                "overwrite": self.sanitize_overwrite}
        return [action for action, ok in have.items() if ok]


_SECURITY_LINE = re.compile(r"^(not |\(\?\) )?(supported|enabled|locked|frozen|"
                            r"expired: security count|supported: enhanced erase)$")
_SECURITY_FIELDS = {"supported": "security_supported", "enabled": "security_enabled",
                    "locked": "locked", "frozen": "frozen",
                    "expired: security count": "count_expired",
                    "supported: enhanced erase": "enhanced_erase_supported"}
_ERASE_TIME = re.compile(r"(?:more than )?(\d+)\s*min for (ENHANCED )?SECURITY ERASE UNIT")
_SANITIZE_LINE = re.compile(r"^(?:\*\s+)?(not\s+)?(SANITIZE feature set|BLOCK_ERASE_EXT command|"
                            r"CRYPTO_SCRAMBLE_EXT command|OVERWRITE_EXT command)$")
_SANITIZE_FIELDS = {"SANITIZE feature set": "sanitize_supported",
                    "BLOCK_ERASE_EXT command": "sanitize_block_erase",
                    "CRYPTO_SCRAMBLE_EXT command": "sanitize_crypto_scramble",
                    "OVERWRITE_EXT command": "sanitize_overwrite"}
_AFTER_SECURITY = re.compile(r"^\s*(Logical Unit WWN|Checksum|HW reset results|Integrity word)")


def _words(line: str) -> str:
    """'\\tnot\\tfrozen' and '    not    frozen' both become 'not frozen'."""
    return " ".join(line.split())


def _security_block(text: str) -> list[str] | None:
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip().startswith("Security:")]
    if not starts:
        return None     # hdparm prints no Security section when the feature set is absent
    block = []
    for line in lines[starts[0] + 1:]:
        if _AFTER_SECURITY.match(line):
            break
        block.append(line)
    return block


def parse_identify(text: str) -> AtaIdentity:
    """Parse `hdparm -I DEV`. Unknown or missing lines leave a field False/None."""
    found: dict = {}
    model = re.search(r"Model Number:\s*(.+)", text)
    found["model"] = model.group(1).strip() if model else ""
    for line in _security_block(text) or []:
        m = _SECURITY_LINE.match(_words(line))
        if m:
            found[_SECURITY_FIELDS[m.group(2)]] = m.group(1) is None
        for minutes, enhanced in _ERASE_TIME.findall(line):
            found["enhanced_erase_minutes" if enhanced else "erase_minutes"] = int(minutes)
    for line in text.splitlines():
        m = _SANITIZE_LINE.match(_words(line))
        if m:
            found[_SANITIZE_FIELDS[m.group(2)]] = m.group(1) is None
    return AtaIdentity(**found)


@dataclass(frozen=True)
class SanitizeStatus:
    state: str              # "SD0".."SD4", "unsupported" or "unknown"
    progress: int | None    # percent, while SD2
    completed_ok: bool      # "Last Sanitize Operation Completed Without Error"
    error: str = ""         # hdparm's "SANITIZE device error reason"


def parse_sanitize_status(text: str) -> SanitizeStatus:
    """Parse `hdparm --sanitize-status DEV` (stdout and stderr together)."""
    if "SANITIZE feature set is not supported" in text:
        return SanitizeStatus("unsupported", None, False)
    state = re.search(r"State:\s*(SD\d)", text)
    progress = re.search(r"Progress:\s*0x[0-9a-fA-F]+\s*\((\d+)%\)", text)
    error = re.search(r"SANITIZE device error reason:\s*(.+)", text)
    return SanitizeStatus(state.group(1) if state else "unknown",
                          int(progress.group(1)) if progress else None,
                          "Completed Without Error" in text,
                          error.group(1).strip() if error else "")

# --- write cache (PTS-E WCD / PTS-C WCE) ---------------------------------------------------

def parse_write_cache(text: str) -> bool | None:
    """` write-caching =  1 (on)` -> True; `= not supported` or nothing -> None."""
    m = re.search(r"write-caching\s*=\s*(\d+)", text)
    return bool(int(m.group(1))) if m else None


def read_write_cache(dev_path: str, *, run: Callable = commands.run,
                     log_file: Path | None = None) -> bool | None:
    """The drive's volatile write cache (hdparm -W); None when the drive has none or hdparm
    cannot tell. A failing hdparm raises commands.ToolError."""
    return parse_write_cache(run([TOOL, "-W", dev_path], log_file=log_file, timeout=SHORT_S)
                             .stdout)



def write_cache_argv(dev_path: str, enabled: bool) -> list[str]:
    return [TOOL, "-W1" if enabled else "-W0", dev_path]
