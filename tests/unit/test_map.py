"""The map held by tests (issue 48 §6).

- docs/design.md's Layout names every module and package of pts/ (a module by its name in
  its folder's row, or by its path), and names nothing that is not there: a module added,
  moved or removed fails here until the map says so.
- No prose points at a section that does not exist: README.md and docs/*.md, and the
  docstrings, comments and messages of pts/, tests/ and benchmarks/, in the forms they use —
  a link's `#anchor` (GitHub's heading anchors), `docs/x.md, "Section"` / `README "Section"`
  / `(docs/x.md, 'Section')` (the quoted words found in a heading of that file, or in the
  bold words opening a paragraph), `"Section" below` within a page, and `README command N`.
- Every module the prose names (`pts/x/y.py`, `pts.x.y` or `pts.x.y.name`) is there.

tests/unit/test_docs.py holds the rest of README.md and docs/: options, commands, links to
files, the README's length.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from tests.support.helpers import REPO

DESIGN = REPO / "docs" / "design.md"
PTS = REPO / "pts"
PROSE = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
CODE_FOLDERS = ("pts", "tests", "benchmarks")
TICKED = re.compile(r"`([^`\s]+)`")
FILE = r"(?<![\w./-])(?P<file>(?:[\w.-]+/)*(?:README(?:\.md)?|[\w-]+\.md))"
# `docs/x.md, "Section"`, `[x.md](x.md), "Section"`, `README's "Section"`, `README section "S"`
POINTER = re.compile(FILE + r"\)?(?:'s)?,?[\s#]+(?:section[\s#]+)?\"(?P<section>[^\"]{2,80})\"")
QUOTED = re.compile(FILE + r", '(?P<section>[^'\n]{2,80})'")     # in a message: (x.md, 'Y')
HERE = re.compile(r"\"(?P<section>[^\"\n]{2,80})\"[\s#]+(?:below|above)\b")
ANCHOR = re.compile(r"\]\((?P<file>[^)\s#]*)#(?P<anchor>[^)\s]+)\)")
COMMAND = re.compile(r"README command (?P<n>\d+)")
MODULE_PATH = re.compile(r"(?<![\w/.])pts/[\w/]+\.py\b")
DOTTED = re.compile(r"(?<![\w./-])pts(?:\.[a-z_][a-z_0-9]*)+")


# ------------------------------------------------------------------------ the layout

def layout() -> str:
    text = DESIGN.read_text(encoding="utf-8")
    start = text.index("\n## Layout\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def named_in_layout() -> set[str]:
    """Repository paths the Layout names: a table row's folder (`pts/config/`) and the
    `name.py` / `sub/` / `sub/name.py` it lists, and any `pts/...` path in the section."""
    named = set()
    for line in layout().splitlines():
        cells = line.split("|")
        folder = None
        if line.startswith("|") and len(cells) >= 4:
            found = TICKED.findall(cells[2])
            folder = found[0] if found and found[0].startswith("pts") else None
        for token in TICKED.findall(line):
            token = token.rstrip(",.;:")
            if any(c in token for c in "<*:"):     # a pattern (pts/testdefs/<name>.py), a URL
                continue
            if token.startswith("pts/"):
                named.add(token.rstrip("/"))
            elif folder and folder.endswith("/") and token.endswith((".py", "/")):
                named.add((folder + token).rstrip("/"))
    return named


def modules_and_packages() -> set[str]:
    """Every module of pts/ and every package (its folder: the __init__.py goes with it)."""
    found = set()
    for path in PTS.rglob("*.py"):
        rel = path.relative_to(REPO)
        found.add(str(rel.parent) if path.name == "__init__.py" else str(rel))
    return found


def test_the_layout_is_read():
    named = named_in_layout()
    # the reader must see rows, names in rows and whole paths, or the tests below pass on less
    assert {"pts/config", "pts/config/spec.py", "pts/run.py", "pts/report/pages/registry.py",
            "pts/stored/cells.py"} <= named, sorted(named)


def test_the_layout_names_every_module():
    missing = sorted(modules_and_packages() - named_in_layout())
    assert not missing, (f"{len(missing)} modules or packages of pts/ docs/design.md's Layout "
                         f"does not name (add each to its folder's row): {missing}")


def test_the_layout_names_nothing_that_is_gone():
    gone = sorted(p for p in named_in_layout() if not (REPO / p).exists())
    assert not gone, f"docs/design.md's Layout names what is not there (moved?): {gone}"


# ------------------------------------------------------------------------ pointers in prose

def code_files() -> list[Path]:
    return [p for folder in CODE_FOLDERS for p in sorted((REPO / folder).rglob("*.py"))
            if "data" not in p.relative_to(REPO).parts]


def pointing_files() -> list[Path]:
    """The prose and the code, this file aside (its docstring shows the forms)."""
    return PROSE + [p for p in code_files() if p != Path(__file__)]


@functools.cache
def markdown_headings(path: Path, run_in: bool = False) -> list[str]:
    """The headings of a markdown file, outside fenced code; `run_in`: and the bold words
    that open a paragraph (design.md's recipes: "**Add a figure**: ...")."""
    out, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6}\s+(.*)", line)):
            out.append(m.group(1).strip())
        elif not fenced and run_in and (m := re.match(r"\*\*([^*]+)\*\*", line)):
            out.append(m.group(1).strip())
    return out


