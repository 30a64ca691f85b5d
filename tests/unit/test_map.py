"""The map held by tests (issue 48 §6).

- docs/design.md's Layout names every module and package of pts/ (a module by its name in
  its folder's row, or by its path), and names nothing that is not there: a module added,
  moved or removed fails here until the map says so.
- Every module README.md and docs/ name (`pts/x/y.py`, `pts.x.y` or `pts.x.y.name`) is there.

tests/unit/test_docs.py holds the rest of README.md and docs/: options, commands, links and
the sections the prose points at, the README's length.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.helpers import REPO

DESIGN = REPO / "docs" / "design.md"
PTS = REPO / "pts"
PROSE = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
TICKED = re.compile(r"`([^`\s]+)`")
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
