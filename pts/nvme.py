"""The one wrapper around nvme-cli (identify only, for now). JSON output always; fields are
read tolerantly because nvme-cli's JSON changes between versions."""

from __future__ import annotations

import json
from pathlib import Path

from pts import commands
from pts.device import Identity


def parse_id_ctrl(text: str) -> Identity:
    """Model (mn), serial (sn), firmware (fr) from `nvme id-ctrl -o json`; they are
    space-padded ASCII fields in the controller data structure."""
    doc = json.loads(text)
    def field(key: str) -> str:
        return str(doc.get(key, "")).strip() or "unknown"
    return Identity(field("mn"), field("sn"), field("fr"), "nvme id-ctrl")


def identify(device: str, log_file: Path | None = None) -> Identity | None:
    """Identity from the controller, or None when nvme-cli is missing or fails."""
    try:
        result = commands.run(["nvme", "id-ctrl", "-o", "json", device], log_file=log_file,
                              timeout=60)
        return parse_id_ctrl(result.stdout)
    except (commands.ToolError, ValueError):
        return None


def version() -> str:
    try:
        return commands.run(["nvme", "version"], timeout=30).stdout.strip().splitlines()[0]
    except (commands.ToolError, IndexError):
        return "not installed"
