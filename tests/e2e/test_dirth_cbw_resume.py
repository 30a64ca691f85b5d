"""DIRTH --resume: kill -9 after the second demand-variation round, resume: the demand
rounds go on after round 2 (no second purge, no second preconditioning, no second test
start), the round numbers stay consecutive and the operating points are chosen at the end.
And kill -9 during the operating-point captures: the operating points are not chosen or
recorded again, each histogram is recorded once. On a 64 MiB loop device with a 2 x 2 grid
(only the flow is checked; the first on 4096-byte sectors, a 4Kn drive). About a minute
and a half each."""

from __future__ import annotations

import json

import pytest

from pts.results.ledger import read_ledger
from tests.support.ptsrun import check_outcomes, kill_and_resume

DIRTH = "pts/suite/test_dirth.py"
ARGS = ["--point-seconds", "1", "--max-rounds", "6", "--purge", "trim", "--time-scale",
        "0.001", "--dirth-thread-counts", "32,1", "--dirth-queue-depths", "32,1"]

pytestmark = [pytest.mark.needs("root", "fio", "losetup", "blkdiscard"), pytest.mark.slow]


def demand_rounds(recs: list[dict]) -> int:
    return sum(1 for r in recs if r["type"] == "round" and r.get("test") == "dirth")


def test_dirth_resumes_after_the_last_completed_demand_round(make_loop, tmp_path):
    folder, killed, out = kill_and_resume(
        make_loop(64 << 20, sector=4096), tmp_path / "reports", ARGS, DIRTH,   # 4Kn
        lambda run: demand_rounds([r.data for r in read_ledger(run / "ledger.jsonl")[0]]) >= 2)
    killed_after = demand_rounds(killed)
    assert json.loads((folder / "run.json").read_text())["device"]["logical_sector"] == 4096
    recs = [r.data for r in read_ledger(folder / "ledger.jsonl")[0]]
    mine = [r for r in recs if r.get("test") == "dirth"]
    assert len([r for r in recs if r["type"] == "purge"]) == 1
    assert len([r for r in mine if r["type"] == "test_start"]) == 1
    (resume,) = [r for r in mine if r["type"] == "resume"]
    assert resume["after_round"] == killed_after
    rounds = [r["round"] for r in mine if r["type"] == "round"]
    assert rounds == list(range(1, len(rounds) + 1)) and len(rounds) > killed_after
    assert sorted(check_outcomes(folder, recs)) == ["dirth", "dirth-precondition"]
    assert [r for r in mine if r["type"] == "operating_point"], out[-3000:]
    assert f"[pts dirth] resume after round {killed_after}" in out


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
