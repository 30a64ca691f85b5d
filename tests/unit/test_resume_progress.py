"""Where --resume picks a test up, from the ledger alone (pts.results.resume): finished tests
(any finished status, WSAT's "complete" included) are not run again; a test that stopped
before WIPC, or whose drive a later test of the run purged since, starts again from purge;
otherwise it goes on after its last completed round."""

from __future__ import annotations

import contextlib

from pts.results import records
from pts.results.resume import ROUND, ResumeState
from tests.support.fake_run import purge, round_, start, wipc


def end(test, status):
    return records.TestEnd(test=test, status=status, rounds=None, steady_round=None,
                           window=None, message=status)


def state(tmp_path, *recs):
    stamped = tuple(r.__class__(**{**r.__dict__, "time": float(n)}) for n, r in
                    enumerate(recs))
    return ResumeState(tmp_path, {}, stamped)


def test_a_completed_wsat_is_finished(tmp_path):
    s = state(tmp_path, start("wsat"), purge("wsat"), end("wsat", records.COMPLETE))
    assert s.progress("wsat").finished.status == "complete"


def test_an_errored_test_goes_on_after_its_last_round(tmp_path):
    s = state(tmp_path, start("iops"), purge("iops"), wipc("iops"), round_("iops", 1, 5.0),
              round_("iops", 2, 6.0), end("iops", records.ERROR))
    p = s.progress("iops")
    assert p.finished is None and p.restart_reason is None
    assert p.history == {"v": [5.0, 6.0]} and p.last_round == 2


def test_an_errored_test_restarts_from_purge_when_a_later_test_purged_the_drive(tmp_path):
    s = state(tmp_path, start("iops"), purge("iops"), wipc("iops"), round_("iops", 1, 5.0),
              end("iops", records.ERROR), start("latency"), purge("latency"),
              end("latency", records.INTERRUPTED))
    p = s.progress("iops")
    assert p.finished is None
    assert p.restart_reason and "purged and rewritten since by latency" in p.restart_reason


def test_stopped_before_wipc_restarts_and_a_test_not_started_just_starts(tmp_path):
    s = state(tmp_path, start("iops"), purge("iops"), end("iops", records.INTERRUPTED))
    assert "before WIPC" in s.progress("iops").restart_reason
    assert s.progress("latency").restart_reason == ""


def test_a_demand_phase_without_wipc_goes_on_after_its_last_round(tmp_path):
    """DIRTH: preconditioning (purge, WIPC) is its own test; the demand-variation test has
    neither and, resumed, goes on after its last completed round, unless a later test
    purged the drive since."""
    pre = "dirth-precondition"
    recs = (start(pre), purge(pre), wipc(pre), round_(pre, 1, 9.0), end(pre, records.COMPLETE),
            start("dirth"), round_("dirth", 1, 5.0), round_("dirth", 2, 6.0),
            end("dirth", records.INTERRUPTED))
    s = state(tmp_path, *recs)
    assert "before WIPC" in s.progress("dirth").restart_reason      # the default rule
    p = s.progress("dirth", gate=None)
    assert p.restart_reason is None and p.history == {"v": [5.0, 6.0]} and p.last_round == 2
    later = state(tmp_path, *recs, start("cbw-precondition"), purge("cbw-precondition"))
    assert "purged and rewritten since by cbw-precondition" in \
        later.progress("dirth", gate=None).restart_reason



def test_a_preconditioning_without_wipc_goes_on_after_its_first_round(tmp_path):
    """HIR's, DIRTH's and CBW's preconditioning is its rounds (purge, no WIPC): killed
    after a round, it goes on after it (it used to restart from purge, "before WIPC",
    and measure its rounds again: benchmarks/faults.py found it); killed before its first
    round, it restarts from purge."""
    pre = "dirth-precondition"
    s = state(tmp_path, start(pre), purge(pre), round_(pre, 1, 9.0), round_(pre, 2, 8.0))
    p = s.progress(pre, gate=ROUND)
    assert p.restart_reason is None and p.history == {"v": [9.0, 8.0]} and p.last_round == 2
    early = state(tmp_path, start(pre), purge(pre))
    assert early.progress(pre, gate=ROUND).restart_reason == \
        "it had stopped before its first round completed"


def test_only_the_records_since_the_last_test_start_count(tmp_path):
    """A test restarted from purge begins anew: the rounds and WIPC of its earlier start do
    not count (they described the drive before that purge)."""
    s = state(tmp_path, start("iops"), purge("iops"), wipc("iops"), round_("iops", 1, 5.0),
              round_("iops", 2, 6.0), start("iops"), purge("iops"))
    assert "before WIPC" in s.progress("iops").restart_reason
    s2 = state(tmp_path, start("iops"), purge("iops"), wipc("iops"), round_("iops", 1, 5.0),
               round_("iops", 2, 6.0), start("iops"), purge("iops"), wipc("iops"),
               round_("iops", 1, 7.0))
    assert s2.progress("iops").history == {"v": [7.0]}

def test_a_run_is_stopped_when_a_test_ended_in_error_or_never_ended(tmp_path):
    """The session's closing "--resume" hint: a test that ended in error, was interrupted,
    or started and has no end (a full disk kept its end from the ledger)."""
    from pts.results.ledger import Ledger
    from pts.results.resume import stopped

    def ledger(name, *recs):
        folder = tmp_path / name
        folder.mkdir()
        with contextlib.closing(Ledger(folder / "ledger.jsonl")) as led:
            for r in recs:
                led.append(r)
        return stopped(folder)

    assert not ledger("done", start("iops"), end("iops", "steady"), start("tp"),
                      end("tp", "not_steady"))
    assert ledger("error", start("iops"), end("iops", "error"))
    assert ledger("interrupted", start("iops"), end("iops", "interrupted"))
    assert ledger("no-end", start("iops"), end("iops", "steady"), start("tp"), round_("tp", 1, 1))
    assert not ledger("resumed", start("iops"), end("iops", "error"), start("iops"),
                      end("iops", "steady"))
