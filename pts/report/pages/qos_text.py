"""One wording for response-time QoS levels on every page that shows them (LAT, WSAT, DIRTH,
CBW; issue 12 "QoS percentiles everywhere"): a level the I/O count cannot resolve is "n/r",
never the slowest I/O passed off as the level, and a footnote says why and what resolves it.
"""

from __future__ import annotations

from collections.abc import Iterable

from pts.stored import fmt
from pts.testdefs.qos_levels import needed_ios

NR = "n/r"


def level(us: float | None, resolvable: bool) -> str:
    """A level's cell: its value, "n/r" (too few I/Os) or "n/a" (no value at all)."""
    if not resolvable:
        return NR
    return "n/a" if us is None else fmt.num(us)


def short(ios: float | None, pct: float) -> bool:
    """True when `ios` I/Os cannot resolve the `pct` level (None: unknown, not short)."""
    return ios is not None and ios < needed_ios(pct)


def nr_note(levels: Iterable[float], who: str, fix: str) -> str:
    """The footnote for "n/r": `who` completed too few I/Os ("a window point of the cell"),
    `fix` is what resolves the level ("longer points (--point-seconds)")."""
    needs = ", ".join(f"{p:g} % needs {needed_ios(p):,}" for p in levels)
    return (f"{NR} = not resolvable: a p % level is more than the slowest I/O only when at "
            f"least 1 / (1 - p/100) I/Os were completed ({needs}); {who} completed fewer, so "
            f"no value is given. {fix[:1].upper()}{fix[1:]} resolve it.")
