"""The drive's own list of the OCP requirement IDs it does not meet (its Unsupported
Requirements log page, C5h, v2.7 4.8.12: URLP-3, read at a test's start by
pts.tools.ocp_page_facts) beside the suite's verdicts on the same IDs (issue 49 §1): what
`qualify --ocp` and the report's OCP page show. Stored data only.

The drive's word and the suite's check are two things: an ID the drive lists that the suite
PASSes is said on a line of its own (the suite's evidence against the drive's own report);
listed IDs the text does not have (another version's numbering, a typo) are named too.
"""

from __future__ import annotations

from dataclasses import dataclass

from pts.stored.ocp_every_id import Every, IdVerdict, count, host_facts
from pts.stored.ocp_stored import PASS

MARK = "drive says unsupported (C5h)"
KEY = "ocp_pages"


def drive_unsupported(facts: dict) -> list[str] | None:
    """The requirement IDs a decoded C5h page lists as not met (its count's worth, blanks left
    out), or None when the facts hold no decoded C5h page (refused, not read)."""
    page = (facts.get(KEY) or {}).get("C5h") or {}
    if not page.get("decoded"):
        return None
    fields = page["decoded"]["fields"]
    return [i for i in fields["unsupported_requirements"][:fields["unsupported_count"]] if i]


@dataclass(frozen=True)
class DriveList:
    ids: tuple[str, ...]                 # as the drive lists them
    listed: tuple[IdVerdict, ...]        # this text's IDs among them, with the suite's verdict
    unknown: tuple[str, ...]             # listed, not an ID of this text

    def says(self, rid: str) -> bool:
        return rid in self.ids

    @property
    def passed(self) -> list[IdVerdict]:
        return [v for v in self.listed if v.verdict == PASS]

    @property
    def lines(self) -> list[str]:
        counts = ", ".join(f"{n} {w}" for w, n in count(self.listed).items() if n)
        out = [f"The drive's C5h page (Unsupported Requirements) lists {len(self.ids)} "
               f"requirement ID(s) it does not meet: {len(self.listed)} of this text"
               + (f" (the suite: {counts})" if counts else "")
               + (f"; not IDs of this text: {', '.join(self.unknown)}" if self.unknown
                  else "")]
        out += [f"suite PASS on {v.id}, which the drive's C5h says it does not meet: "
                f"{v.reason}" for v in self.passed]
        return out


def drive_list(run, every: Every) -> DriveList | None:
    """The drive's C5h list of `run` beside `every`'s verdicts, or None when the run has no
    decoded C5h page (the drive refused it, or the run read no host facts)."""
    found = host_facts(run)
    ids = drive_unsupported(found[0]) if found else None
    if ids is None:
        return None
    by_id = {v.id: v for v in every.verdicts}
    return DriveList(tuple(ids), tuple(by_id[i] for i in ids if i in by_id),
                     tuple(i for i in ids if i not in by_id))
