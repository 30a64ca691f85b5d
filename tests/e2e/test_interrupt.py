"""Interrupting a run (Ctrl-C = SIGINT, or SIGTERM) mid-round (a round is one fio process):
fio is stopped, the ledger records the interruption, a partial report marked INCOMPLETE is
rendered, no fio is left. The suite is started with SIGINT and SIGQUIT ignored, as a shell
script's `&` starts it: it must still honour SIGINT (it installs its own handler), whatever
disposition it inherits.

The same for a session of two devices (pts.session.parent): Ctrl-C reaches the parent alone
(each child run has its own session), which passes one SIGTERM to each child; each child
takes the SIGTERM path above (so that path is asserted there, for both, instead of by a
single-device SIGTERM run of its own: one device run less), and the parent ends after them
with no process of the session left."""

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from pts.results.ledger import read_ledger
from tests.support.helpers import alive
from tests.support.ptsrun import IOPS, start_suite

pytestmark = pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "pdftotext", "pgrep")


def point_1_started(tmp: Path, runs: int = 1) -> bool:
    """Once `runs` rounds (their gate folders, in the suites' TMPDIR `tmp`) have released
    their point 1: point 0 done, the round's fio running on (fio_gate: gate-K.started)."""
    return len(list(tmp.glob("pts-gates-*/gate-1.started"))) >= runs


def fio_processes(folder) -> list[str]:
    out = subprocess.run(["pgrep", "-af", str(folder)], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "fio" in line and "pgrep" not in line]


def test_interrupt_mid_round(make_loop, tmp_path):
    sig = signal.SIGINT
    dev = make_loop(64 << 20)
    reports, tmp = tmp_path / "reports", tmp_path / "tmp"
    tmp.mkdir()
    proc = start_suite("--device", dev, "--destructive", "--purge", "trim",
                       "--point-seconds", "3", "--reports-dir", str(reports), target=IOPS,
                       ignored=(signal.SIGINT, signal.SIGQUIT), env={"TMPDIR": str(tmp)})
    try:
        # inside round 1's fio run, a point done: seen, not slept for (a fixed 4 s after
        # round.cmd could still be fio's set-up on a loaded host, where nothing of fio is
        # there to stop or to be left: the checks below passed without testing that)
        deadline = time.monotonic() + 120
        ledger = None
        while time.monotonic() < deadline and proc.poll() is None:
            found = list(reports.glob("*/*/ledger.jsonl"))
            if found and (found[0].parent / "raw/iops/round-01/round.cmd").exists() \
                    and point_1_started(tmp):
                ledger = found[0]
                break
            time.sleep(0.1)
        assert ledger is not None, "round 1's point 1 did not start in time"
        assert fio_processes(ledger.parent), "round 1's fio is not running"
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



def _ours(path) -> list[int]:
    """The processes whose command line names `path` (this test's folder): the session's."""
    out = subprocess.run(["pgrep", "-f", str(path)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split() if int(p) != os.getpid()]


def test_sigint_to_a_several_device_session_stops_every_child(make_loop, tmp_path):
    """`pytest pts/ --device A --device B`, Ctrl-C (SIGINT to the parent alone, started as a
    shell's `&` starts it) once both children are inside round 1's fio: each child gets
    SIGTERM (said, with its pid), records the interruption and renders its partial report
    marked INCOMPLETE; the parent waits for both, prints the one --resume command of both
    runs and ends; no child, fio or gate of the session is left. About 40 s."""
    devs = [make_loop(64 << 20), make_loop(64 << 20)]
    labels = [os.path.basename(d) for d in devs]
    reports, tmp = tmp_path / "reports", tmp_path / "tmp"
    tmp.mkdir()
    proc = start_suite(*(a for d in devs for a in ("--device", d)), "--destructive",
                       "--purge", "trim", "--point-seconds", "3", "--reports-dir",
                       str(reports), target=IOPS, ignored=(signal.SIGINT, signal.SIGQUIT),
                       env={"TMPDIR": str(tmp)})
    try:
        # inside both rounds' fio, a point done: seen (both gates released their point 1),
        # not slept for (test_interrupt_mid_round says why)
        deadline = time.monotonic() + 180
        started: list = []
        while time.monotonic() < deadline and proc.poll() is None:
            started = [f.parent for f in reports.glob("*/*/raw/iops/round-01/round.cmd")]
            if len(started) == 2 and point_1_started(tmp, runs=2):
                break
            time.sleep(0.1)
        assert len(started) == 2 and point_1_started(tmp, runs=2), \
            f"round 1's point 1 did not start on both devices: {started}"
        assert all(fio_processes(f.parents[2]) for f in started), "a round's fio is not running"
        proc.send_signal(signal.SIGINT)  # the parent only: the children have their sessions
        out, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in _ours(tmp_path):      # on failure: what the session left, and only that
            os.kill(pid, signal.SIGKILL)
    print(out[-6000:])
    assert proc.returncode == 2, out[-3000:]         # pytest's "interrupted"
    pids = {m[1]: int(m[2]) for m in re.finditer(
        r"^\[(\S+)\] interrupted: SIGTERM to its run \(pid (\d+)\)$", out, re.M)}
    assert set(pids) == set(labels), out[-3000:]
    assert not [p for p in pids.values() if alive(p)]
    assert _ours(tmp_path) == [], "a process of the session outlived it"
    folders = []
    for label, dev in zip(labels, devs, strict=True):
        (folder,) = [f.parent for f in reports.glob("*/*/run.json")
                     if f'"path": "{dev}"' in f.read_text()]
        folders.append(folder)
        records = [r.data for r in read_ledger(folder / "ledger.jsonl")[0]]
        end = [r for r in records if r["type"] == "test_end"]
        assert [e["status"] for e in end] == ["interrupted"], (label, end)
        assert end[0]["message"].startswith("interrupted (Ctrl-C or SIGTERM)"), end[0]
        text = subprocess.run(["pdftotext", str(folder / "report.pdf"), "-"],
                              capture_output=True, text=True).stdout
        assert "INCOMPLETE" in text, label
        assert f"[{label}] PTS report: {folder / 'report.pdf'}" in out
        assert fio_processes(folder) == []
    assert "snia-pts to go on with the runs that stopped, after their last completed round: " \
           f"pytest pts/ --resume {folders[0]} --resume {folders[1]} --destructive" in out
