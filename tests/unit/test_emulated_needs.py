"""A test that starts an emulated SSD (pts.emulate: a FUSE daemon over mfusepy + libfuse3,
/dev/fuse, fusermount3 to unmount, a loop device over the FUSE file) declares it in its needs
markers (issue 47 §3), so that a host without FUSE skips it naming what is missing, and CI
(--require-all / CI=true) fails it saying so, instead of the suite run failing inside with
an error about the device. Read from the source of tests/e2e: a test reaches an emulated SSD
when its body, a fixture it asks for or a module function it calls (transitively) holds a
device string "emulated:SIZE...", calls lifecycle.start or runs `pts demo` (the emulated SSD
of README command 1). The QEMU guest's emulated SSD (the `guest` fixture) is the guest's
files' own (tests/conftest.py GUEST_FILES) and not read here."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.support.helpers import REPO

EMULATED_SSD = {"fusermount3", "/dev/fuse", "mfusepy", "losetup"}
DEVICE_STRING = re.compile(r"\bemulated:\d")


def conftest(request):
    """tests/conftest.py as pytest loaded it (its requirements() and needs hook)."""
    return request.config.pluginmanager.get_plugin(str(REPO / "tests" / "conftest.py"))


def _needs(nodes) -> set[str]:
    return {a.value for node in nodes for n in ast.walk(node) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and n.func.attr == "needs"
            for a in n.args if isinstance(a, ast.Constant)}


def _starts_one(node: ast.AST) -> bool:
    """`node` itself (not the functions it calls) names an emulated SSD."""
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and \
                DEVICE_STRING.search(n.value):
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                n.func.attr == "start" and getattr(n.func.value, "id", "") == "lifecycle":
            return True
        if isinstance(n, ast.List):
            words = [getattr(e, "value", None) for e in n.elts]
            if any(words[i:i + 2] == ["pts", "demo"] for i in range(len(words))):
                return True
    return False


def reaching(path: Path) -> dict[str, set[str]]:
    """Per test function of the module that reaches an emulated SSD: its needs (its own
    markers and the module's pytestmark)."""
    tree = ast.parse(path.read_text(), str(path))
    functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    module = _needs(n.value for n in tree.body if isinstance(n, ast.Assign)
                    and any(getattr(t, "id", "") == "pytestmark" for t in n.targets))

    def reaches(name: str, seen: set[str]) -> bool:
        if name in seen or name not in functions:
            return False
        seen.add(name)
        f = functions[name]
        used = {a.arg for a in f.args.args} | {n.id for n in ast.walk(f)
                                               if isinstance(n, ast.Name)}
        return _starts_one(f) or any(reaches(u, seen) for u in used)

    return {name: module | _needs(f.decorator_list) for name, f in functions.items()
            if name.startswith("test_") and reaches(name, set())}


def e2e_modules() -> list[Path]:
    return sorted((REPO / "tests" / "e2e").glob("test_*.py"))


def test_every_test_that_starts_an_emulated_ssd_declares_it(request):
    implied = conftest(request).IMPLIED
    undeclared, found = {}, []
    for path in e2e_modules():
        for name, needs in reaching(path).items():
            found.append(f"{path.name}::{name}")
            have = needs | {i for n in needs for i in implied.get(n, ())}
            if missing := EMULATED_SSD - have:
                undeclared[f"{path.name}::{name}"] = sorted(missing)
    assert not undeclared, f"tests that start an emulated SSD without declaring: {undeclared}"
    # the reading finds them: the modules known to run one (a run, a daemon, the demo)
    assert {f.split("::")[0] for f in found} >= {
        "test_demo.py", "test_dirth_cbw_integration.py", "test_emulate_device.py",
        "test_faults.py", "test_hir_integration.py", "test_inventory_session.py",
        "test_purge_probe.py", "test_wsat_integration.py", "test_xsr_integration.py"}, found
    # and only where one starts: test_faults' loop-device tests are not among them
    assert "test_faults.py::test_emulated_ssd_daemon_killed_mid_round" in found
    assert not any(f.startswith("test_faults.py::test_fio_killed") for f in found)


class _Item(SimpleNamespace):
    def iter_markers(self, name):
        return [pytest.mark.needs(*self.needs).mark] if name == "needs" else []


@pytest.mark.parametrize("strict, outcome", [(False, pytest.skip.Exception),
                                             (True, pytest.fail.Exception)])
def test_fusermount3_brings_fuse_and_mfusepy_and_ci_fails_without_them(
        request, monkeypatch, strict, outcome):
    """needs("fusermount3") (the demo's module says only that) also checks /dev/fuse and
    mfusepy: on a host without FUSE in the kernel the test is skipped naming /dev/fuse, and
    under --require-all / CI=true it fails naming it, before anything runs."""
    hooks = conftest(request)
    item = _Item(needs=("root", "fusermount3"),
                 config=SimpleNamespace(getoption=lambda name: strict))
    assert hooks.requirements(item) == ["root", "fusermount3", "/dev/fuse", "mfusepy"]
    monkeypatch.delenv("CI", raising=False)
    real = hooks._unmet
    monkeypatch.setattr(hooks, "_unmet", lambda r: "needs /dev/fuse (FUSE in the kernel)"
                        if r == "/dev/fuse" else real(r) if r != "root" else None)
    with pytest.raises(outcome, match=re.escape("needs /dev/fuse (FUSE in the kernel)")) as exc:
        hooks.pytest_runtest_setup(item)
    assert ("--require-all/CI set" in str(exc.value)) == strict
