"""Write pts/config/ocp_ids.tsv and ocp_sections.tsv: every requirement ID of the OCP
Datacenter NVMe SSD Specification texts the suite cites (issue 49 §2), from the texts:

    python tests/data/make_ocp_ids.py            # reads the texts, writes both tables
    python tests/data/make_ocp_ids.py --check    # the committed tables are the texts' (exit 1
                                                 # naming the first difference if not)

The texts are not in the repository (their licences) nor on a CI machine, so the check is
this command's, run where the texts are, and not a test that would skip in CI.

The rule that finds an ID, and where the texts are (git directories at the commits that
pts.config.ocp_requirements.SPEC_TEXT names; v2.0's PDF through `pdftotext -layout`), are
tests/support/ocp_text_ids.py's. Made once and committed: the product reads the tables, never
the texts. One row per (version, ID) in text order: where it stands (a line of v2.7's
Markdown, a page of v2.0's PDF), the number of the section it stands under (the section's
heading, a few words, once per section in ocp_sections.tsv), and two facts the text states
at the ID: obsolete, and named only in the revision history. What the suite makes of each
ID (its class and reason) is pts/config/ocp_id_classes.py's, written by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support import ocp_text_ids  # noqa: E402

OUT = ROOT / "pts" / "config" / "ocp_ids.tsv"
SECTIONS = ROOT / "pts" / "config" / "ocp_sections.tsv"
HEADER = ("version", "id", "group", "at", "section", "obsolete", "history_only")


def rows() -> tuple[list[tuple[str, ...]], dict[tuple[str, str], str]]:
    out, sections = [], {}
    for version in ("2.0", "2.7"):
        for f in ocp_text_ids.read(version):
            number, _, title = f.section.partition(" ")
            sections[(version, number)] = title
            out.append((version, f.id, f.group, str(f.at), number,
                        "1" if f.obsolete else "", "1" if f.history_only else ""))
    return out, sections


def write(path: Path, header: tuple[str, ...], table: list[tuple[str, ...]]) -> None:
    lines = ["\t".join(header)] + ["\t".join(r) for r in table]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{path.relative_to(ROOT)}: {len(table)} rows")


def check(ids: list[tuple[str, ...]]) -> int:
    kept = [tuple(line.split("\t")) for line in OUT.read_text(encoding="utf-8").splitlines()[1:]]
    for n, (old, new) in enumerate(zip(kept, ids, strict=False), 1):
        if old != new:
            print(f"{OUT.relative_to(ROOT)} row {n}: {old} committed, {new} in the text")
            return 1
    if len(kept) != len(ids):
        print(f"{OUT.relative_to(ROOT)}: {len(kept)} rows committed, {len(ids)} in the texts")
        return 1
    print(f"{OUT.relative_to(ROOT)}: the texts' {len(ids)} IDs, as committed")
    return 0


def main() -> None:
    ids, sections = rows()
    if sys.argv[1:] == ["--check"]:
        raise SystemExit(check(ids))
    write(OUT, HEADER, ids)
    write(SECTIONS, ("version", "section", "heading"), [(*k, v) for k, v in sections.items()])


if __name__ == "__main__":
    main()
