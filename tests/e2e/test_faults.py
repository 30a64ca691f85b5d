"""Faults during a run: each gives an error naming the cause; what was completed is kept."""

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from pts.device import openers
from pts.emulate import lifecycle
from pts.results.ledger import read_ledger
from tests.support.ptsrun import IOPS, check_outcomes, run_suite, start_suite

pytestmark = pytest.mark.needs("root", "fio", "losetup", "blkdiscard")

ARGS = ["--spec", "pts-e-1.1", "--max-rounds", "6", "--purge", "trim",
        "--iops-rw-mixes", "0/100", "--iops-block-sizes", "64KiB,4KiB"]


def pts(*args):
    return start_suite(*ARGS, *args, target=IOPS)


def test_device_disappears_mid_test(make_loop, tmp_path):
    dev = make_loop(64 << 20)
    reports = tmp_path / "reports"
    proc = pts("--device", dev, "--destructive", "--reports-dir", str(reports),
               "--point-seconds", "1")
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            found = list(reports.glob("*/*/ledger.jsonl"))
            if found and '"type": "point"' in found[0].read_text():
                break
            time.sleep(0.05)
        subprocess.run(["losetup", "-d", dev], check=True)     # the drive is "pulled"
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, out[-3000:]
    assert f"the device under test {dev} disappeared during the test" in out
    folder = found[0].parent
    records = [r.data for r in read_ledger(found[0])[0]]
    end = [r for r in records if r["type"] == "test_end"][-1]
    assert end["status"] == "error" and "disappeared" in end["message"]
    assert any(r["type"] == "point" for r in records)           # completed points kept
    assert (folder / "report.pdf").exists()


def test_reports_dir_not_writable(make_loop):
    dev = make_loop(64 << 20)
    p = run_suite("--device", dev, "--destructive", "--reports-dir", "/proc/pts-reports")
    assert p.returncode == 4
    assert "--reports-dir /proc/pts-reports: cannot store results there" in p.stderr


