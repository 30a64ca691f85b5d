"""The rule that finds the OCP Datacenter NVMe SSD Specification's requirement IDs in a
version's text (issue 49 §2): tests/data/make_ocp_ids.py applies it once to write
pts/config/ocp_ids.tsv, and tests/unit/test_ocp_ids.py applies it again to the text, where the
text is at hand, to show the table holds every ID and nothing else.

The rule: an ID is a group name (a capital, then letters/digits, hyphen-joined parts) and a
number, `SMART-14`, `NVMe-CFG-3`, `TEL-CFG-SF-2`, standing
  - at the start of a line (v2.0's PDF as `pdftotext -layout` prints it: after the line's
    indent, as the PDF's tables are laid out with spaces), followed by a space, the line's
    end or `).,;:` (a space before the last hyphen allowed: v2.0's PDF prints `EREC -1`,
    `CPCIE -2`; the ID is read without it); or
  - (v2.7's Markdown) at the start of the first non-empty cell of a table row (`| SMART-14 |`,
    `|  | SERRI-1 |`): 552 of v2.7's IDs stand only there.
Not an ID, though it looks like one:
  - the tail of an ID split at its hyphen over two lines (`see DP-` / `CFG-6).`): the
    previous line (past lines holding only an ID, where the text interleaves a column of IDs)
    ends in `WORD-` and `WORD-TAIL` is itself an ID of the text; lines of only an ID, a
    number or nothing between them are passed over (the text's tables interleave them);
  - NOT_IDS: other documents' names (a number of 4 or more digits: SFF-TA-1009, SFF-8639;
    SP800-208) and the label
    example's fields (Barcode-1, Barcode-2 are label rows; Barcod-1 the example's readout).
An ID found more than once is one ID; its place is its first line outside the revision
history (a line of the history only where the history alone names it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

# The texts (pts.config.ocp_requirements.SPEC_TEXT names them): a git directory holding each,
# the commit and the path in it. Where the mirrors are not on this machine, PTS_OCP_TEXTS may
# name a folder holding the two git directories under these names.
MIRRORS = Path(os.environ.get("PTS_OCP_TEXTS", "/work/.mirror"))
TEXTS = {
    "2.7": ("circulardrives+cdi-grading-tool/repo", "427b743c734af2bfc017837fd964c770badf324b",
            "docs/Datacenter NVMe SSD Specification v2.7 Final.md"),
    "2.0": ("freews+general_parser/repo", "e094013be8cffa0fb60de487b04576f0ff10f9d0",
            "source_doc/Datacenter NVMe SSD Specification v2.0r21.pdf"),
}
TOC_LINE = re.compile(r"^\s*(\d+(?:\.\d+)*|APPENDIX [A-Z]|[A-Z]\.\d+(?:\.\d+)*)\s*[–-]?\s+"
                      r"(.+?)\s*\.{4,}\s*\d*\s*$")

ID = r"[A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)* ?-\d+"   # "EREC -1": v2.0's PDF spaces a few
AT_LINE_START = re.compile(rf"^\s*({ID})(?=\s|$|[).,;:])")
IN_FIRST_CELL = re.compile(rf"^\|(?:\s*\|)*\s*({ID})(?=\s|\||$)")
SKIPPED = re.compile(rf"^\s*({ID}|\d*)\s*$")    # a line of only an ID, a number or nothing
SPLIT_WORD = re.compile(r"([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)-$")
NOT_IDS = re.compile(r"^(.*-\d{4,}|SP800-\d+|Barcode?-\d+)$")
HISTORY = "Revision History"          # the v2.7 heading whose lines only name changed IDs


@dataclass(frozen=True)
class Found:
    id: str
    group: str
    at: int             # line (v2.7 Markdown) or page (v2.0 PDF, 1-based)
    section: str        # the heading the ID stands under: number and title
    history_only: bool  # named only in the revision history
    obsolete: bool      # its line says the ID is obsolete


def headings(lines: list[str]) -> list[tuple[str, str]]:
    """(number, title) of each entry of the text's table of contents (its dotted lines)."""
    return [(m.group(1), m.group(2)) for line in lines if (m := TOC_LINE.match(line))]


def text_lines(version: str, root: Path = MIRRORS) -> tuple[list[str], list[int] | None]:
    """The version's text as lines (v2.0: `pdftotext -layout`, and each line's page), or
    FileNotFoundError naming what is missing."""
    folder, commit, path = TEXTS[version]
    git = root / folder
    if not git.is_dir():
        raise FileNotFoundError(f"{git}: the git directory holding the v{version} text")
    raw = subprocess.run(["git", "-C", str(git), "show", f"{commit}:{path}"],
                         capture_output=True, check=True).stdout
    if not path.endswith(".pdf"):
        return raw.decode("utf-8").splitlines(), None
    if not shutil.which("pdftotext"):
        raise FileNotFoundError("pdftotext (apt-get install poppler-utils)")
    text = subprocess.run(["pdftotext", "-layout", "-", "-"], input=raw, capture_output=True,
                          check=True).stdout.decode("utf-8")
    lines, pages = [], []
    for n, page in enumerate(text.split("\f"), 1):
        lines += page.splitlines()
        pages += [n] * len(page.splitlines())
    return lines, pages


