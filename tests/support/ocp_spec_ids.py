"""The OCP Datacenter NVMe SSD Specification's requirement IDs of the groups the suite
tabulates (pts.config.ocp_requirements.GROUPS), read from the specification's own text, not
from the suite's table: what a test compares the table, and every page or export made from
it, with, so that a requirement dropped from the table is missed, never silently absent.

How they were read (2026-11-29, for issue 47 §3): every line of the text that begins with an
ID of these groups, or a Markdown table row whose first cell is one (`| SMART-14 |`), counted
per group. In each version each group's IDs run 1..N without a gap, so a version is its
counts. (An ID also stands at the start of a line where later text refers back to it, e.g.
"SMART-13" in the v2.7 text's list of the C5h log, line 11746: the same ID, counted once.)

  v2.0: Datacenter NVMe SSD Specification Version 2.0 (07302021, r21), the PDF in GitHub
        freews/general_parser at e094013be8cffa0fb60de487b04576f0ff10f9d0,
        `source_doc/Datacenter NVMe SSD Specification v2.0r21.pdf`, as `pdftotext -layout`
        prints it (poppler 22.12).
  v2.7: "Version 2.7 (01082026)", the Markdown in GitHub circulardrives/cdi-grading-tool at
        427b743c734af2bfc017837fd964c770badf324b,
        `docs/Datacenter NVMe SSD Specification v2.7 Final.md`.

Each requirement's line in those texts is the table's own `line`; that each ID stands there
was checked when these counts were read (all 217 agreed)."""

from __future__ import annotations

SOURCES = {
    "2.0": "freews/general_parser@e094013b: Datacenter NVMe SSD Specification v2.0r21.pdf",
    "2.7": "circulardrives/cdi-grading-tool@427b743c: Datacenter NVMe SSD Specification "
           "v2.7 Final.md",
}
COUNTS = {
    "2.0": {"SMART": 31, "SLOG": 11, "STD-LOG": 10, "CTO": 5, "TRIM": 7, "NUSE": 1,
            "ENDUD": 3, "LMLOG": 14},
    "2.7": {"SMART": 52, "SLOG": 14, "STD-LOG": 27, "CTO": 11, "TRIM": 9, "NUSE": 1,
            "ENDUD": 3, "LMLOG": 18},
}


def ids(version: str) -> list[str]:
    """The version's requirement IDs of the tabulated groups, group by group, in number
    order."""
    return [f"{group}-{n}" for group, count in COUNTS[version].items()
            for n in range(1, count + 1)]