def github_anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces -> hyphens."""
    text = heading.replace("`", "").lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def words(text: str) -> str:
    """Compared as words: case, backticks and a comment's line breaks (`#`) aside."""
    return " ".join(re.sub(r"[`#]", " ", text).casefold().split())


def target(name: str, where: Path) -> Path | None:
    """The file a pointer names, or None when it is not this repository's (another
    project's README): README -> README.md, x.md -> beside the page or in docs/."""
    if name in ("README", "README.md"):
        return REPO / "README.md"
    for base in (where.parent, REPO, REPO / "docs"):
        if (base / name).is_file():
            return base / name
    if "/" not in name or name.startswith("docs/"):
        return REPO / "docs" / name.removeprefix("docs/")     # ours, and not there
    return None


@dataclass(frozen=True)
class Pointer:
    where: Path
    line: int
    text: str
    file: Path
    section: str            # quoted words, or an #anchor
    anchor: bool = False

    def holds(self) -> bool:
        if not self.file.is_file():
            return False
        if self.anchor:
            return self.section in {github_anchor(h) for h in markdown_headings(self.file)}
        return any(words(self.section) in words(h)
                   for h in markdown_headings(self.file, run_in=True))

    def __str__(self):
        return f"{self.where.relative_to(REPO)}:{self.line}: {self.text!r}"


@functools.cache
def pointers(path: Path) -> list[Pointer]:
    text = path.read_text(encoding="utf-8")
    if ".md" not in text and "README" not in text:
        return []
    line = lambda m: text.count("\n", 0, m.start()) + 1      # noqa: E731
    out = []
    for m in [*POINTER.finditer(text), *QUOTED.finditer(text)]:
        if (file := target(m["file"], path)) is not None:
            out.append(Pointer(path, line(m), m[0], file, m["section"]))
    if path.suffix == ".md":
        out += [Pointer(path, line(m), m[0], path, m["section"]) for m in HERE.finditer(text)]
        for m in ANCHOR.finditer(text):
            file = (path.parent / m["file"]).resolve() if m["file"] else path
            if not re.match(r"[a-z]+:", m["file"]):
                out.append(Pointer(path, line(m), m[0], file, m["anchor"], anchor=True))
    return out


def test_section_pointers_are_read():
    found = {(p.file.name, p.section) for f in pointing_files() for p in pointers(f)}
    # one of each form the prose uses, or the test below would pass on nothing
    assert {("results-format.md", "Export JSON"), ("workload.md", "Replay at native length"),
            ("running.md", "host-ceiling"), ("development.md", "What the boot runs and what "
                                             "it costs")} <= found, sorted(found)


def test_every_section_pointer_leads_to_a_section():
    broken = [str(p) for f in pointing_files() for p in pointers(f) if not p.holds()]
    assert not broken, ("pointers to a README or docs section that does not exist (the quoted "
                        "words must be in one of that file's headings):\n" + "\n".join(broken))


def test_readme_commands_named_are_there():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    numbered = {int(n) for n in re.findall(r"^\*\*(\d+)\.", readme, re.M)}
    assert numbered, "README.md has no numbered commands"
    bad = [f"{f.relative_to(REPO)}: {m[0]}" for f in pointing_files()
           for m in COMMAND.finditer(f.read_text(encoding="utf-8"))
           if int(m["n"]) not in numbered]
    assert not bad, f"README commands named that README.md does not number: {bad}"


# ------------------------------------------------------------------------ modules in prose

def defines(module: Path, name: str) -> bool:
    text = module.read_text(encoding="utf-8")
    return re.search(rf"^(?:def|class|async def) {name}\b|^{name}\s*[:=]|"
                     rf"^\s+(?:def|class) {name}\b|import .*\b{name}\b", text, re.M) is not None


def dotted_ok(name: str) -> bool:
    """`pts.a.b` is a module or package, or its longest module prefix defines the rest's
    first name. A name whose `pts.a` is no package is no module (`pts.rounds`: a junit
    property)."""
    parts = name.split(".")
    if not (PTS / parts[1]).exists() and not (PTS / f"{parts[1]}.py").exists():
        return True
    for i in range(len(parts), 0, -1):
        base = REPO.joinpath(*parts[:i])
        for module in (base.with_suffix(".py"), base / "__init__.py"):
            if module.is_file():
                return i == len(parts) or defines(module, parts[i])
    return False


def test_every_module_the_prose_names_is_there():
    bad = []
    for f in PROSE:
        text = f.read_text(encoding="utf-8")
        bad += [f"{f.relative_to(REPO)}: {p}" for p in MODULE_PATH.findall(text)
                if not (REPO / p).is_file()]
        bad += [f"{f.relative_to(REPO)}: {d}" for d in DOTTED.findall(text)
                if not dotted_ok(d.rstrip("."))]
    assert not bad, f"modules README.md and docs/ name that are not there (moved?): {bad}"