def read(version: str, root: Path = MIRRORS) -> list[Found]:
    """Every ID of the version's text, by the rule above, in text order."""
    lines, pages = text_lines(version, root)
    return find(lines, headings(lines), markdown=pages is None,
                page_of=(lambda i: pages[i]) if pages else None)


def group_of(rid: str) -> str:
    return rid.rsplit("-", 1)[0]


def _candidates(lines: list[str], markdown: bool) -> list[tuple[int, str]]:
    out = []
    for i, line in enumerate(lines):
        m = AT_LINE_START.match(line) if not line.lstrip().startswith("|") else None
        if m is None and markdown:
            m = IN_FIRST_CELL.match(line)
        rid = m.group(1).replace(" ", "") if m else ""
        if rid and not NOT_IDS.match(rid):
            out.append((i, rid))
    return out


def _split_tail(lines: list[str], i: int, rid: str, known: set[str]) -> bool:
    j = i - 1
    while j >= 0 and SKIPPED.match(lines[j]):
        j -= 1
    m = SPLIT_WORD.search(lines[j].rstrip()) if j >= 0 else None
    return bool(m) and f"{m.group(1).split()[-1]}-{rid}" in known


def find(lines: list[str], headings: list[tuple[str, str]], markdown: bool,
         page_of=None) -> list[Found]:
    """Every ID of a text, in text order. `headings`: (number, title) of the text's sections,
    from its table of contents; a line equal to one (case aside) starts that section."""
    titles = {_key(f"{n} {t}"): (n, t) for n, t in headings}
    section_at, current = [], ("", "")
    for line in lines:
        current = titles.get(_key(line), current)
        section_at.append(current)
    cands = _candidates(lines, markdown)
    known = {rid for _, rid in cands}
    first: dict[str, tuple[int, bool]] = {}
    for i, rid in cands:
        if _split_tail(lines, i, rid, known):
            continue
        in_history = section_at[i][1].lower() == HISTORY.lower()
        if rid not in first or (first[rid][1] and not in_history):
            first[rid] = (i, in_history)
    out = []
    for rid, (i, hist) in first.items():
        n, t = section_at[i]
        own = lines[i:i + 1] + [x for x in lines[i + 1:i + 2] if not _starts_id(x)]
        out.append((i, Found(rid, group_of(rid), page_of(i) if page_of else i + 1,
                             f"{n} {t}".strip(), hist,
                             "obsolete" in " ".join(own).lower())))
    return [f for _, f in sorted(out, key=lambda x: x[0])]


def _key(heading: str) -> str:
    return "".join(c for c in heading.lower() if c.isalnum() or c == ".")


def _starts_id(line: str) -> bool:
    return bool(AT_LINE_START.match(line) or IN_FIRST_CELL.match(line))