def in_round_2(reports: Path, proc: subprocess.Popen, limit: float = 180) -> Path:
    """The run folder, once round 2's fio is running (a round is one fio process)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        for ledger in reports.glob("*/*/ledger.jsonl"):
            if (ledger.parent / "raw/iops/round-02/round.cmd").exists():
                time.sleep(0.5)
                return ledger.parent
        assert proc.poll() is None, proc.communicate()[0][-3000:]
        time.sleep(0.02)
    raise AssertionError("round 2 did not start")


def fill(path: Path) -> None:
    """Write `path` until its file system has no space left."""
    chunk = b"\0" * (1 << 20)
    with open(path, "wb", buffering=0) as fh, contextlib.suppress(OSError):
        while True:
            fh.write(chunk)


@contextlib.contextmanager
def stuck_fio(dev: str, folder: Path):
    """A fio as a killed run can leave it (seen: stuck in a futex after the kernel's SIGTERM,
    still holding the device): its output in the run folder, its main process and its job
    (forked, in a session of its own) stopped (SIGSTOP), so that SIGTERM cannot end them.
    Killed at the end whatever happened."""
    fio = subprocess.Popen(["fio", "--name=left", f"--filename={dev}", "--rw=read", "--bs=4k",
                            "--time_based", "--runtime=600", "--rate_iops=50",
                            f"--output={folder}/raw/left.json"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rdev = os.stat(dev).st_rdev
    try:
        deadline = time.monotonic() + 30
        # until its job (not the main process) has the device open
        while not [o for o in openers.holding({(os.major(rdev), os.minor(rdev))}, settle=0)
                   if o.pid != fio.pid]:
            assert time.monotonic() < deadline and fio.poll() is None, "fio did not start"
            time.sleep(0.05)
        for o in openers.left_by(folder):
            os.kill(o.pid, signal.SIGSTOP)
            os.kill(o.pid, signal.SIGTERM)          # pending: a stopped fio cannot act on it
        yield fio
    finally:
        for o in openers.left_by(folder):
            os.kill(o.pid, signal.SIGKILL)
        fio.wait()


@pytest.mark.needs("mount", "umount")
def test_reports_dir_fills_up_mid_round_then_resumes(make_loop, tmp_path):
    """The reports folder's file system fills up while round 2 runs: fio's JSON cannot be
    written, the error says so and how to go on; round 1 stays in the ledger; once the space
    is freed, --resume redoes round 2 and ends as the recorded rounds give. A fio that the
    stopped run left stuck on the device refuses a new run, naming it, and --resume kills
    it (its command line names the run folder) before it writes."""
    dev = make_loop(64 << 20)
    small = tmp_path / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", str(small)], check=True)
    try:
        proc = pts("--device", dev, "--destructive", "--reports-dir", str(small / "reports"),
                   "--point-seconds", "1")
        try:
            folder = in_round_2(small / "reports", proc)
            fill(small / "filler")
            out, _ = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 1, out[-3000:]
        assert f"fio could not write its output {folder}/raw/iops/round-02/round.json: No " \
               "space left on device (the file system of the reports folder is full; free " \
               "space, then --resume the run)" in out, out[-3000:]
        assert f"pytest pts/ --resume {folder} --destructive" in out
        before = [r.data for r in read_ledger(folder / "ledger.jsonl")[0]]
        assert [r["round"] for r in before if r["type"] == "round"] == [1]
        (small / "filler").unlink()
        with stuck_fio(dev, folder) as left:
            p = run_suite("--device", dev, "--destructive", "--reports-dir", str(tmp_path))
            assert p.returncode == 4 and f"{dev} is open by fio (pid " in p.stderr, p.stderr
            p = run_suite("--resume", str(folder), "--destructive", target=IOPS, timeout=300)
            assert left.wait(timeout=10) == -signal.SIGKILL
            assert openers.left_by(folder) == []               # its job too
        assert f"killing fio (pid {left.pid}: fio --name=left" in p.stdout, p.stdout[-3000:]
        after = [r.data for r in read_ledger(folder / "ledger.jsonl")[0]]
        expected = check_outcomes(folder, after)["iops"]
        assert p.returncode == (0 if expected.passed else 1), p.stdout[-3000:]
        assert "resume after round 1" in p.stdout
        (first,) = [r for r in after if r["type"] == "round" and r["round"] == 1]
        assert first == [r for r in before if r["type"] == "round"][0]   # round 1 kept as is
    finally:
        subprocess.run(["umount", str(small)], check=True)


@pytest.mark.needs("pkill")
def test_fio_killed_mid_point(make_loop, tmp_path):
    dev = make_loop(64 << 20)
    reports = tmp_path / "reports"
    proc = pts("--device", dev, "--destructive", "--reports-dir", str(reports),
               "--point-seconds", "5")
    try:
        deadline = time.monotonic() + 120
        killed = False
        while time.monotonic() < deadline and not killed:
            found = list(reports.glob("*/*/ledger.jsonl"))
            if found and '"type": "point"' in found[0].read_text():
                time.sleep(1)                           # the next point's fio is running
                killed = subprocess.run(["pkill", "-9", "-f", f"fio.*{found[0].parent}"]
                                        ).returncode == 0
            time.sleep(0.05)
        assert killed
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1
    assert "fio exited with status -9" in out
    end = [r.data for r in read_ledger(found[0])[0] if r.data["type"] == "test_end"][-1]
    assert end["status"] == "error" and "FioFailed" in end["message"]


@pytest.mark.needs("pdftotext")
def test_no_purge_method_stops_the_test_before_any_write(make_loop, tmp_path):
    """--purge auto on a loop device: no spec purge exists for it, so the test is an ERROR,
    the failed purge is in the ledger and on the report, and the device is untouched."""
    dev = make_loop(64 << 20)
    with open(dev, "rb") as fh:
        before = hash(fh.read())
    reports = tmp_path / "reports"
    out, _ = pts("--device", dev, "--destructive", "--reports-dir", str(reports),
                 "--purge", "auto").communicate(timeout=120)
    assert "ERROR at setup of test_iops" in out, out[-3000:]
    assert "--purge auto: no PTS purge method" in out and "--purge trim" in out
    (ledger,) = reports.glob("*/*/ledger.jsonl")
    records = [r.data for r in read_ledger(ledger)[0]]
    (purge,) = [r for r in records if r["type"] == "purge"]
    assert (purge["ok"], purge["method"]) == (False, "auto") and "loop" in purge["error"]
    assert not [r for r in records if r["type"] in ("wipc", "point")]
    report = subprocess.run(["pdftotext", str(ledger.parent / "report.pdf"), "-"],
                            capture_output=True, text=True, check=True).stdout
    assert "FAILED" in report and "Error: --purge auto: no PTS purge method" in \
        " ".join(report.split())
    with open(dev, "rb") as fh:
        assert hash(fh.read()) == before


@pytest.mark.needs("fusermount3", "/dev/fuse", "mfusepy", "pdftotext", "pgrep")
def test_write_errors_end_the_test_with_fios_error_and_no_figure_from_it(tmp_path):
    """A drive that fails its writes: the emulated SSD's 'eio' profile (issue 23 §3), whose
    writes fail with EIO, one in 50, once 3 x its capacity has been written since the
    purge. The WIPC (2 x capacity, no purge probe) passes; a round's write point then meets
    the EIO: the test is an ERROR with fio's own words for it on the terminal, in the ledger
    and on the report; every round recorded is complete (its two points), no point of the
    failed round is recorded, and no fio is left running."""
    reports = tmp_path / "reports"
    p = run_suite("--device", "emulated:64M:eio", "--destructive", "--reports-dir",
                  str(reports), "--point-seconds", "1", "--no-purge-probe", *ARGS,
                  target=IOPS, timeout=300)
    out = p.stdout + p.stderr
    assert p.returncode == 1, out[-3000:]
    (ledger,) = reports.glob("*/*/ledger.jsonl")
    records = [r.data for r in read_ledger(ledger)[0]]
    types = [r["type"] for r in records]
    assert "wipc" in types, out[-3000:]
    end = [r for r in records if r["type"] == "test_end"][-1]
    assert end["status"] == "error", end
    # fio's own line first: the one-line summary of the error says what failed
    assert end["message"].startswith("FioFailed: io_u error on file "), end
    assert "Input/output error" in end["message"].splitlines()[0], end
    assert "Input/output error" in out
    rounds = [r["round"] for r in records if r["type"] == "round"]
    assert rounds == list(range(1, len(rounds) + 1))
    points = [r["round"] for r in records if r["type"] == "point"]
    assert points == [n for n in rounds for _ in range(2)]     # only the completed rounds'
    text = " ".join(subprocess.run(["pdftotext", str(ledger.parent / "report.pdf"), "-"],
                                   capture_output=True, text=True, check=True).stdout.split())
    assert "Input/output error" in text
    assert subprocess.run(["pgrep", "-f", f"fio.*{ledger.parent}"]).returncode == 1
    print(f"eio: {len(rounds)} rounds completed before the error; {end['message'][:300]}")


@pytest.mark.needs("fusermount3", "/dev/fuse", "mfusepy", "pgrep")
def test_emulated_ssd_daemon_killed_mid_round(tmp_path):
    """The emulated SSD's FUSE daemon is killed -9 while round 2 runs: the device node stays
    but every I/O fails. The error names the device as gone (its backing file unreachable),
    round 1 is kept, the report is written, no fio is left, the dead SSD's loop device is
    released (it was once left bound), and --resume refuses: the SSD did not outlive its
    session; the ledger is left as it was."""
    reports = tmp_path / "reports"
    proc = pts("--device", "emulated:64M", "--destructive", "--reports-dir", str(reports),
               "--point-seconds", "1", "--no-purge-probe")
    try:
        folder = in_round_2(reports, proc)
        dev = json.loads((folder / "run.json").read_text())["device"]["path"]
        os.kill(lifecycle.find(dev).pid, signal.SIGKILL)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, out[-3000:]
    assert f"the device under test {dev} disappeared during the test (its backing file " \
           "/run/snia-pts/emulated/" in out and "can no longer be reached" in out, out[-3000:]
    recs = [r.data for r in read_ledger(folder / "ledger.jsonl")[0]]
    assert [r["round"] for r in recs if r["type"] == "round"] == [1]
    assert (folder / "report.pdf").exists()
    assert subprocess.run(["pgrep", "-f", f"fio.*{folder}"]).returncode == 1
    assert not (Path("/sys/block") / Path(dev).name / "loop" / "backing_file").exists() or \
        "disk.img" not in (Path("/sys/block") / Path(dev).name / "loop/backing_file") \
        .read_text(), "the dead emulated SSD's loop device was left bound"
    p = run_suite("--resume", str(folder), "--destructive", target=IOPS, timeout=120)
    assert p.returncode == 4 and "an emulated SSD does not outlive its session" in p.stderr
    assert [r.data for r in read_ledger(folder / "ledger.jsonl")[0]] == recs
