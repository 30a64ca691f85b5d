"""Every requirement ID of each OCP Datacenter NVMe SSD Specification text the suite cites,
in text order, each with its class (issue 49 §2: none left out as a group): the IDs from
pts/config/ocp_ids.tsv (and their sections' headings from ocp_sections.tsv), both generated
once from the texts by

    python tests/data/make_ocp_ids.py

(the rule that finds an ID: tests/support/ocp_text_ids.py), and their classes and reasons
from pts.config.ocp_id_classes (by hand). Keyed by (version, ID), like
pts.config.ocp_requirements.TABLE, whose rows are the TABULATED ones here.

A form factor's IDs depend on the drive: `resolve(entry, form_factor)` gives the class and
reason for a drive of that form factor (None: not known).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from importlib import resources

from pts.config import ocp_v20, ocp_v27
from pts.config.ocp_id_classes import (
    FORM_FACTOR_OF,
    FORM_FACTORS,
    GROUPS,
    JUDGED_GROUPS,
    NOT_APPLICABLE,
    NOT_CHECKED,
    OVERRIDES,
    REASONS,
    SUBJECTS,
    TABULATED,
    TO_BE_JUDGED,
)

IDS_FILE, SECTIONS_FILE = "ocp_ids.tsv", "ocp_sections.tsv"
LOCATOR = {"2.0": "page", "2.7": "line"}     # v2.0: a PDF's page; v2.7: a Markdown line
TABULATED_ROWS = {r.key: r for r in (*ocp_v20.ROWS, *ocp_v27.ROWS)}


class Unclassified(ValueError):
    pass


@dataclass(frozen=True)
class OcpId:
    version: str
    id: str
    group: str
    at: int                 # the line (v2.7) or page (v2.0) where the ID stands
    section: str            # the section's number and heading
    subject: str            # this project's words: the group's, or the TABLE row's
    cls: str                # pts.config.ocp_id_classes.CLASSES
    reason: str             # the sentence the report shows
    form_factor: str = ""   # the only form factor it applies to ("": all)

    @property
    def key(self) -> tuple[str, str]:
        return (self.version, self.id)

    @property
    def where(self) -> str:
        return (f"OCP DC NVMe SSD {self.version} {self.id}, {LOCATOR[self.version]} "
                f"{self.at} (section {self.section})")


def _read(name: str) -> list[dict[str, str]]:
    text = resources.files("pts.config").joinpath(name).read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))


def classify(version: str, rid: str, group: str, obsolete: bool) -> tuple[str, str, str]:
    """(class, reason, form factor) of one ID, or Unclassified naming its group."""
    if (version, rid) in TABULATED_ROWS:
        return TABULATED, REASONS["tabulated"], ""
    key = OVERRIDES.get((version, rid)) or ("obsolete" if obsolete else "")
    if key == "obsolete":
        return NOT_APPLICABLE, REASONS["obsolete"], ""
    if key in FORM_FACTORS or (not key and group in FORM_FACTOR_OF):
        ff = key or FORM_FACTOR_OF[group]
        return NOT_APPLICABLE, REASONS["form factor"].format(form_factor=ff), ff
    if key:
        return NOT_CHECKED, REASONS[key], ""
    if group in JUDGED_GROUPS:
        return TO_BE_JUDGED, REASONS["to be judged"], ""
    if group in GROUPS:
        return NOT_CHECKED, REASONS[GROUPS[group][1]], ""
    raise Unclassified(f"OCP {version} {rid}: group {group!r} has no class; add it to "
                       "pts/config/ocp_id_classes.py GROUPS (or JUDGED_GROUPS)")


@cache
def _table() -> dict[str, tuple[OcpId, ...]]:
    headings = {(r["version"], r["section"]): r["heading"] for r in _read(SECTIONS_FILE)}
    out: dict[str, list[OcpId]] = {v: [] for v in LOCATOR}
    for r in _read(IDS_FILE):
        v, rid, group = r["version"], r["id"], r["group"]
        cls, reason, ff = classify(v, rid, group, r["obsolete"] == "1")
        row = TABULATED_ROWS.get((v, rid))
        subject = row.subject if row else SUBJECTS.get(group) or GROUPS[group][0]
        if r["history_only"] == "1":
            subject += " (named only in the revision history)"
        out[v].append(OcpId(v, rid, group, int(r["at"]),
                            f"{r['section']} {headings[(v, r['section'])]}".strip(),
                            subject, cls, reason, ff))
    return {v: tuple(ids) for v, ids in out.items()}


def all_ids(version: str) -> tuple[OcpId, ...]:
    """Every requirement ID of the version's text, in text order, each with its class."""
    table = _table()
    if version not in table:
        raise KeyError(f"no OCP requirement ID list for version {version!r}; listed: "
                       f"{', '.join(table)}")
    return table[version]


def resolve(entry: OcpId, form_factor: str | None) -> tuple[str, str]:
    """(class, reason) of `entry` for a drive of `form_factor` (one of FORM_FACTORS, or
    None when the drive's is not known): an ID of another form factor is NOT APPLICABLE, one
    of the drive's own (or of an unknown one) NOT CHECKED, as it needs the drive in hand."""
    if form_factor is not None and form_factor not in FORM_FACTORS:
        raise ValueError(f"form factor {form_factor!r} is not one of {', '.join(FORM_FACTORS)}")
    if not entry.form_factor:
        return entry.cls, entry.reason
    if form_factor is None:
        return NOT_CHECKED, (f"{entry.reason}; the drive's form factor is not known, and "
                             f"{REASONS['inspect']}")
    if form_factor == entry.form_factor:
        return NOT_CHECKED, REASONS["inspect"]
    return NOT_APPLICABLE, f"{entry.reason}; this drive is {form_factor}"
