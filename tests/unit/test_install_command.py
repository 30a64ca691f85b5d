"""README command 2 and .ci/run: the same command, and it installs every tool the tests run.

A fresh Debian 12 (e.g. the debian:12 image) has only the Essential and "required" packages;
everything else the project's tests call must be named in the apt-get install of command 2,
which installs without Recommends (qemu-system-x86's would pull a GUI stack).
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.guest import image
from tests.support.helpers import REPO, TOOLS

# Tools of Essential packages (present on every Debian; apt-get and dpkg run the install).
BASE = {"sh": "dash", "sleep": "coreutils", "true": "coreutils", "apt-get": "apt",
        "apt-cache": "apt", "dpkg": "dpkg"}
NOT_TOOLS = {"nosuch-tool-xyz"}     # tests/unit/test_commands.py: a tool that must not exist
CALLS = {"run", "Popen", "check_output", "check_call", "call"}
# Maintainers' readers that no test calls, run by hand where their sources are: git and
# pdftotext of the OCP texts (tests/data/make_ocp_ids.py, --check; the tests read only the
# counts beside them)
BY_HAND = {"tests/support/ocp_text_ids.py"}


def readme_command_2() -> str:
    text = (REPO / "README.md").read_text()
    section = text.split("**2. The project's tests**", 1)[1]
    block = re.search(r"```sh\n(.*?)\n```", section, re.S)
    assert block, "README.md: no ```sh block after '2. The project's tests'"
    return block.group(1).strip()


def ci_command() -> str:
    lines = [line for line in (REPO / ".ci" / "run").read_text().splitlines()
             if "apt-get install" in line and not line.startswith("#")]
    assert len(lines) == 1, ".ci/run: expected exactly one apt-get command line"
    return lines[0].strip()


def apt_install(command: str) -> tuple[set[str], set[str]]:
    """(options, packages) of the `apt-get install` in `command`; a package asked for from a
    suite (qemu-system-x86/bookworm-backports) by its name."""
    options, packages = apt_install_suites(command)
    return options, set(packages)


def apt_install_suites(command: str) -> tuple[set[str], dict[str, str | None]]:
    """(options, {package: the suite asked for, or None}) of the `apt-get install`."""
    for part in command.split("&&"):
        words = shlex.split(part)
        if "apt-get" in words and "install" in words:
            args = words[words.index("install") + 1:]
            return ({a for a in args if a.startswith("-")},
                    {a.partition("/")[0]: a.partition("/")[2] or None
                     for a in args if not a.startswith("-")})
    raise AssertionError(f"no apt-get install in {command!r}")


def tools_the_tests_run() -> dict[str, list[str]]:
    """argv[0] of every subprocess/commands.run call with a literal list in tests/ ->
    where it is called."""
    found: dict[str, list[str]] = {}
    for path in sorted((REPO / "tests").rglob("*.py")):
        if str(path.relative_to(REPO)) in BY_HAND:
            continue
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and node.args
                    and isinstance(node.args[0], ast.List) and node.args[0].elts):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else \
                getattr(node.func, "id", "")
            first = node.args[0].elts[0]
            if name in CALLS and isinstance(first, ast.Constant) and \
                    isinstance(first.value, str):
                found.setdefault(first.value, []).append(
                    f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_readme_command_2_is_ci_run():
    assert readme_command_2() == ci_command()


def test_command_2_installs_without_recommends():
    options, packages = apt_install(readme_command_2())
    assert "--no-install-recommends" in options
    # qemu-system-x86 Depends on its firmware (the guest boots SeaBIOS); name it anyway so
    # that the guest's needs are explicit whatever the dependency declarations become.
    assert {"qemu-system-x86", "seabios"} <= packages


def test_command_2_takes_only_qemu_from_backports():
    """The QEMU test guest needs QEMU >= 10.0 (tests/support/guest/qemu.py QEMU_MIN): command
    2 adds the backports suite (.ci/backports.sh, from apt's own Debian source) before its
    apt-get update, and asks it for qemu-system-x86, the two QEMU packages it requires in its
    own version (apt does not take them from the suite named for qemu-system-x86 alone: on a
    bare machine "held broken packages", qemu-system-common 7.2 chosen, seen at stop 38) and
    the SeaBIOS that QEMU 10 requires (>> 1.16.3-1~; Debian 12 has 1.16.2) by name; every
    other package from the release."""
    command = readme_command_2()
    parts = [p.strip() for p in command.split("&&")]
    assert parts[0] == ".ci/backports.sh" and parts[1].startswith("apt-get update")
    _, suites = apt_install_suites(command)
    assert {p: s for p, s in suites.items() if s} == {
        "qemu-system-x86": "bookworm-backports", "qemu-system-common": "bookworm-backports",
        "qemu-system-data": "bookworm-backports", "seabios": "bookworm-backports"}


def test_every_tool_maps_to_a_package_command_2_installs():
    _, packages = apt_install(readme_command_2())
    missing = {tool: pkg for tool, pkg in {**TOOLS, **image.TOOLS}.items()
               if pkg not in packages and BASE.get(tool) != pkg}
    assert not missing, f"tools whose package command 2 does not install: {missing}"


def test_every_tool_the_tests_run_is_declared():
    """A tool a test calls is in tests/support/helpers.py TOOLS (so a missing one is a readable
    needs-failure, and the install test above covers its package) or Essential."""
    undeclared = {tool: where for tool, where in tools_the_tests_run().items()
                  if tool not in TOOLS and tool not in BASE and tool not in NOT_TOOLS}
    assert not undeclared, f"tools the tests run that TOOLS does not declare: {undeclared}"


def _needs(node: ast.AST) -> set[str]:
    """The arguments of every needs(...) marker call under `node`."""
    return {a.value for n in ast.walk(node) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and n.func.attr == "needs"
            for a in n.args if isinstance(a, ast.Constant)}


def undeclared_in_module(path: Path) -> dict[str, list[str]]:
    """Tools a test module runs (a literal argv as in tools_the_tests_run) that no needs
    marker covers: in a test function, its own marks or the module's pytestmark; elsewhere
    in the module (a helper, a fixture), any needs marker of the module."""
    tree = ast.parse(path.read_text(), str(path))
    module = set().union(*(_needs(n.value) for n in tree.body if isinstance(n, ast.Assign)
                           and any(getattr(t, "id", "") == "pytestmark" for t in n.targets)))
    anywhere = _needs(tree)
    scope = {id(n): module | set().union(*(_needs(d) for d in f.decorator_list))
             for f in tree.body if isinstance(f, ast.FunctionDef) and f.name.startswith("test_")
             for n in ast.walk(f)}
    missing: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.List)
                and node.args[0].elts and isinstance(node.args[0].elts[0], ast.Constant)):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else \
            getattr(node.func, "id", "")
        tool = node.args[0].elts[0].value
        if name not in CALLS or not isinstance(tool, str) or tool in BASE or tool in NOT_TOOLS:
            continue
        if tool not in scope.get(id(node), anywhere):
            missing.setdefault(tool, []).append(f"{path.relative_to(REPO)}:{node.lineno}")
    return missing


def test_every_test_module_declares_the_tools_it_runs():
    """A tool a test runs is named by its needs marker (the test's own or the module's), so
    that a host without it skips the test with the package to install (or, with
    --require-all / CI, fails it saying so) instead of failing inside with FileNotFoundError;
    a marker on another test of the module does not count."""
    undeclared = {}
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        for tool, where in undeclared_in_module(path).items():
            undeclared.setdefault(tool, []).extend(where)
    assert not undeclared, f"tools run without a needs marker naming them: {undeclared}"


SYSTEM_BIN = {"/usr/bin", "/usr/sbin", "/bin", "/sbin"}


@pytest.mark.skipif(not shutil.which("dpkg"), reason="needs dpkg (a Debian host)")
def test_tools_table_names_the_right_packages():
    """Where the tool is installed here, dpkg says which package ships it."""
    here = {tool: pkg for tool, pkg in {**TOOLS, **BASE}.items() if shutil.which(tool)}
    out = subprocess.run(["dpkg", "-S", *(f"bin/{tool}" for tool in here)],
                         capture_output=True, text=True).stdout
    wrong = {}
    for tool, pkg in here.items():
        owners = {owner.strip() for line in out.splitlines()
                  if not line.startswith("diversion ")
                  and re.search(rf"/s?bin/{re.escape(tool)}$", line)
                  for owner in line.split(": ", 1)[0].split(",")}
        if owners and pkg not in owners:
            wrong[tool] = f"TOOLS says {pkg}, dpkg says {sorted(owners)}"
        elif not owners and os.path.dirname(where := shutil.which(tool)) in SYSTEM_BIN:
            # (elsewhere, e.g. /usr/local or a venv, it is a local build dpkg cannot know)
            wrong[tool] = f"{where} is in a system folder but no package owns it"
    assert not wrong, wrong
