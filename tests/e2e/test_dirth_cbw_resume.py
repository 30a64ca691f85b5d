"""DIRTH --resume during the operating-point captures (kill -9 once the first histogram is
recorded): the operating points are not chosen or recorded again, each histogram is
recorded once. On a 64 MiB loop device with a 2 x 2 grid (only the flow is checked). About
a minute and a half.

A resume after a completed demand round is the round runner's (pts.procedure.resume.
after_rounds), which tests/e2e/test_kill_resume.py kills and resumes for real ten times on
IOPS; each test type's own resume point is tests/unit/test_resume_path.py; every test type
killed and resumed for real at ten moments is benchmarks/faults.py (docs/faults.md)."""

from __future__ import annotations

import pytest

from pts.results.ledger import read_ledger
from tests.support.ptsrun import check_outcomes, kill_and_resume

DIRTH = "pts/suite/test_dirth.py"
ARGS = ["--point-seconds", "1", "--max-rounds", "6", "--purge", "trim", "--time-scale",
        "0.001", "--dirth-thread-counts", "32,1", "--dirth-queue-depths", "32,1"]

# pgrep: tests.support.ptsrun.kill_and_resume runs it
pytestmark = [pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "pgrep"),
              pytest.mark.slow]


def demand_rounds(recs: list[dict]) -> int:
    return sum(1 for r in recs if r["type"] == "round" and r.get("test") == "dirth")


def of(recs: list[dict], kind: str) -> list[dict]:
    return [r for r in recs if r["type"] == kind and r.get("test") == "dirth"]


def test_dirth_resumes_during_the_captures_without_choosing_again(make_loop, tmp_path):
    """kill -9 once the first histogram is recorded (the second operating point's pre-write
    or capture in flight): the resumed run keeps the operating points as chosen, records
    each once, and captures only what was left."""
    folder, killed, out = kill_and_resume(
        make_loop(64 << 20), tmp_path / "reports", ARGS, DIRTH,
        lambda run: (run / "ledger.jsonl").read_text().count(
            '"type": "response_histogram"') == 1)
    recs = [r.data for r in read_ledger(folder / "ledger.jsonl")[0]]
    chosen = of(killed, "operating_point")
    assert [o["name"] for o in chosen] == ["MaxIOPS", "MidIOPS", "MinIOPS"]
    ops = of(recs, "operating_point")
    assert ops == chosen                              # one each, exactly as chosen before
    hists = of(recs, "response_histogram")
    assert sorted(h["name"] for h in hists) == sorted(o["name"] for o in ops if o["selected"])
    assert of(recs, "response_histogram")[0] == of(killed, "response_histogram")[0]
    for h in hists:                                   # captured at the chosen point
        o = next(o for o in ops if o["name"] == h["name"])
        assert (h["thread_count"], h["queue_depth"]) == (o["thread_count"], o["queue_depth"])
    assert of(recs, "round") == of(killed, "round")   # no demand round run again
    (resume,) = of(recs, "resume")
    assert resume["after_round"] == len(of(killed, "round"))
    assert any("during the operating-point captures" in r["text"]
               for r in of(recs, "deviation"))
    assert sorted(check_outcomes(folder, recs)) == ["dirth", "dirth-precondition"]
    assert "[pts dirth] resume during the operating-point captures" in out
