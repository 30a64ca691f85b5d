"""The PTS tests the suite runs: the one place where pytest (pts.session.plugin, pts/suite/) and
--dry-run find a test's run, plan and variants. A suite module marks its test function with
`@pytest.mark.pts("name")` and takes the `pts_outcome` fixture; nothing is found by name
lookups or signatures.

To add a PTS test: an entry here is one of its steps (docs/design.md, "Add a round-based PTS
test": its declaration, suite module, spec section, parameters record, report pages and
figures); tests/unit/test_families.py fails naming the registry that lacks its family.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pts.config.settings import Settings
from pts.config.spec import Spec
from pts.device.identity import BlockDevice
from pts.procedure.plan import round_test_plan
from pts.procedure.rounds import Outcome
from pts.procedure.runner import run_round_test
from pts.run import Run
from pts.testdefs import (
    dirth_cbw,
    dirth_cbw_plan,
    hir,
    iops,
    latency,
    throughput,
    wsat,
    xsr,
)
from pts.testdefs.rwsw import common as rwsw_common
from pts.testdefs.rwsw import dirth as rwsw_dirth
from pts.testdefs.rwsw import replay as rwsw_replay
from pts.testdefs.rwsw import streams as rwsw_streams
from pts.testdefs.rwsw import wsat as rwsw_wsat


@dataclass(frozen=True)
class PtsTest:
    name: str
    run: Callable[[Run, object], Outcome]          # (run, variant) -> outcome
    plan: Callable[[Settings, BlockDevice, object], list[str]]   # --dry-run lines
    # (id, value) of each variant the spec defines (pytest parametrization); None: one test
    variants: Callable[[Spec], list[tuple[str, object]]] | None = None


def _round_test(name: str, declare) -> PtsTest:
    """A round-based test with one declaration (no variants)."""
    return PtsTest(name, lambda run, _: run_round_test(run, declare(run.settings, run.device)),
                   lambda settings, device, _: round_test_plan(settings, device,
                                                               declare(settings, device)))


def _throughput_plan(settings: Settings, device: BlockDevice, block_size) -> list[str]:
    """One block size's plan; all of them when not one selected item (block_size None)."""
    sizes = settings.spec.throughput.block_sizes if block_size is None else (block_size,)
    return [line for bs in sizes for line in
            round_test_plan(settings, device, throughput.declare(settings, device, bs))]


TESTS: dict[str, PtsTest] = {t.name: t for t in (
    _round_test("iops", iops.declare),
    PtsTest("throughput",
            lambda run, bs: run_round_test(run, throughput.declare(run.settings, run.device,
                                                                   bs)),
            _throughput_plan,
            lambda spec: [(throughput.test_name(bs), bs) for bs in spec.throughput.block_sizes]),
    _round_test("latency", latency.declare),
    PtsTest("wsat", lambda run, _: wsat.run_wsat(run), lambda s, d, _: wsat.plan_lines(s, d)),
    PtsTest("dirth", lambda run, _: dirth_cbw.run_dirth_cbw(run, "dirth"),
            lambda s, d, _: dirth_cbw_plan.plan_lines(s, d, "dirth")),
    PtsTest("cbw", lambda run, _: dirth_cbw.run_dirth_cbw(run, "cbw"),
            lambda s, d, _: dirth_cbw_plan.plan_lines(s, d, "cbw")),
    PtsTest("hir", lambda run, _: hir.run_hir(run), lambda s, d, _: hir.plan_lines(s, d)),
    PtsTest("xsr", lambda run, _: xsr.run_xsr(run), lambda s, d, _: xsr.plan_lines(s, d)),
    # RWSW (issue 32 §3): the Applied Test Workload of --workload through the same runner
    PtsTest("rwsw-wsat", lambda run, _: run_round_test(run, rwsw_wsat.declare(
        run.settings, run.device, rwsw_wsat.written_before(run, rwsw_wsat.TEST))),
            lambda s, d, _: rwsw_common.plan_lines(s, d, rwsw_wsat.declare)),
    PtsTest("rwsw-streams", lambda run, _: run_round_test(run, rwsw_streams.declare(
        run.settings, run.device)),
            lambda s, d, _: rwsw_common.plan_lines(s, d, rwsw_streams.declare)),
    PtsTest("rwsw-replay", lambda run, _: rwsw_replay.run_replay(run),
            lambda s, d, _: rwsw_replay.plan_lines(s, d)),
    PtsTest("rwsw-dirth", lambda run, _: rwsw_dirth.run_dirth(run),
            lambda s, d, _: rwsw_dirth.plan_lines(s, d)),
)}


def get(name: str) -> PtsTest:
    try:
        return TESTS[name]
    except KeyError:
        raise KeyError(f"no PTS test {name!r} in pts.testdefs.registry (known: "
                       f"{', '.join(TESTS)})") from None
