"""kill -9 of a running suite at three moments (during WIPC, mid-round, between rounds),
then --resume: the run completes, no completed round is lost, the report declares the
resume. Uses PTS-E 1.1 (one tracking variable) and two points per round, to stay short."""

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from pts.results.ledger import read_ledger
from tests.ptsrun import IOPS, check_outcomes, kill_and_resume, start_suite

pytestmark = [pytest.mark.slow,
              pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "pdftotext")]

ARGS = ["--spec", "pts-e-1.1", "--point-seconds", "1", "--max-rounds", "7", "--purge", "trim",
        "--iops-rw-mixes", "0/100", "--iops-block-sizes", "64KiB,4KiB"]


def pts(*args):
    return start_suite(*args, target=IOPS)


def records(folder: Path) -> list[dict]:
    return [r.data for r in read_ledger(folder / "ledger.jsonl")[0]
            if r.data.get("test") in ("iops", None)]


def reached(folder: Path, moment: str) -> bool:
    """The run in `folder` is at `moment` (its ledger and raw files say so)."""
    text = (folder / "ledger.jsonl").read_text()
    if moment == "wipc":
        return (folder / "raw/iops/wipc.fio").exists() and '"type": "wipc"' not in text
    if moment == "mid-round":
        if (folder / "raw/iops/round-02/round.cmd").exists() and \
                text.count('"type": "round"') == 1:
            time.sleep(0.5)    # round 2's fio is running (its points land when it ends)
            return True
        return False
    return moment == "between" and text.count('"type": "round"') == 2


def wait_for(reports: Path, moment: str, timeout: float = 120) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = list(reports.glob("*/*/ledger.jsonl"))
        if found and reached(found[0].parent, moment):
            return found[0].parent
        time.sleep(0.01)
    raise AssertionError(f"moment {moment} not reached")


@pytest.mark.parametrize("moment", ["wipc", "mid-round", "between"])
def test_kill9_then_resume(make_loop, tmp_path, moment):
    folder, killed, out = kill_and_resume(make_loop(1 << 30), tmp_path / "reports", ARGS,
                                          IOPS, lambda run: reached(run, moment), limit=120)
    before = {r["round"]: r["tracking"] for r in killed
              if r["type"] == "round" and r.get("test") == "iops"}
    recs = records(folder)
    rounds = {r["round"]: r["tracking"] for r in recs if r["type"] == "round"}
    for n, tracking in before.items():          # nothing completed was lost or changed
        assert rounds[n] == tracking
    assert sorted(rounds) == list(range(1, len(rounds) + 1))
    end = [r for r in recs if r["type"] == "test_end"][-1]
    assert end["rounds"] == len(rounds)
    check_outcomes(folder, recs)              # the verdict the recorded rounds give
    text = subprocess.run(["pdftotext", str(folder / "report.pdf"), "-"], capture_output=True,
                          text=True).stdout
    assert "Resumed run" in " ".join(text.split())
    if moment == "wipc":
        assert len([r for r in recs if r["type"] == "purge"]) == 2     # restarted from purge
    else:
        resume = [r for r in recs if r["type"] == "resume"][0]
        assert resume["after_round"] == len(before)
        # A power cycle between stop and resume can reset the write cache: it is set, read
        # back and recorded again before the next round.
        after = recs[recs.index(resume):]
        assert [r["when"] for r in after if r["type"] == "write_cache"] == ["on resume"]
        assert json.loads((folder / "run.json").read_text())["options"]["point_seconds"] == 1


def test_resume_refuses_another_device(make_loop, tmp_path):
    reports = tmp_path / "reports"
    dev = make_loop(64 << 20)
    run = pts("--device", dev, "--destructive", "--reports-dir", str(reports), *ARGS)
    folder = wait_for(reports, "between")
    run.send_signal(signal.SIGKILL)
    run.wait()
    other = make_loop(128 << 20)
    p = pts("--resume", str(folder), "--device", other, "--destructive")
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 4
    assert "is not the device this run started on" in out and "capacity_bytes" in out
    assert "Nothing was written" in out
