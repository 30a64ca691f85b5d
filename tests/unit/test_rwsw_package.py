"""The RWSW tests are one package over a common base (issue 48 §4; blktests' tests/nvme/rc: a
group's shared helpers in one place, no test sources another): a test module of
pts/testdefs/rwsw/ (one that names its ledger TEST) imports no other test module, and the
common module imports no module of the package. Read with ast, not by importing."""

from __future__ import annotations

import ast
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
    assert siblings_imported(modules["common"]) == set(), "common imports the package's " \
        f"{sorted(siblings_imported(modules['common']))}: it is below every test"
