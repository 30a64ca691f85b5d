"""The child side of a several-device session (`-p pts.session.childlog --pts-child-log
FILE`, added by the parent to each device's child run): every test report of the child, as
pytest serializes it for its own plugins (pytest_report_to_serializable), one JSON line each,
flushed per line, so that the parent's items mirror the child's outcomes."""

from __future__ import annotations

import json

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("snia-pts").addoption(
        "--pts-child-log", metavar="FILE", default=None,
        help="(set by a several-device session for its child runs) write every test "
             "report to FILE as JSON lines")


class ReportLog:
    def __init__(self, config: pytest.Config, path: str):
        self.config = config
        self.fh = open(path, "a", encoding="utf-8")   # noqa: SIM115 (open for the session)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = self.config.hook.pytest_report_to_serializable(config=self.config,
                                                              report=report)
        self.fh.write(json.dumps(data, default=str) + "\n")
        self.fh.flush()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.fh.close()


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("pts_child_log", None)
    if path:
        config.pluginmanager.register(ReportLog(config, path), "pts-child-log")
