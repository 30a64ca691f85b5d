"""--resume refuses a ledger whose rounds of a test are not consecutive (a round record
missing: the ledger was edited or damaged): its history could not be the drive's, so the
test does not go on from it (pts.results.resume.ResumeState.progress), and the refusal
comes before the resumed test writes anything (pts.procedure.runner.recorded_test)."""

from __future__ import annotations

import pytest

from pts.procedure import runner
from pts.results import records
from pts.results.ledger import Ledger, read_records
from pts.results.resume import ResumeError, ResumeState


def ledger(tmp_path, rounds) -> ResumeState:
    led = Ledger(tmp_path / "ledger.jsonl")
    led.append(records.TestStart(test="iops", title="IOPS", clause="x", parameters={}))
    led.append(records.Purge(test="iops", method="trim", command=None, ok=True, seconds=1.0,
                             deviation=True, steps=[], verification=""))
    led.append(records.Wipc(test="iops", block_size=131072, bytes_expected=1, bytes_written=1,
                            seconds=1.0, thread_count=1, queue_depth=1, raw="r"))
    for n in rounds:
        led.append(records.Round(test="iops", round=n, tracking={"v": float(n)},
                                 steady_state={}, steady=False))
    led.append(records.TestEnd(test="iops", status=records.INTERRUPTED, rounds=None,
                               steady_round=None, window=None, message="interrupted"))
    (tmp_path / "run.json").write_text("{}")
    return ResumeState.load(tmp_path)


def test_consecutive_rounds_go_on_after_the_last(tmp_path):
    p = ledger(tmp_path, [1, 2, 3]).progress("iops")
    assert (p.restart_reason, p.last_round, p.history) == (None, 3, {"v": [1.0, 2.0, 3.0]})


def test_rounds_with_a_gap_are_refused_and_nothing_is_written(tmp_path):
    state = ledger(tmp_path, [1, 2, 4])
    before = (tmp_path / "ledger.jsonl").read_bytes()

    class Run:                         # what recorded_test touches before the test's body
        resume = state

        def write(self, text):
            raise AssertionError(f"the refused test went on: {text}")

    def body():
        raise AssertionError("the refused test ran")

    with pytest.raises(ResumeError, match=r"^.*: rounds \[1, 2, 4\] of iops are not "
                                          r"consecutive \(the ledger lacks a round record: "
                                          r"edited or damaged\), so iops cannot go on from its "
                                          r"last round: start a new run \(without --resume\)\.$"):
        runner.recorded_test(Run(), "iops", "IOPS", "x", {}, body)
    assert (tmp_path / "ledger.jsonl").read_bytes() == before
    assert not read_records(tmp_path / "ledger.jsonl")[1]
