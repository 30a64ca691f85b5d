"""Faults during a run: each gives an error naming the cause; what was completed is kept."""

import subprocess
import time

import pytest

from pts.results.ledger import read_ledger
from tests.ptsrun import IOPS, run_suite, start_suite

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


def test_reports_dir_runs_out_of_space(make_loop, tmp_path):
    dev = make_loop(64 << 20)
    small = tmp_path / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(small)], check=True)
    try:
        proc = pts("--device", dev, "--destructive", "--reports-dir", str(small),
                   "--point-seconds", "1")
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode != 0, out[-3000:]
        assert "No space left on device" in out
        ledgers = list(small.glob("*/*/ledger.jsonl"))
        assert ledgers
        records, _ = read_ledger(ledgers[0])          # still readable (torn tail tolerated)
        assert records[0].data["type"] == "test_start"
    finally:
        subprocess.run(["umount", str(small)], check=True)


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
    assert end["status"] == "error" and "Input/output error" in end["message"], end
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
