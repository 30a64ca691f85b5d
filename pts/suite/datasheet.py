"""--datasheet FILE.toml (docs/datasheet.md): every requirement of the file becomes its own
pytest item, test_requirement[<test> <cell> <metric> >= N] (pts/suite/test_datasheet.py),
placed right after the item of the PTS test it depends on. It passes or fails with "measured
M, required >= R (cell, test, window rounds a..b)" and writes a `requirement` record to the
ledger, which the report's Qualification page shows.

A pytest plugin (conftest.py's pytest_plugins), beside pts.session.plugin; its option is a
row of pts.config.option_table.
"""

from __future__ import annotations

import pytest

from pts.config.datasheet import DatasheetError, Requirement, load
from pts.stored.figures import datasheet_vocabulary
from pts.testdefs import registry

DATASHEET = pytest.StashKey[tuple[Requirement, ...]]()


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("datasheet", None)
    if not path:
        return
    try:
        requirements = load(path, datasheet_vocabulary())
    except DatasheetError as exc:
        raise pytest.UsageError(f"--datasheet: {exc}") from None
    for r in requirements:
        family = r.test.split("-", 1)[0]
        if family not in registry.TESTS:
            raise pytest.UsageError(f"--datasheet: {r.where}: unknown test {r.test!r} (PTS "
                                    f"tests: {', '.join(registry.TESTS)}; Throughput is "
                                    "named per block size, e.g. throughput-1024k)")
    config.stash[DATASHEET] = requirements


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "pts_requirement" not in metafunc.fixturenames:
        return
    found = metafunc.config.stash.get(DATASHEET, ())
    metafunc.parametrize("pts_requirement", found, ids=[r.id for r in found])


def ledger_test(item: pytest.Item) -> str | None:
    """The ledger test name an item runs ("iops", "throughput-1024k"), None if not PTS."""
    marker = item.get_closest_marker("pts")
    if marker is None:
        return None
    callspec = getattr(item, "callspec", None)
    variant = callspec.params.get("pts_variant") if callspec else None
    return callspec.id if variant is not None else marker.args[0]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items: list[pytest.Item]) -> None:
    """Each requirement item right after the last item of its test (a requirement whose
    test was not collected stays at the end and says the test did not run)."""
    def requirement(item):
        callspec = getattr(item, "callspec", None)
        found = callspec.params.get("pts_requirement") if callspec else None
        return found if isinstance(found, Requirement) else None

    ours = [i for i in items if "pts_requirement" in getattr(i, "fixturenames", ())]
    if not ours:
        return
    # Without --datasheet the empty parametrization leaves one placeholder item: not shown.
    reqs = [i for i in ours if requirement(i) is not None]
    rest = [i for i in items if i not in ours]
    for item in reqs:     # in file order: after the test and its requirements placed so far
        test = requirement(item).test
        after = [n for n, other in enumerate(rest) if ledger_test(other) == test
                 or (other in reqs and requirement(other).test == test)]
        rest.insert(after[-1] + 1 if after else len(rest), item)
    items[:] = rest
