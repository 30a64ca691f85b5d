"""Reading values out of nvme-cli's JSON, whatever its version prints: numbers as numbers,
decimal or hex strings, "(5) text", {"value": 5}, 128-bit counters as {"hi", "lo"}; a log
nested under the device name. The shared readers of pts.tools.nvme and pts.tools.nvme_ocp.
"""

from __future__ import annotations

import json
import re


class NvmeError(RuntimeError):
    """An nvme-cli command failed or printed something we cannot read."""


def read_doc(text: str, what: str) -> dict:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise NvmeError(f"{what}: nvme-cli printed no JSON ({exc}): {text[:200]!r}") from None
    if not isinstance(doc, dict):
        raise NvmeError(f"{what}: nvme-cli JSON is not an object: {text[:200]!r}")
    return doc


def to_int(value, default: int = 0) -> int:
    """An integer from nvme-cli JSON: 5, "5", "0x5", "(5) text", {"value": 5}."""
    if isinstance(value, dict):
        value = value.get("value", default)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, str):
        m = re.search(r"0x[0-9a-fA-F]+|-?\d+", value.replace(",", ""))
        if m:
            return int(m.group(0), 0)
    return default


def find(doc, key: str):
    """The first value of `key` anywhere in a nested document (nvme-cli sometimes nests a
    log under the device name)."""
    if isinstance(doc, dict):
        if key in doc:
            return doc[key]
        for value in doc.values():
            found = find(value, key)
            if found is not None:
                return found
    return None


def first_int(doc: dict, *keys: str) -> int:
    for key in keys:
        value = find(doc, key)
        if value is not None:
            return to_int(value)
    return 0


def uint128(value) -> int | None:
    """A 128-bit counter as nvme-cli prints it: a decimal string or number (uint128 fields),
    or {"hi": high 64 bits, "lo": low 64 bits} (the OCP plugin's v1 JSON). None: absent."""
    if isinstance(value, dict) and ("hi" in value or "lo" in value):
        return (to_int(value.get("hi")) << 64) + to_int(value.get("lo"))
    return None if value is None else to_int(value)
