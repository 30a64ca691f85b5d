"""--resume goes on the same way for every test type (pts.procedure.resume): a Resume record
with the idle time, a deviation and a console line saying where, and the write cache set,
read back and recorded again "on resume" (a power cycle may have reset it) — with its
deviation declared when the device does not hold the required state.

Each test type's own part (which round, wait state, access group or capture it goes on
from) is read from a constructed ledger; the write cache is a fake setter that reports a
device the suite cannot set (a loop device's "write back" where the spec requires WCD).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pts.conditioning import write_cache
from pts.conditioning.write_cache import CacheState
from pts.procedure import resume, runner
from pts.results import records
from pts.results.resume import ROUND, ResumeState
from pts.testdefs import dirth_cbw, dirth_cbw_select, hir, wsat, xsr
from tests.support import fake_run
from tests.support.fake_run import purge, round_, start, wipc

NOT_SETTABLE = CacheState("WCD", "write back", settable=False)
CACHE_DEVIATION = NOT_SETTABLE.deviation()


class FakeRun(fake_run.FakeRun):
    """What the resume path uses of pts.run.Run: the stopped run's ledger (resume), the new
    ledger, the console and the deviations."""

    def __init__(self, tmp_path, *stopped: records.Record):
        super().__init__(tmp_path)
        stamped = tuple(r.__class__(**{**r.__dict__, "time": 1000.0 + n})
                        for n, r in enumerate(stopped))
        self.resume = ResumeState(tmp_path, {}, stamped)
        self.device = SimpleNamespace(path="/dev/loop9")
        self.spec = SimpleNamespace(common=SimpleNamespace(write_cache="WCD"))

    def written(self) -> list[records.Record]:
        return fake_run.ledger(self)


@pytest.fixture
def cache_set(monkeypatch):
    """The write-cache setter, faked: each call recorded, the device not settable."""
    calls = []
    monkeypatch.setattr(write_cache, "apply", lambda dev, required, log_file=None:
                        calls.append((dev.path, required)) or NOT_SETTABLE)
    return calls


def stopped(test):
    return records.TestEnd(test=test, status=records.INTERRUPTED, rounds=None,
                           steady_round=None, window=None, message="interrupted")


def hir_state(n):
    return records.HirState(test="hir", state=n, idle_s=5, write_s=5, repetitions=1,
                            wait_iops=1.0, baseline_iops=1.0, ss_iops=1.0, ratio=1.0,
                            idle_measured_s=[], raw="r")


def xsr_group(n):
    return records.XsrGroup(test="xsr", group=n, pattern="seq", block_size=1 << 20, seconds=2,
                            intervals=1, end_tp_mbps=1.0, final_level_mbps=1.0,
                            peak_lat_mean_us=None, peak_clat_max_us=None, recovery_s=None,
                            recovered=None, raw="r")


BASELINE = records.HirBaseline(test="hir", ss_iops=100.0, window=[1, 2], steady=True, rounds=2)
CHOICE = dirth_cbw_select.Choice("MaxIOPS", dirth_cbw_select.GridPoint(1, 1, 10.0, 5.0), "rule")


def go_on_iops(run):
    return runner.resumed_history(run, "iops")


def go_on_hir(run):
    return hir._resume_point(run)


def go_on_xsr(run):
    return xsr._resume_point(run)


def go_on_wsat(run):
    return resume.go_on(run, "wsat", wsat._where)


def go_on_captures(run):
    return dirth_cbw._resume_captures(run, "dirth", [CHOICE])


# test type -> (the stopped run's ledger, how the test goes on, the Resume record's
# after_round, the words of its deviation and console line)
CASES = {
    "iops": ((start("iops"), purge("iops"), wipc("iops"), round_("iops", 1), round_("iops", 2),
              stopped("iops")), go_on_iops, 2, "after round 2"),
    "hir": ((start("hir"), purge("hir"), round_("hir", 1), round_("hir", 2), BASELINE,
             hir_state(1), stopped("hir")), go_on_hir, 1, "after wait state 1"),
    "xsr": ((start("xsr"), purge("xsr"), xsr_group(1), xsr_group(2), stopped("xsr")),
            go_on_xsr, 2, "after access group 2"),
    "dirth": ((start("dirth"), round_("dirth", 1), round_("dirth", 2), stopped("dirth")),
              go_on_captures, 2, "during the operating-point captures"),
}


@pytest.mark.parametrize("test", sorted(CASES))
def test_every_test_type_resumes_with_the_write_cache_and_its_deviation(tmp_path, cache_set,
                                                                        test):
    stopped_ledger, go_on, after, where = CASES[test]
    run = FakeRun(tmp_path, *stopped_ledger)
    go_on(run)
    found = run.written()
    (resume,) = [r for r in found if isinstance(r, records.Resume)]
    assert (resume.test, resume.after_round) == (test, after)
    assert resume.idle_minutes > 0          # the stopped run's records are from 1970
    cache = [r for r in found if isinstance(r, records.WriteCache)]
    assert [(c.test, c.when, c.actual, c.settable) for c in cache] == \
        [(test, "on resume", "write back", False)]
    assert cache_set == [("/dev/loop9", "WCD")]
    texts = [r.text for r in found if isinstance(r, records.Deviation) and r.test == test]
    assert CACHE_DEVIATION in texts
    assert any(t.startswith("Resumed run: device idle ") and where in t for t in texts), texts
    assert any(f"[pts {test}] resume {where} (idle " in line for line in run.lines), run.lines


def test_a_device_holding_the_required_state_declares_nothing_more(tmp_path, monkeypatch):
    monkeypatch.setattr(write_cache, "apply", lambda dev, required, log_file=None:
                        CacheState("WCD", "disabled", settable=True))
    stopped_ledger, go_on, _, _ = CASES["hir"]
    run = FakeRun(tmp_path, *stopped_ledger)
    go_on(run)
    texts = [r.text for r in run.written() if isinstance(r, records.Deviation)]
    assert len(texts) == 1 and texts[0].startswith("Resumed run: device idle ")


def test_hir_and_xsr_go_on_from_their_last_completed_unit(tmp_path, cache_set):
    """HIR: its preconditioning baseline and the wait states done; XSR: the groups done."""
    (tmp_path / "h").mkdir()
    (tmp_path / "x").mkdir()
    baseline, done = hir._resume_point(FakeRun(tmp_path / "h", *CASES["hir"][0]))
    assert (baseline.ss_iops, baseline.window, done) == (100.0, [1, 2], 1)
    assert xsr._resume_point(FakeRun(tmp_path / "x", *CASES["xsr"][0])) == 2


def test_a_test_that_had_not_got_far_enough_starts_again_from_purge(tmp_path, cache_set):
    """Nothing is resumed (no Resume record, no write cache "on resume"): XSR without a
    completed group, IOPS stopped before its WIPC and a stopped WSAT (its one fio run)
    declare the restart, and say it; a test that had not started before the stop, nothing;
    HIR without its baseline leaves it to its preconditioning rounds (the round runner's
    own resume)."""
    # test -> (the stopped ledger, how it goes on, its answer for "from purge", the reason)
    cases = {"xsr": ((start("xsr"), purge("xsr"), stopped("xsr")), go_on_xsr, 0,
                     "no access group completed before the stop"),
             "iops": ((start("iops"), purge("iops"), stopped("iops")), go_on_iops, None,
                      "it had stopped before WIPC completed"),
             "wsat": ((start("wsat"), purge("wsat"), stopped("wsat")), go_on_wsat, None,
                      "its one fio run cannot be continued")}
    for test, (ledger, go_on, anew, reason) in cases.items():
        (tmp_path / test).mkdir()
        run = FakeRun(tmp_path / test, *ledger)
        assert go_on(run) == anew
        found = run.written()
        assert not [r for r in found if isinstance(r, (records.Resume, records.WriteCache))]
        assert [r.text for r in found if isinstance(r, records.Deviation)] == \
            [f"Resumed run: the test was restarted from purge ({reason})."]
        assert run.lines == [f"[pts {test}] resume: {reason}; starting from purge"]
        (tmp_path / test / "later").mkdir()
        other = FakeRun(tmp_path / test / "later", start("tp"), stopped("tp"))
        assert go_on(other) == anew and other.written() == [] and other.lines == []
    assert cache_set == []
    (tmp_path / "hir").mkdir()
    run = FakeRun(tmp_path / "hir", start("hir"), purge("hir"), round_("hir", 1),
                  stopped("hir"))
    assert hir._resume_point(run) == (None, 0)
    assert run.resume.progress("hir", ROUND).restart_reason is None   # rounds go on
    assert run.written() == []
