"""Which pages a test gets: a registry from test name to page builder.

A builder takes (run, test) and returns flowables; each page starts with
layout.new_page(...). Tests without an entry get the pages every round-based test shares.
Throughput, latency, ... add their builder here. Every test, whatever its builder, ends with
its device-counters page when the ledger has device_counters records for it.
"""

from __future__ import annotations

from collections.abc import Callable

from reportlab.platypus import Flowable

from pts.report import counters_pages, iops_pages, steady_pages
from pts.report.model import Run, TestResult

PageBuilder = Callable[[Run, TestResult], list[Flowable]]

BUILDERS: dict[str, PageBuilder] = {
    "iops": iops_pages.build,
}


def pages_for(run: Run, test: TestResult) -> list[Flowable]:
    own = BUILDERS.get(test.name, steady_pages.generic)(run, test)
    return own + counters_pages.build(run, test)
