"""--resume of a killed run on another device is refused before anything is written. (kill -9
at each step of a run, then --resume, is tests/e2e/test_kill_resume.py: its aimed and random
kills cover the three single kills that were here, WIPC, mid-round and between rounds.)
PTS-E 1.1 (one tracking variable) and two points per round, to stay short."""

import signal
import time
from pathlib import Path

import pytest

from tests.support.ptsrun import IOPS, start_suite

pytestmark = [pytest.mark.slow,
              pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "pdftotext")]

ARGS = ["--spec", "pts-e-1.1", "--point-seconds", "1", "--max-rounds", "7", "--purge", "trim",
        "--iops-rw-mixes", "0/100", "--iops-block-sizes", "64KiB,4KiB"]


def pts(*args):
    return start_suite(*args, target=IOPS)


def after_first_round(reports: Path, timeout: float = 120) -> Path:
    """The run folder under `reports`, once its ledger holds a completed round."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = list(reports.glob("*/*/ledger.jsonl"))
        if found and '"type": "round"' in found[0].read_text():
            return found[0].parent
        time.sleep(0.01)
    raise AssertionError(f"no round completed within {timeout:.0f} s under {reports}")


def test_resume_refuses_another_device(make_loop, tmp_path):
    reports = tmp_path / "reports"
    dev = make_loop(64 << 20)
    run = pts("--device", dev, "--destructive", "--reports-dir", str(reports), *ARGS)
    folder = after_first_round(reports)
    run.send_signal(signal.SIGKILL)
    run.wait()
    other = make_loop(128 << 20)
    p = pts("--resume", str(folder), "--device", other, "--destructive")
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 4
    assert "is not the device this run started on" in out and "capacity_bytes" in out
    assert "Nothing was written" in out