COUNTS = {   # IDs per group as the rule reads them, groups in the order the text has them
    "2.0": {  # 773 IDs, 97 groups
        "NVMe": 3, "NVMeR": 2, "NVMe-CFG": 8, "NVMe-AD": 11, "NSM": 7, "NUSE": 1, "UUID": 5,
        "NVMe-IO": 14, "NVMe-OPT": 7, "CTO": 5, "STD-LOG": 10, "TEL": 7, "SLOG": 11, "SMART": 31,
        "EREC-AEN": 1, "EREC": 15, "FWHST-LOG": 5, "FAHL": 7, "FAHE": 13, "LMLOG": 14,
        "LMDATA": 36, "DCLP": 12, "DSSDPSD": 3, "URLP": 6, "FWUP": 11, "TRIM": 7, "SECTOR": 4,
        "GETF": 2, "SERRI": 17, "ERRI": 6, "ERRIE": 4, "ERRIEDP": 4, "GERRI": 2, "CFUH": 17,
        "ROWTM": 1, "SROWTM": 17, "GROWTM": 2, "CPCIE": 17, "S1667": 17, "G1667": 2, "LMSF": 16,
        "LMDS": 11, "SPLPI": 17, "GPLPI": 2, "DSSDPSS": 2, "SDSSDPS": 17, "DSSDPSG": 2,
        "GDSSDPS": 2, "PCI": 7, "BOOT": 2, "PCIERR": 16, "LPWR": 1, "EYE": 1, "UBER": 1, "TTR": 20,
        "INCS": 6, "E2E": 7, "CRASH": 4, "REL": 5, "BKGND": 3, "WRL": 1, "PLP": 9, "DEVLMT": 1,
        "ENDUD": 3, "RETC": 3, "SLIFE": 2, "EOL": 5, "THERM": 3, "TTHROTTLE": 11, "TRPT": 4,
        "THRMS": 1, "GFF": 6, "PCM": 3, "PWR": 7, "FFM2": 14, "FFE1S": 12, "FFE1L": 12, "FFE3": 3,
        "FF8639": 4, "SMBUS": 11, "NVMe-MI": 13, "SEC": 38, "SBT": 5, "SPDM": 6, "DATAE": 1,
        "DP-CFG": 10, "LABL": 23, "ROHS": 1, "ESD": 1, "SV": 4, "UTIL": 1, "UTIL-PI": 7,
        "UTIL-NM": 10, "UTIL-FWHST": 9, "FB-CONF": 9, "FB-PERF": 8, "MS-CONF": 6,
    },
    "2.7": {  # 1717 IDs, 172 groups
        "NVMe": 3, "NVMeR": 2, "NVMe-CFG": 24, "NVMe-AD": 33, "NSM": 8, "NUSE": 1, "UUID": 6,
        "DSSD-AEN": 2, "NVMe-IO": 18, "NVMe-OPT": 22, "CTO": 11, "STD-LOG": 27, "TCGHST-PE": 5,
        "TCGCE": 24, "TCG-AUTHM": 3, "TCG-ACT": 2, "TCG-RACT": 2, "TCG-ASGN": 2, "TCG-BSID": 2,
        "GLP-ACC": 1, "SLOG": 14, "SMART": 52, "EREC-AEN": 1, "EREC-FUNC": 1, "EREC": 17,
        "TELRI": 6, "LMLOG": 18, "LMDATA": 38, "DCLP": 13, "DSSDPSD": 3, "URLP": 6, "HWCOMP": 9,
        "COMPD": 8, "CITYPE": 15, "HWCLOG": 6, "TCGL": 23, "TELSLG": 14, "TELSTR-LOG": 34,
        "STR-ID": 5, "STR-EV": 5, "STR-VUEV": 5, "TEL": 26, "STATF": 6, "STATI": 114,
        "STAT-CSD": 4, "CTX-NS": 4, "CTX-CTLR": 4, "CTX-QUEUE": 5, "SDL": 3, "EVENTD": 4,
        "EVC-TS": 6, "EVC-PCI": 6, "EVC-NVME": 6, "EVC-RST": 5, "EVC-BS": 5, "EVC-ASRT": 5,
        "EVC-TEMP": 5, "EVC-MEDIA": 5, "EVC-WEAR": 6, "EVC-SNP": 8, "EVC-VF": 5, "TELDF": 68,
        "EVC-SMBUS": 7, "EVC-MCTP": 9, "EVC-VU": 4, "EVF": 7, "SELFTST": 11, "FWUP": 32, "FDEF": 6,
        "TRIM": 9, "SECTOR": 6, "GETF": 5, "SERRI": 17, "ERRI": 8, "ERRIE": 4, "EVTREC": 4,
        "EVTDEF": 36, "ERRIEDP": 4, "GERRI": 2, "ROWTM": 1, "SROWTM": 17, "EOL": 8, "GROWTM": 2,
        "CPCIE": 17, "GPCIE": 1, "S1667": 17, "G1667": 2, "LMSF": 16, "LMDS": 11, "LMGF": 1,
        "SPLPI": 17, "GPLPI": 2, "DSSDPSS": 2, "SDSSDPS": 17, "DSSDPSG": 2, "GDSSDPS": 2,
        "TEL-CFG-SF": 17, "TEL-CFG-GF": 3, "SDAEC": 18, "GDAEC": 3, "SIDLE": 17, "GIDLE": 2,
        "MPCS": 17, "MPCSG": 2, "PCI": 42, "BOOT": 2, "PCIERR": 16, "LPWR": 2, "EYE": 1, "FDPG": 2,
        "FDPSRG": 7, "FDPSRG2": 2, "FDPDP": 2, "DIX": 1, "DIF": 1, "UBER": 1, "TTR": 23, "INCS": 7,
        "SEC": 53, "E2E": 7, "CRASH": 5, "REL": 6, "BKGND": 3, "WRL": 1, "PLP": 9, "DEVLMT": 1,
        "ENDUD": 3, "RETC": 3, "SLIFE": 2, "THERM": 3, "TTHROTTLE": 14, "TRPT": 6, "THRMS": 3,
        "GFF": 8, "PCM": 4, "PWR": 9, "FFM2": 15, "FFE1S": 16, "FFE1L": 14, "FFE3": 6, "FF8639": 4,
        "FFE2": 16, "SMBUS": 11, "NVMe-MI": 32, "FRU": 6, "SBT": 6, "SPDM": 21, "CERT": 6,
        "SFM": 9, "DATAE": 1, "TCG-FEATURE": 9, "TCG-COMM": 5, "TCG-SES": 8, "TCG-TRAN": 2,
        "TCG-AUTH": 5, "TCG-CRYPTO": 1, "TCG-LOCKING": 6, "TCG-PSID": 5, "DP-CFG": 13, "LABL": 23,
        "ROHS": 1, "ESD": 1, "EMC": 1, "SV": 4, "SUS": 2, "UTIL": 1, "UTIL-PI": 2, "UTIL-NM": 2,
        "UTIL-FWHST": 2, "META-CONF": 15, "META-PERF": 12, "MS-CONF": 9,
    },
}
