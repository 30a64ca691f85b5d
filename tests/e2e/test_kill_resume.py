"""kill -9 of the suite at 10 seeded random moments of ONE run (purge, WIPC, mid-round —
a round is one fio process —, between rounds, report), `--resume` after each: at the end the
ledger is readable, no completed round was lost or measured twice, no fio outlived the suite,
and the verdict is the one the recorded rounds give."""

from __future__ import annotations

import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from pts.results import records
from pts.results.ledger import read_records
from tests.ptsrun import IOPS, check_outcomes, start_suite

ARGS = ["--spec", "pts-e-1.1", "--point-seconds", "1", "--max-rounds", "9", "--purge", "trim",
        "--iops-rw-mixes", "0/100", "--iops-block-sizes", "64KiB,4KiB"]
KILLS, SEED = 10, 20261123

pytestmark = [pytest.mark.needs("root", "fio", "losetup", "blkdiscard"), pytest.mark.slow]


def suite(*args) -> subprocess.Popen:
    return start_suite(*args, target=IOPS)


def no_fio_left(folder: Path, seconds: float = 30) -> bool:
    """fio got SIGTERM from the kernel when the suite died (PR_SET_PDEATHSIG)."""
    deadline = time.monotonic() + seconds
    while subprocess.run(["pgrep", "-f", str(folder)], capture_output=True).returncode == 0:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def completed_rounds(folder: Path) -> dict[int, dict]:
    found, _ = read_records(folder / "ledger.jsonl")
    rounds: dict[int, list] = {}
    for r in found:
        if isinstance(r, records.Round):
            rounds.setdefault(r.round, []).append(r.tracking)
    return rounds


def test_kill9_at_random_moments_then_resume(make_loop, tmp_path):
    rng = random.Random(SEED)
    dev = make_loop(256 << 20)
    reports = tmp_path / "reports"
    proc = suite("--device", dev, "--destructive", "--reports-dir", str(reports), *ARGS)
    folder, kills, seen = None, 0, {}
    while kills < KILLS:
        time.sleep(rng.uniform(0.3, 4.0))
        if proc.poll() is not None:            # finished before this moment: resume again
            assert folder is not None
        else:
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=30)
            kills += 1
        folder = folder or next((p.parent for p in reports.glob("*/*/ledger.jsonl")), None)
        if folder is None:                     # killed before the run folder existed
            assert no_fio_left(Path(dev))
            proc = suite("--device", dev, "--destructive", "--reports-dir", str(reports),
                         *ARGS)
            continue
        assert no_fio_left(folder), f"a fio of the killed run is still running ({folder})"
        for n, values in completed_rounds(folder).items():
            seen.setdefault(n, values[0])
        proc = suite("--resume", str(folder), "--destructive")
    out, _ = proc.communicate(timeout=900)
    # the verdict the recorded rounds give: in the ledger, the report and the exit status
    expected = check_outcomes(folder)["iops"]
    assert proc.returncode == (0 if expected.passed else 1), out[-3000:]
    rounds = completed_rounds(folder)
    assert all(len(v) == 1 for v in rounds.values()), "a completed round was measured twice"
    assert sorted(rounds) == list(range(1, len(rounds) + 1))
    for n, tracking in seen.items():            # nothing completed was lost or changed
        assert rounds[n] == [tracking]
