"""The purges of a stored run as the OCP requirement verdicts read them
(pts.stored.ocp_verdicts): which NVMe purge a purge record is (Format SES=N or Sanitize
SANACT=N, from the nvme-cli command it recorded) and the SMART / Health readings of its test
just before and just after it. Stored records only."""

from __future__ import annotations

import re

from pts.config import ocp_requirements as ocp
from pts.results import records


def purge_kind(purge) -> tuple[str, int] | None:
    """("format", SES) or ("sanitize", SANACT) from the purge's nvme-cli command; None for
    another purge (ATA, SCSI, blkdiscard)."""
    argv = [str(a) for a in purge.command or ()]
    if argv[:1] != ["nvme"] or len(argv) < 2 or argv[1] not in ("format", "sanitize"):
        return None
    option = "ses" if argv[1] == "format" else "sanact"
    value = next((m.group(1) for a in argv if (m := re.fullmatch(rf"(?:--{option}|-s)=(\d+)",
                                                                  a))), None)
    return argv[1], int(value) if value is not None else 0


def kinds_text(kinds) -> str:
    """'Format SES=1 (user data erase) or Sanitize block erase'."""
    return " or ".join(ocp.PURGE_NAMES.get(k, f"{k[0]} {k[1]}") for k in kinds)


def purges_text(purges: list) -> str:
    return ", ".join(f"{p.test}: {p.method}" for p in purges) or "none completed"


def counters_after(ordered: list, purge) -> object | None:
    """The first device_counters record of the purge's test after it in `ordered` (the
    ledger's records; its "after purge" step)."""
    at = _index(ordered, purge)
    return next((r for r in ordered[at + 1:] if isinstance(r, records.DeviceCounters)
                 and r.test == purge.test), None)


def counters_before(ordered: list, purge) -> object | None:
    """The last device_counters record of the purge's test before it."""
    at = _index(ordered, purge)
    return next((r for r in reversed(ordered[:at])
                 if isinstance(r, records.DeviceCounters) and r.test == purge.test), None)


def _index(items: list, item) -> int:
    return next(i for i, x in enumerate(items) if x is item)
