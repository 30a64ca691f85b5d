"""--resume keeps --power (issue 51): an IOPS run with a --power source, killed -9 after its
second round, resumed with no --power on the command line: the rounds after the stop get
their power windows too (--power is no run.json option, so the option table's replay does not
take it back: the resumed run takes the stopped run's sources from its power_source records,
pts.procedure.resume.power_sources). The source is a lab meter simulated by a script
(tests/data/meter_sim.py: a constant 7 W every 0.1 s) on a loop device, not `--power
emulated`: a run on an emulated SSD cannot be resumed (it does not outlive its session,
pts.results.resume), and `--power emulated` takes only a session's own emulated SSD. One
short run (1 s points, two cells): under a minute."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pts.results.ledger import read_ledger
from tests.support.ptsrun import IOPS, kill_and_resume

pytestmark = [pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "pgrep"),
              pytest.mark.slow]

METER = Path(__file__).resolve().parents[1] / "data" / "meter_sim.py"
SOURCE = f"meter:{sys.executable} {METER} --watts 7 --period 0.1,interval=0.1,measures=the drive"
ARGS = ["--spec", "pts-e-1.1", "--point-seconds", "1", "--max-rounds", "6", "--purge", "trim",
        "--iops-rw-mixes", "0/100", "--iops-block-sizes", "64KiB,4KiB", "--power", SOURCE,
        "--no-report"]


def test_a_resumed_run_keeps_its_power_sources(make_loop, tmp_path):
    folder, killed, out = kill_and_resume(
        make_loop(64 << 20), tmp_path / "reports", ARGS, IOPS,
        lambda run: (run / "ledger.jsonl").read_text().count('"type": "round"') >= 2)
    recs = [r.data for r in read_ledger(folder / "ledger.jsonl")[0]]
    stop = max(r["round"] for r in killed if r["type"] == "round")
    resumed = [r for r in recs if r["type"] == "resume"]
    assert resumed and resumed[0]["after_round"] == stop, out[-3000:]
    # the source once before the stop and once after it
    assert [s["name"] for s in recs if s["type"] == "power_source"] == [SOURCE] * 2
    assert f"--resume: the stopped run's sources again: {SOURCE}" in out
    after = recs[recs.index(resumed[0]):]
    points = {(r["round"], r["index"]) for r in after if r["type"] == "point"}
    windows = {(r["round"], r["index"]): r for r in after if r["type"] == "point_power"}
    whole = {r["round"] for r in after if r["type"] == "round_power"}
    rounds = {rnd for rnd, _ in points}
    assert rounds and min(rounds) == stop + 1, rounds
    assert points <= set(windows), sorted(points - set(windows))
    assert rounds <= whole
    assert all(w["source"] == SOURCE and w["covered_s"] > 0 and w["mean_w"] == pytest.approx(7)
               for w in windows.values())
