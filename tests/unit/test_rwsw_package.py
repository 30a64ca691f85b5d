"""The RWSW tests are one package over a common base (issue 48 §4; blktests' tests/nvme/rc: a
group's shared helpers in one place, no test sources another): a test module of
pts/testdefs/rwsw/ (one that names its ledger TEST) imports no other test module, and the
common module imports none of the package but the typed spec sections (read with ast, not
by importing); those sections are the spec file's."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pts" / "testdefs" / "rwsw"
DOTTED = "pts.testdefs.rwsw"


def siblings_imported(path: Path) -> set[str]:
    """The modules of the package `path` imports (top level or in functions)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == DOTTED:
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(DOTTED + "."):
            found.add(node.module.rsplit(".", 1)[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.rsplit(".", 1)[1] for a in node.names
                      if a.name.startswith(DOTTED + ".")}
    return found


def is_test(path: Path) -> bool:
    return any(isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == "TEST" for t in node.targets)
        for node in ast.parse(path.read_text(encoding="utf-8")).body)


def test_no_rwsw_test_imports_another_and_common_imports_none():
    modules = {p.stem: p for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    tests = {name for name, p in modules.items() if is_test(p)}
    assert tests == {"wsat", "streams", "replay", "dirth"}, tests
    bad = [f"{name} imports {other}" for name, p in modules.items()
           for other in siblings_imported(p) if other in tests and other != name]
    assert not bad, bad
    # below every test: common, and the spec's sections it reads (typed), which import none
    assert siblings_imported(modules["common"]) <= {"sections"}, "common imports the " \
        f"package's {sorted(siblings_imported(modules['common']) - {'sections'})}"
    assert siblings_imported(modules["sections"]) == set()


def test_the_typed_sections_are_the_spec_files():
    """Each record of rwsw/sections.py has its [rwsw_*] table's keys, in its order (a key
    added to the spec file without its field would fail where the section is read)."""
    from pts.config.spec_rwsw import SECTIONS
    from pts.testdefs.rwsw import sections
    records = [c for c in vars(sections).values() if isinstance(c, type)
               and issubclass(c, sections.Section) and c is not sections.Section]
    assert len(records) == 6
    for record in records:
        assert [f.name for f in dataclasses.fields(record)] == list(SECTIONS[record.NAME]), \
            record.NAME
