"""DIRTH --resume: kill -9 after the second demand-variation round, resume: the demand
rounds go on after round 2 (no second purge, no second preconditioning, no second test
start), the round numbers stay consecutive and the operating points are chosen at the end.
On a 64 MiB loop device with a 2 x 2 grid (only the flow is checked). About a minute."""

from __future__ import annotations

import pytest

from pts.results.ledger import read_ledger
from tests.ptsrun import check_outcomes, kill_and_resume

DIRTH = "pts/suite/test_dirth.py"
ARGS = ["--point-seconds", "1", "--max-rounds", "6", "--purge", "trim", "--time-scale",
        "0.001", "--dirth-thread-counts", "32,1", "--dirth-queue-depths", "32,1"]

pytestmark = [pytest.mark.needs("root", "fio", "losetup", "blkdiscard"), pytest.mark.slow]


def demand_rounds(recs: list[dict]) -> int:
    return sum(1 for r in recs if r["type"] == "round" and r.get("test") == "dirth")


def test_dirth_resumes_after_the_last_completed_demand_round(make_loop, tmp_path):
    folder, killed, out = kill_and_resume(
        make_loop(64 << 20), tmp_path / "reports", ARGS, DIRTH,
        lambda run: demand_rounds([r.data for r in read_ledger(run / "ledger.jsonl")[0]]) >= 2)
    killed_after = demand_rounds(killed)
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
