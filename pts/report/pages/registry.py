"""Which pages a test gets: a registry from test name to page builder.

A builder takes (run, test) and returns flowables; each page starts with
layout.new_page(...). Tests without an entry get the pages every round-based test shares.
A test named "<family>-<variant>" (one Throughput test per block size, "throughput-1024k")
uses its family's builder (pts.results.parameters.family_key). Every test, whatever its
builder, ends with its device-counters page when the ledger has device_counters records for
it, after its Host Ceiling page when it has a host_ceiling record or host-bound points
(issue 33), its FOB page (--fob-sweep) and its Power page (--power, issue 51).
"""

from __future__ import annotations

from collections.abc import Callable

from reportlab.platypus import Flowable

from pts.report.pages import (
    counters,
    dirth_cbw,
    fob,
    host_ceiling,
    iops,
    latency,
    power,
    recovery,
    rwsw,
    snia_header,
    steady,
    throughput,
    wsat,
)
from pts.results.parameters import family_key
from pts.stored.model import RunView, TestResult

PageBuilder = Callable[[RunView, TestResult], list[Flowable]]

BUILDERS: dict[str, PageBuilder] = {
    "iops": iops.build,
    "throughput": throughput.build,
    "latency": latency.build,
    "wsat": wsat.build,
    "dirth": dirth_cbw.build,
    "cbw": dirth_cbw.build,
    "dirth-precondition": dirth_cbw.precondition,
    "cbw-precondition": dirth_cbw.precondition,
    "hir": recovery.hir,
    "xsr": recovery.xsr,
    # RWSW (issue 32 §4): one page function per test; the preconditioning tests
    # ("<test>-preconditioning") get the family's (workload + round-test pages).
    "rwsw-wsat": rwsw.wsat,
    "rwsw-streams": rwsw.streams,
    "rwsw-replay": rwsw.replay,
    "rwsw-dirth": rwsw.dirth,
    "rwsw": rwsw.generic,
}


def builder(name: str) -> PageBuilder:
    return BUILDERS.get(name) or BUILDERS.get(family_key(name)) or steady.generic


def pages_for(run: RunView, test: TestResult) -> list[Flowable]:
    own = builder(test.name)(run, test)
    story = own + host_ceiling.page(run, test) + fob.build(run, test) \
        + power.build(run, test) + counters.build(run, test)    # power: --power's (issue 51)
    return snia_header.on_every_page(run, test, story)   # the SNIA header block, each page
