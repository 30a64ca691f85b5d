"""HIR --resume: kill -9 after the first wait state, resume: the run goes on after wait
state 1 (no second purge, no second preconditioning, state 1 not redone), ends complete.
On a 64 MiB loop device (no FTL: only the flow is checked). About 1.5-2 minutes."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from pts.results.ledger import read_ledger
from tests.ptsrun import start_suite

HIR = "pts/suite/test_hir.py"
ARGS = ["--point-seconds", "1", "--max-rounds", "5", "--purge", "trim",
        "--hir-repetitions", "1", "--time-scale", "0.2"]

pytestmark = [pytest.mark.needs("root", "fio", "losetup", "blkdiscard"), pytest.mark.slow]


def recs(folder: Path) -> list[dict]:
    return [r.data for r in read_ledger(folder / "ledger.jsonl")[0]
            if r.data.get("test") in ("hir", None)]


def test_hir_resumes_after_the_last_completed_wait_state(make_loop, tmp_path):
    dev = make_loop(64 << 20)
    reports = tmp_path / "reports"
    first = start_suite("--device", dev, "--destructive", "--reports-dir", str(reports),
                        *ARGS, target=HIR)
    folder = None
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            found = list(reports.glob("*/*/ledger.jsonl"))
            if found and found[0].read_text().count('"type": "hir_state"') == 1:
                folder = found[0].parent
                break
            assert first.poll() is None, first.communicate()[0][-3000:]
            time.sleep(0.05)
        assert folder is not None, "wait state 1 never completed"
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    deadline = time.monotonic() + 30
    while subprocess.run(["pgrep", "-f", str(folder)], capture_output=True).returncode == 0:
        assert time.monotonic() < deadline, "a fio of the killed run is still running"
        time.sleep(0.1)

    second = start_suite("--resume", str(folder), "--destructive", target=HIR)
    out, _ = second.communicate(timeout=600)
    assert second.returncode == 0, out[-3000:]
    r = recs(folder)
    assert [x["state"] for x in r if x["type"] == "hir_state"] == [1, 2, 3, 4, 5]
    assert len([x for x in r if x["type"] == "purge"]) == 1
    assert len([x for x in r if x["type"] == "hir_baseline"]) == 1
    resume = [x for x in r if x["type"] == "resume"]
    assert len(resume) == 1 and resume[0]["after_round"] == 1
    assert [x for x in r if x["type"] == "test_end"][-1]["status"] == "complete"
    assert "resume after wait state 1" in out
