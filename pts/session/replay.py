"""The parent's items mirror the children's: a child's serialized test reports are given
the parent item's id (the device in it) and fed to the parent's own report hooks (terminal,
junit XML, exit status); an item a child never reported on gets a report saying why."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from _pytest.reports import TestReport

EXIT_NAMES = {0: "all passed", 1: "tests failed", 2: "interrupted", 3: "internal error",
              4: "usage error", 5: "no tests collected"}


def parent_nodeid(child_nodeid: str, label: str) -> str:
    """The parent item of a child's item: the device's id added to its parameters (the
    device is parametrized last, so test_throughput[throughput-128k-loop5])."""
    if child_nodeid.endswith("]"):
        return f"{child_nodeid[:-1]}-{label}]"
    return f"{child_nodeid}[{label}]"


def read_reports(config: pytest.Config, log_file: Path) -> list[TestReport]:
    try:
        lines = log_file.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            data = json.loads(line)
        except ValueError:
            continue                 # a child killed mid-line: the rest is whole
        report = config.hook.pytest_report_from_serializable(config=config, data=data)
        if isinstance(report, TestReport):
            if isinstance(report.longrepr, list):   # a skip's (path, line, reason): JSON
                report.longrepr = tuple(report.longrepr)     # made it a list
            out.append(report)
    return out


def replay(config: pytest.Config, items: Sequence[pytest.Item], label: str,
           reports: Sequence[TestReport], returncode: int, tail: Sequence[str]) -> None:
    """Feed one device's reports to the parent's hooks, then a report for every item of
    that device the child never reported on."""
    mine = {i.nodeid: i for i in items if _device(i) == label}
    seen: set[str] = set()
    for report in reports:
        nodeid = parent_nodeid(report.nodeid, label)
        item = mine.get(nodeid)
        location = item.location if item is not None else report.location
        report.nodeid, report.location = nodeid, location
        if nodeid not in seen:
            seen.add(nodeid)
            config.hook.pytest_runtest_logstart(nodeid=nodeid, location=location)
        config.hook.pytest_runtest_logreport(report=report)
        if report.when == "teardown":
            config.hook.pytest_runtest_logfinish(nodeid=nodeid, location=location)
    why = (f"the run on [{label}] ended with exit status {returncode} "
           f"({EXIT_NAMES.get(returncode, 'killed or crashed')}) without running this test")
    for nodeid, item in mine.items():
        if nodeid not in seen:
            outcome = "skipped" if returncode in (0, 1, 5) else "failed"
            report_missing(config, item, outcome,
                           why + ("" if outcome == "skipped" else
                                  "; its last lines:\n" + "\n".join(tail[-15:])))


def report_missing(config: pytest.Config, item: pytest.Item, outcome: str, text: str) -> None:
    """setup (skipped or failed) + teardown reports for an item that did not run."""
    path, lineno, _ = item.location
    longrepr = (str(path), (lineno or 0) + 1, f"Skipped: {text}") if outcome == "skipped" \
        else text
    config.hook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for when, out, rep in (("setup", outcome, longrepr), ("teardown", "passed", None)):
        config.hook.pytest_runtest_logreport(report=TestReport(
            item.nodeid, item.location, {}, out, rep, when, duration=0.0))
    config.hook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)


def _device(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("pts_device") if callspec else None
