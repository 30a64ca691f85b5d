"""Which pages a test gets: a registry from test name to page builder.

A builder takes (run, test) and returns flowables; each page starts with
layout.new_page(...). Tests without an entry get the pages every round-based test shares.
A test named "<family>-<variant>" (one Throughput test per block size, "throughput-1024k")
uses its family's builder. Every test, whatever its builder, ends with
its device-counters page when the ledger has device_counters records for it.
"""

from __future__ import annotations

from collections.abc import Callable

from reportlab.platypus import Flowable

from pts.report import (
    counters_pages,
    fob_pages,
    iops_pages,
    latency_pages,
    qos_pages,
    recovery_pages,
    snia_header,
    steady_pages,
    throughput_pages,
    wsat_pages,
)
from pts.report.run.model import RunView, TestResult

PageBuilder = Callable[[RunView, TestResult], list[Flowable]]

BUILDERS: dict[str, PageBuilder] = {
    "iops": iops_pages.build,
    "throughput": throughput_pages.build,
    "latency": latency_pages.build,
    "wsat": wsat_pages.build,
    "dirth": qos_pages.build,
    "cbw": qos_pages.build,
    "dirth-precondition": qos_pages.precondition,
    "cbw-precondition": qos_pages.precondition,
    "hir": recovery_pages.hir,
    "xsr": recovery_pages.xsr,
}


def builder(name: str) -> PageBuilder:
    family = name.split("-", 1)[0]
    return BUILDERS.get(name) or BUILDERS.get(family) or steady_pages.generic


def pages_for(run: RunView, test: TestResult) -> list[Flowable]:
    own = builder(test.name)(run, test)
    story = own + fob_pages.build(run, test) + counters_pages.build(run, test)
    return snia_header.on_every_page(run, test, story)   # the SNIA header block, each page
