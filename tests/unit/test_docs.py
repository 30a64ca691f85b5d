"""README.md is a README and docs/ the manual (issue 31 §6): every option of pytest's
"snia-pts" group and every `python -m pts` command is documented in some docs/*.md page,
every docs/*.md page is linked from README.md, every relative link of the README and the
pages leads to a file that exists (and its `#anchor` to a heading there), and the README
fits on two screens.

No prose points at a section that does not exist (issue 48 §6): README.md and docs/*.md, and
the docstrings, comments and messages of pts/, tests/ and benchmarks/, in the forms they
use — `docs/x.md, "Section"` / `README "Section"` / `(docs/x.md, 'Section')` (the quoted
words found in a heading of that file, or in the bold words opening a paragraph: design.md's
recipes), `"Section" below` within a page, and `README command N`. docs/design.md's layout
and the modules the prose names: tests/unit/test_map.py.

The options are taken from the plugins themselves (each one's pytest_addoption, called on a
recording parser), not scraped from `pytest --help`, so an option added anywhere in the group
is seen here the moment it exists.
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import re
from dataclasses import dataclass
from pathlib import Path

from pts.cli import main as pts_main
from tests.support.helpers import REPO

README = REPO / "README.md"
DOCS = REPO / "docs"
GROUP = "snia-pts"
MAX_README_LINES = 160      # issue 31: "about 150 lines", one or two screens
LINK = re.compile(r"\]\(([^)\s]+)\)")
# Pointers to a section: `docs/x.md, "Section"`, `[x.md](x.md), "Section"`, `README's "S"`,
# `README section "S"`; in a message `(docs/x.md, 'Section')`; within a page `"S" below`.
FILE = r"(?<![\w./-])(?P<file>(?:[\w.-]+/)*(?:README(?:\.md)?|[\w-]+\.md))"
POINTER = re.compile(FILE + r"\)?(?:'s)?,?[\s#]+(?:section[\s#]+)?\"(?P<section>[^\"]{2,80})\"")
QUOTED = re.compile(FILE + r", '(?P<section>[^'\n]{2,80})'")
HERE = re.compile(r"\"(?P<section>[^\"\n]{2,80})\"[\s#]+(?:below|above)\b")
COMMAND = re.compile(r"README command (?P<n>\d+)")
CODE_FOLDERS = ("pts", "tests", "benchmarks")


class _Recorder:
    """Stands in for pytest's Parser and its OptionGroups: keeps the option names per group."""

    def __init__(self):
        self.groups: dict[str, list[str]] = {}

    def getgroup(self, name, description="", after=None):
        names = self.groups.setdefault(name, [])

        class Group:
            def addoption(self, *opts, **attrs):
                names.extend(o for o in opts if o.startswith("--"))

        return Group()

    def addoption(self, *opts, **attrs):
        self.groups.setdefault("", []).extend(o for o in opts if o.startswith("--"))

    def addini(self, *args, **kwargs):
        pass


def user_plugins() -> list[str]:
    """The plugins every `pytest pts/` run loads: the root conftest.py's pytest_plugins."""
    tree = ast.parse((REPO / "conftest.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise AssertionError("conftest.py: no pytest_plugins list")


def pts_options() -> list[str]:
    parser = _Recorder()
    for name in user_plugins():
        hook = getattr(importlib.import_module(name), "pytest_addoption", None)
        if hook is not None:
            hook(parser)
    return parser.groups.get(GROUP, [])


def pts_commands() -> list[str]:
    parser = pts_main.build_parser([])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


def docs_pages():
    return sorted(DOCS.glob("*.md"))


def docs_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in docs_pages())


def mentioned(word: str, text: str) -> bool:
    """`word` in `text` as a whole option or command name (--resume is not --resume-x)."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def test_the_option_group_is_found():
    options = pts_options()
    # the recorder must see the group pytest shows, or the test below would pass on nothing
    assert {"--device", "--destructive", "--datasheet", "--inventory", "--fio-port"} \
        <= set(options), options


def test_every_pts_option_is_documented_in_docs():
    text = docs_text()
    missing = [o for o in pts_options() if not mentioned(o, text)]
    assert not missing, (f"options of pytest's {GROUP!r} group no docs/*.md page mentions "
                         f"(docs/running.md has the table of options): {missing}")


def test_every_pts_command_is_documented_in_docs():
    commands = pts_commands()
    assert {"report", "serve", "demo"} <= set(commands), commands
    text = docs_text()
    missing = [c for c in commands if not mentioned(f"pts {c}", text)]
    assert not missing, f"`python -m pts` commands no docs/*.md page mentions: {missing}"


def test_every_docs_page_is_linked_from_the_readme():
    linked = {m.split("#", 1)[0] for m in LINK.findall(README.read_text(encoding="utf-8"))}
    pages = [f"docs/{p.name}" for p in docs_pages()]
    assert pages, "no docs/*.md pages"
    unlinked = [p for p in pages if p not in linked]
    assert not unlinked, f"docs pages README.md does not link: {unlinked}"


def test_every_relative_link_leads_to_a_file_and_its_anchor_to_a_heading():
    broken = []
    for page in [README, *docs_pages()]:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            path, _, anchor = target.partition("#")
            if re.match(r"[a-z]+:", path):                  # http:, mailto:
                continue
            file = page.parent / path if path else page
            if not file.exists():
                broken.append(f"{page.relative_to(REPO)}: {target}")
            elif anchor and file.suffix == ".md" and anchor not in {
                    github_anchor(h) for h in markdown_headings(file)}:
                broken.append(f"{page.relative_to(REPO)}: {target} (no such heading)")
    assert not broken, f"links to files or headings that do not exist: {broken}"


def test_a_link_anchor_is_read_as_github_makes_it():
    assert github_anchor("Write amplification from the drive's own counters (issue 33 §3)") \
        == "write-amplification-from-the-drives-own-counters-issue-33-3"
    assert "host-ceiling" in {github_anchor(h) for h in markdown_headings(DOCS / "running.md")}


def test_readme_fits_on_two_screens():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, (
        f"README.md has {len(lines)} lines (at most {MAX_README_LINES}): move detail to docs/")


# ------------------------------------------------------ sections pointed at (issue 48 §6)

def code_files() -> list[Path]:
    return [p for folder in CODE_FOLDERS for p in sorted((REPO / folder).rglob("*.py"))
            if "data" not in p.relative_to(REPO).parts]


def pointing_files() -> list[Path]:
    """The prose and the code, this file aside (its docstring shows the forms)."""
    return [README, *docs_pages()] + [p for p in code_files() if p != Path(__file__)]


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
    section: str            # the quoted words

    def holds(self) -> bool:
        return self.file.is_file() and any(words(self.section) in words(h) for h in
                                           markdown_headings(self.file, run_in=True))

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
    return out


def test_section_pointers_are_read():
    found = {(p.file.name, p.section) for f in pointing_files() for p in pointers(f)}
    # one of each form the prose uses, or the test below would pass on nothing
    assert {("results-format.md", "Export JSON"), ("workload.md", "Replay at native length"),
            ("report.md", "The RWSW pages"), ("development.md", "What the boot runs and what "
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
