"""The package tree is the architecture: imports go down the flow, never back up, and never
in a cycle — imports inside functions included (read with ast, not by importing).

Layers, lowest first (docs/design.md, "Layout"): a module may import its own layer and the
layers below it. Within a layer, the module graph must be acyclic too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PTS = Path(__file__).resolve().parents[2] / "pts"
# workload: RWSW captures, their characterisation and the applied test workload (above the
# device it captures, below everything that runs tests with it).
# stored: the stored-run read model (run.json + ledger -> RunView), below every reader of a
# stored run (report, export, compare, qualify, serve). index: the results index (SQL rows
# of the stored runs, pts.stored's figures), below compare and qualify (which may choose
# their runs by a query on it) and the dashboard that reads it. session: the pytest plugin,
# its options and the several-device session, above every stage it drives.
# power (issue 51): power sources and the energy maths, above the tools (ipmitool, the
# Redfish client) and the emulated SSD (its power model) it reads, below the run that
# records a window per round.
LAYERS = ["pts", "config", "tools", "device", "workload", "emulate", "power", "results", "run",
          "conditioning", "procedure", "testdefs", "stored", "report", "export", "index",
          "compare", "qualify", "serve", "cli", "session", "__main__", "suite"]
# One floor (issue 48 §1): the readers of a stored run, the report, the exports and the
# index, stand side by side on the read model (its cell helpers and figure catalogue are in
# pts.stored) and import none of each other; their order in LAYERS is only a listing.
BESIDE = ("report", "export", "index")
# Rooms inside a layer, lowest first (docs/design.md, "Layout"): a module in a room imports its
# own room and the rooms below; the modules at the top of the layer (pts/report/cli.py,
# document.py, console.py) may import every room, and no room imports them.
# workload/capture/ (issue 48 §4): the capture, below characterisation and the ATW, which
# read its file.
ROOMS = {"report": ["renderers", "pages"], "workload": ["capture"]}
RENDERER_FREE = "pts.stored"           # the stored run: no reportlab, no matplotlib
RENDERER_LIBS = {"reportlab", "matplotlib"}
MAX_LINES = 400          # a module larger than this wants splitting
MAX_TOP_MODULES = 12


def module_name(path: Path) -> str:
    parts = path.relative_to(PTS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PTS.rglob("*.py"))}


def imports_of(path: Path, known: set[str]) -> set[str]:
    """Every pts module `path` imports, at top level or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from pkg import mod` imports pkg.mod; `from mod import name` imports mod
            subs = [f"{node.module}.{a.name}" for a in node.names]
            names = [s for s in subs if s in known] or [node.module]
        else:
            continue
        found |= {n for n in names if n in known}
    return found


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports_of(path, set(mods)) - {name} for name, path in mods.items()}


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "pts"


def find_cycle(g: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}      # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(g.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(g):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_find_cycle_finds_one_and_only_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle_between_modules():
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_imports_go_down_the_layers():
    g = graph()
    assert {layer(m) for m in g} <= set(LAYERS), "a new top-level module or package: give " \
        "it a place in LAYERS (and in the README's Architecture section)"
    upward = [f"{m} ({layer(m)}) imports {i} ({layer(i)})" for m, deps in g.items()
              for i in deps if LAYERS.index(layer(i)) > LAYERS.index(layer(m))]
    assert not upward, "imports that go up the flow:\n" + "\n".join(sorted(upward))
    across = [f"{m} imports {i}" for m, deps in g.items() for i in deps
              if layer(m) != layer(i) and {layer(m), layer(i)} <= set(BESIDE)]
    assert not across, "readers on one floor import each other (what they share belongs " \
        "in pts.stored):\n" + "\n".join(sorted(across))


def room(module: str) -> str | None:
    """The room of a module (None: the top of its layer, or a layer without rooms)."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[2] in ROOMS.get(layer(module), ()) else None


def test_imports_go_down_the_rooms():
    g = graph()
    bad = []
    for m, deps in g.items():
        if (here := room(m)) is None:
            continue
        rooms = ROOMS[layer(m)]
        for i in deps:
            there = room(i)
            if layer(i) == layer(m) and (there is None
                                         or rooms.index(there) > rooms.index(here)):
                bad.append(f"{m} ({here}) imports {i} ({there or 'top of ' + layer(i)})")
    assert not bad, "imports that go up the rooms:\n" + "\n".join(sorted(bad))


def test_the_run_view_is_renderer_free():
    """The run view feeds every renderer (PDF now, HTML next): it draws nothing itself."""
    bad = []
    for name, path in modules().items():
        if name == RENDERER_FREE or name.startswith(RENDERER_FREE + "."):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    used = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    used = [node.module]
                else:
                    continue
                bad += [f"{name} imports {u}" for u in used if u.split(".")[0] in RENDERER_LIBS]
    assert not bad, bad


def test_no_module_imports_another_modules_private_names():
    """What several modules share is public (the chart base: pts.report.renderers.chart_base);
    a leading underscore means "this module's own", and no other module reaches for it."""
    bad = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pts"):
                bad += [f"{name} imports {node.module}.{a.name}" for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")]
    assert not bad, bad


# issue 48 §2: the ledger is read by pts.results (its schema and reader) and the read model
# (pts.stored.data.load_run, which keeps every record on RunView.records / TestResult.records);
# every other reader of a stored run takes the records from there. Excepted, by name: the
# run-time readers of testdefs, which read the ledger of the run in flight (no RunView yet).
LEDGER_READERS = {"pts.stored.data"}
RUN_TIME_LEDGER_READERS = {"pts.testdefs.dirth_cbw": "window_points",
                           "pts.testdefs.rwsw.dirth": "record_histogram"}
LEDGER_READS = {"read_ledger", "read_records"}      # pts.results.ledger's readers
FILE_READS = {"open", "read_text", "read_bytes"}


def test_only_the_results_and_the_read_model_open_the_ledger():
    """No module but pts.results and the read model imports or calls the ledger's readers
    or opens a file whose expression names the ledger (`folder / "ledger.jsonl"`,
    `run.ledger.path`); each excepted run-time reader still reads it where it is named."""
    bad, seen = [], set()
    for name, path in modules().items():
        if name.startswith("pts.results.") or name in LEDGER_READERS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = {n: f.name for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
                 for n in ast.walk(f)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "pts.results.ledger":
                what = sorted({a.name for a in node.names} & LEDGER_READS)
            elif isinstance(node, ast.Attribute | ast.Name):
                what = sorted({getattr(node, "attr", getattr(node, "id", None))} & LEDGER_READS)
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(
                    node.func, "id", None)) in FILE_READS and "ledger" in ast.unparse(node).lower():
                what = [ast.unparse(node)]
            else:
                continue
            if not what:
                continue
            if name in RUN_TIME_LEDGER_READERS and where.get(node) in (
                    RUN_TIME_LEDGER_READERS[name], None):     # None: its import
                seen.add(name)
            else:
                bad.append(f"{path.relative_to(PTS.parent)}:{node.lineno} "
                           f"({where.get(node, 'module level')}): {', '.join(what)}")
    assert not bad, ("reads the ledger itself (take RunView.records / TestResult.records "
                     "from pts.stored.data.load_run):\n" + "\n".join(bad))
    assert seen == set(RUN_TIME_LEDGER_READERS), \
        f"excepted but reads no ledger now (drop it): {set(RUN_TIME_LEDGER_READERS) - seen}"


def test_tool_wrappers_know_no_policy():
    g = graph()
    bad = [f"{m} imports {i}" for m, deps in g.items() if layer(m) == "tools"
           for i in deps if layer(i) not in ("pts", "config", "tools")]
    assert not bad, bad


@pytest.mark.parametrize("name", sorted(modules()))
def test_module_size(name):
    lines = len(modules()[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines (at most {MAX_LINES}): split it"


def test_top_of_the_package_stays_small():
    top = [p.name for p in PTS.glob("*.py")]
    assert len(top) <= MAX_TOP_MODULES, sorted(top)


# --- tests/: shared code in tests/support, tests mirror the product tree (issue 31 §5) ------

TESTS = PTS.parent / "tests"
SUPPORT = "tests.support"       # what the tests share and is not a test
BY_KIND = {"unit", "e2e"}       # grouped by kind (tests/conftest.py), not by product package


def imported_from_tests(path: Path) -> set[str]:
    """Every module of tests/ that `path` imports (`from tests.x import y` names tests.x.y
    as well, in case y is a module), at top level or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level:
            found.add(f"relative import in {path.name}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            support = node.module == SUPPORT or node.module.startswith(SUPPORT + ".")
            found |= {node.module} if support else {f"{node.module}.{a.name}" for a in node.names}
    return {n for n in found if n == "tests" or n.startswith(("tests.", "relative"))}


def test_no_test_module_imports_another():
    """What two tests share is in tests/support, so a test module is never imported (and
    collected twice, its fixtures and marks leaking)."""
    bad = [f"{p.relative_to(TESTS.parent)} imports {n}" for p in sorted(TESTS.rglob("*.py"))
           for n in sorted(imported_from_tests(p))
           if n != SUPPORT and not n.startswith(SUPPORT + ".")]
    assert not bad, bad


def test_shared_code_lives_in_tests_support():
    loose = [str(p.relative_to(TESTS)) for p in sorted(TESTS.rglob("*.py"))
             if p.parts[len(TESTS.parts)] not in ("support", "data")
             and not p.name.startswith("test_") and p.name not in ("conftest.py", "__init__.py")]
    assert not loose, f"helpers outside tests/support: {loose}"


def test_tests_mirror_the_product_tree():
    """A test package is named for the pts package it tests (tests/report, tests/compare,
    ...), or for its kind (unit, e2e)."""
    packages = {p.parent.name for p in TESTS.glob("*/__init__.py")} - BY_KIND - {"support"}
    assert packages, "no test package found"
    assert not {n for n in packages if not (PTS / n).is_dir()}, sorted(packages)
