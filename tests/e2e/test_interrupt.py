"""Interrupting a run (Ctrl-C = SIGINT, or SIGTERM) mid-round (a round is one fio process):
fio is stopped, the ledger records the interruption, a partial report marked INCOMPLETE is
rendered, no fio is left. The suite is started with SIGINT and SIGQUIT ignored, as a shell
script's `&` starts it: it must still honour SIGINT (it installs its own handler), whatever
disposition it inherits."""

import signal
import subprocess
import time

import pytest

from pts.results.ledger import read_ledger
from tests.support.ptsrun import IOPS, start_suite

pytestmark = pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "pdftotext", "pgrep")


def fio_processes(folder) -> list[str]:
    out = subprocess.run(["pgrep", "-af", str(folder)], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "fio" in line and "pgrep" not in line]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_mid_round(make_loop, tmp_path, sig):
    dev = make_loop(64 << 20)
    reports = tmp_path / "reports"
    proc = start_suite("--device", dev, "--destructive", "--purge", "trim",
                       "--point-seconds", "3", "--reports-dir", str(reports), target=IOPS,
                       ignored=(signal.SIGINT, signal.SIGQUIT))
    try:
        deadline = time.monotonic() + 120
        ledger = None
        while time.monotonic() < deadline:      # wait for round 1's fio to start
            found = list(reports.glob("*/*/ledger.jsonl"))
            if found and (found[0].parent / "raw/iops/round-01/round.cmd").exists():
                ledger = found[0]
                break
            time.sleep(0.2)
        assert ledger is not None, "round 1 did not start in time"
        time.sleep(4.0)                          # inside the round's fio run, a point done
        proc.send_signal(sig)
        # the partial report renders after fio stops: minutes on a loaded 2-core machine
        out, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    folder = ledger.parent
    records = [r.data for r in read_ledger(ledger)[0]]
    end = [r for r in records if r["type"] == "test_end"]
    assert end and end[0]["status"] == "interrupted", out[-2000:]
    assert (folder / "report.pdf").exists(), out[-2000:]
    text = subprocess.run(["pdftotext", str(folder / "report.pdf"), "-"], capture_output=True,
                          text=True).stdout
    assert "INCOMPLETE" in text
    assert f"PTS report: {folder / 'report.pdf'}" in out
    assert f"pytest pts/ --resume {folder} --destructive" in out
    assert fio_processes(folder) == []
