"""One family key (issue 48 §5): every registry keyed by test family knows the family of every
PTS test the suite runs, under the one key pts.results.parameters.family_key gives (a ledger
test's first word: "throughput-1024k" -> throughput, "rwsw-wsat" -> rwsw), and holds no key
that is no test's.

The tests are pts.testdefs.registry's (with the variants each spec file gives them: one
Throughput test per block size). The registries walked: the test_start parameter records
(pts.results.parameters.FAMILIES), the report pages (pts.report.pages.registry.BUILDERS: a
test without its own entry would get only the generic round pages), the spec sections a
test reads (pts.config.spec_readings.SECTIONS_OF_TEST) and the figure catalogue
(pts.stored.figures). A registry that lacks a family fails here naming the family and the
registry, not in a run of that test. docs/design.md's recipes "Add a round-based PTS test"
and "Add a figure" name every registry walked here (issue 48 §6: the recipes list the steps
as they now are).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pytest

from pts.config import spec_readings
from pts.config.spec import load_spec
from pts.report.pages import registry as pages
from pts.results import parameters
from pts.results.parameters import family_key
from pts.testdefs import registry as testdefs
from tests.support.helpers import REPO

CATALOGUE = "pts.stored.figures"
DESIGN = REPO / "docs" / "design.md"


def ledger_tests() -> list[str]:
    """Every test the suite runs, as its ledger names it: a test with variants once per
    variant of every spec file ("throughput-1024k"), the others by their name."""
    names = []
    specs = [load_spec(str(p)) for p in sorted((REPO / "specs").glob("pts-*.toml"))]
    for test in testdefs.TESTS.values():
        if test.variants is None:
            names.append(test.name)
        else:
            names += [v for spec in specs for v, _ in test.variants(spec)]
    return list(dict.fromkeys(names))


def catalogue_families() -> set[str]:
    """The families of the figure catalogue's rows (issue 48 §1). Missing, it fails: every
    family's figures are read through it, so a suite without it is not done."""
    try:
        figures = importlib.import_module(CATALOGUE)
    except ModuleNotFoundError as e:
        raise AssertionError(f"the figure catalogue {CATALOGUE} (issue 48 §1) is not there "
                             f"({e}): no registry of figures to walk") from None
    return {row.family for row in figures.catalogue()}


@dataclass(frozen=True)
class Registry:
    name: str                           # as the failure names it
    keys: Callable[[], Iterable[str]]
    by_test_name: bool = False          # also keyed by a whole test name ("rwsw-wsat")

    def knows(self, test: str, keys: set[str]) -> bool:
        return family_key(test) in keys or (self.by_test_name and test in keys)

    @property
    def path(self) -> str:
        """Its module's file: "pts.results.parameters.FAMILIES" -> pts/results/parameters.py."""
        return "/".join(self.name.split(" ")[0].split(".")[:-1]) + ".py"


REGISTRIES = [
    Registry("pts.results.parameters.FAMILIES (the test_start parameter records)",
             lambda: parameters.FAMILIES),
    Registry("pts.report.pages.registry.BUILDERS (the test's report pages)",
             lambda: pages.BUILDERS, by_test_name=True),
    Registry("pts.config.spec_readings.SECTIONS_OF_TEST (the spec sections a test reads)",
             lambda: spec_readings.SECTIONS_OF_TEST, by_test_name=True),
    Registry(f"{CATALOGUE}.CATALOGUE (the figure catalogue)", catalogue_families),
]


def test_the_tests_are_found():
    tests = ledger_tests()
    # the walk below must see every family, or it would pass on fewer
    assert {family_key(t) for t in tests} == {
        "iops", "throughput", "latency", "wsat", "dirth", "cbw", "hir", "xsr", "rwsw"}, tests
    assert "throughput-1024k" in tests and "rwsw-wsat" in tests, tests


def test_the_family_key_is_the_first_word():
    assert [family_key(t) for t in ("iops", "throughput-1024k", "dirth-precondition",
                                    "rwsw-wsat-preconditioning")] == \
        ["iops", "throughput", "dirth", "rwsw"]


@pytest.mark.parametrize("registry", REGISTRIES, ids=lambda r: r.name.split(" ")[0])
def test_every_registry_knows_every_family(registry):
    keys = set(registry.keys())
    missing = {family_key(t): t for t in ledger_tests() if not registry.knows(t, keys)}
    assert not missing, "\n".join(
        f"family {family!r} (test {test!r}) is not in {registry.name}"
        for family, test in sorted(missing.items()))


@pytest.mark.parametrize("registry", REGISTRIES, ids=lambda r: r.name.split(" ")[0])
def test_no_registry_holds_a_family_no_test_has(registry):
    families = {family_key(t) for t in ledger_tests()}
    stale = sorted(k for k in registry.keys() if family_key(k) not in families)
    assert not stale, (f"{registry.name} holds {stale}: the family of no test in "
                       "pts.testdefs.registry (a test removed or renamed?)")


def recipe(title: str) -> str:
    """The paragraph of docs/design.md that opens with **title**, on one line."""
    m = re.search(rf"^\*\*{re.escape(title)}\*\*.*?(?=\n\n|\Z)",
                  DESIGN.read_text(encoding="utf-8"), re.S | re.M)
    assert m, f"docs/design.md has no recipe **{title}**"
    return " ".join(m[0].split())


def test_the_add_a_test_recipe_names_every_registry():
    text = recipe("Add a round-based PTS test")
    steps = ["pts/testdefs/registry.py", "pts/suite/test_<name>.py",
             *(r.path for r in REGISTRIES)]
    missing = [p for p in steps if f"`{p}`" not in text]
    assert not missing, f"docs/design.md's recipe to add a test does not name {missing}"


def test_the_add_a_figure_recipe_is_one_row_of_the_catalogue():
    text = recipe("Add a figure")
    catalogue = CATALOGUE.replace(".", "/") + ".py"
    assert f"`{catalogue}`" in text and "CATALOGUE" in text, (
        f"docs/design.md's recipe to add a figure does not name {catalogue}'s CATALOGUE")
