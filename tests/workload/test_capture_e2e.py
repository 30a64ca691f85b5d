"""`python -m pts capture` for real: a /dev/shm loop device under fio, the kernel's own
counters as the oracle, lost events provoked for real (a 64 KiB ring buffer under fio's
fastest reads) and said by the count, the notes and the card, the tracefs instance's life,
the device's data untouched, bad input. Every capture compared with what fio did is guarded:
fio ran inside the capture's window (tests.support.apps.ran_inside)."""

from __future__ import annotations

import hashlib
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from pts.cli import main
from pts.workload import tracefs
from pts.workload.events import NO_TIME, Op, open_capture
from tests.support.apps import diskstats, ran_inside, start_capture, wait_for_instance
from tests.support.helpers import loop_device, pdf_page_texts, table_row
from tests.support.tracefs_mount import ensure_tracefs

pytestmark = [pytest.mark.needs("root", "fio", "losetup")]


@pytest.fixture(scope="module")
def loop():
    ensure_tracefs()
    with loop_device(size=64 << 20) as dev:
        yield dev


def fio(dev: str, rw: str, seconds: float, **opts) -> None:
    argv = ["fio", "--name=w", f"--filename={dev}", f"--rw={rw}", "--bs=4k", "--direct=1",
            "--ioengine=libaio", "--iodepth=8", "--time_based", f"--runtime={seconds}",
            "--randrepeat=0", "--output=/dev/null"] + [f"--{k}={v}" for k, v in opts.items()]
    subprocess.run(argv, check=True, capture_output=True)



def test_capture_agrees_with_the_kernels_counters(loop, tmp_path):
    out = tmp_path / "cap.parquet"
    proc = start_capture(loop, out, 3, "--step", "1")
    instance = wait_for_instance(proc)
    began = time.time()
    before = diskstats(loop)
    # at a rate the text parser keeps up with on a busy 2-core machine: this checks the
    # counting, not the throughput (benchmarks/capture_overhead.py measures that)
    fio(loop, "randrw", 2, rwmixread=70, rate_iops="7000,3000")
    after = diskstats(loop)
    ended = time.time()
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    assert not instance.exists()
    ran_inside(out, began, ended, "fio (2 s)")
    delta = after - before
    cap = open_capture(out)
    assert cap.info.lost_events == 0 and cap.info.step_s == 1.0
    assert len(cap.info.lost_by_step) == 3
    ops = np.concatenate([b["op"] for b in cap.batches()])
    size = np.concatenate([b["bytes"] for b in cap.batches()])
    for op, ios, sectors in ((Op.READ, delta[0], delta[2]), (Op.WRITE, delta[4], delta[6])):
        mine = ops == op
        assert ios > 4000
        assert abs(mine.sum() - ios) <= 0.01 * ios, (op, mine.sum(), ios)
        assert abs(size[mine].sum() // 512 - sectors) <= 0.01 * sectors, op
    assert f"written: {out}" in stdout and "lost events: 0" in stdout
    assert "kworker share" in stdout


@pytest.mark.needs("pdftotext")
def test_a_ring_buffer_overrun_is_counted_noted_and_on_the_card(loop, tmp_path, capsys):
    """Lost events for real: the smallest ring buffer the capture takes (--buffer-kb 64 per
    CPU, ~1 k events) under fio's fastest reads (4 KiB at QD 32 on the RAM-backed loop
    device: ~100-300 k events/s against a reader that drains it every 0.1 s) overruns. The
    count is checked against the kernel, not just > 0: every event of the device is either
    read or counted lost, so the events read (issues, completions paired or not) plus
    `lost_events` are twice the requests /sys/block stat counted. Then the summary, the
    notes, the workload card and its PDF descriptor page say so. About 3 s."""
    out = tmp_path / "lossy.parquet"
    proc = start_capture(loop, out, 2, "--step", "0.5", "--buffer-kb", "64")
    wait_for_instance(proc)
    began = time.time()
    before = diskstats(loop)
    fio(loop, "randread", 1, iodepth=32)
    delta = diskstats(loop) - before
    ended = time.time()
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    ran_inside(out, began, ended, "fio (1 s)")
    info = open_capture(out).info
    lost = info.lost_events
    kernel_events = 2 * int(delta[0] + delta[4])       # an issue and a completion each
    assert kernel_events > 40_000, delta.tolist()      # fio ran at speed (> 20 k IOPS)
    assert lost > 0.1 * kernel_events, (lost, kernel_events)
    assert lost == sum(info.lost_by_step) and len(info.lost_by_step) == 4
    completions = sum(int((b["complete_ns"] != NO_TIME).sum())
                      for b in open_capture(out).batches(("complete_ns",)))
    read = info.extra["requests_seen"] + completions + info.extra["unmatched_completions"]
    assert abs(read + lost - kernel_events) <= 0.01 * kernel_events, (read, lost,
                                                                      kernel_events)
    assert info.events < int(delta[0])                 # the capture undercounts, and says so
    # the summary, the notes (first, with the buffer that overran and the fix)
    assert f"lost events: {lost} (results incomplete)" in stdout, stdout
    assert info.notes[0].startswith(f"{lost} events lost (tracing ring buffer overruns"), \
        info.notes
    assert "64 KiB per-CPU buffer" in info.notes[0] and "--buffer-kb" in info.notes[0]
    assert f"  note: {info.notes[0]}" in stdout
    # the workload card (text) and its PDF descriptor page
    pdf = tmp_path / "lossy.pdf"
    assert main.main(["workload", str(out), "--step", "0.5", "--pdf", "-o", str(pdf)]) == 0
    card = capsys.readouterr().out
    assert f"  lost events: {lost}\n" in card
    assert f"!!! WARNING: {lost} EVENTS WERE LOST (tracing buffer overruns)" in card
    first = pdf_page_texts(pdf, layout=True)[0]
    assert f"WARNING: {lost} EVENTS WERE LOST" in first
    assert table_row(first, "Lost events") == [str(lost)]


def test_capture_leaves_the_devices_data_unchanged(loop, tmp_path):
    fio(loop, "write", 1, size="8M", bs="64k")            # some data to checksum
    digest = hashlib.sha256(Path(loop).read_bytes()).hexdigest()
    proc = start_capture(loop, tmp_path / "cap.parquet", 1.5)
    wait_for_instance(proc)
    began = time.time()
    fio(loop, "randread", 0.5)
    ended = time.time()
    assert proc.wait(timeout=30) == 0
    ran_inside(tmp_path / "cap.parquet", began, ended, "fio (0.5 s)")
    assert open_capture(tmp_path / "cap.parquet").rows > 0
    assert hashlib.sha256(Path(loop).read_bytes()).hexdigest() == digest


def test_sigterm_ends_the_capture_keeping_it_and_sigkill_leftover_is_cleaned_next_time(
        loop, tmp_path):
    """SIGTERM (as SIGINT) ends the tracing early, as its end would: what was traced is
    decoded and kept, exit 0, the notes and the summary say so; the spool is removed."""
    out = tmp_path / "cap.parquet"
    proc = start_capture(loop, out, 60)
    instance = wait_for_instance(proc)
    fio(loop, "randread", 1, rate_iops=500)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    assert not instance.exists() and [p.name for p in tmp_path.iterdir()] == ["cap.parquet"]
    info = open_capture(out).info
    assert info.events >= 250 and info.seconds < 30, (info.events, info.seconds)
    assert info.notes[0].startswith("stopped by SIGTERM after") and \
        "everything traced until then kept" in info.notes[0]
    assert f"note: {info.notes[0]}" in stdout

    killed = start_capture(loop, out, 60)
    left = wait_for_instance(killed)
    killed.kill()
    killed.wait()
    assert left.exists()                     # SIGKILL: nothing could remove it
    nxt = start_capture(loop, tmp_path / "next.parquet", 0.5)
    assert nxt.wait(timeout=30) == 0
    assert not left.exists()


@pytest.mark.parametrize("device, says", [
    ("REGULAR", "regular file, not a block device"),
    ("/dev/null", "character device, not a block device"),
    ("/dev/pts-no-such-device", "no such device")])
def test_bad_device_exit_2_and_nothing_written(tmp_path, device, says):
    if device == "REGULAR":
        device = str(tmp_path / "file.img")
        Path(device).write_bytes(b"\0" * 4096)
    out = tmp_path / "cap.parquet"
    proc = start_capture(device, out, 1)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 2 and says in stderr
    assert not out.exists() and not list(tmp_path.glob(".cap.parquet*"))


@pytest.mark.parametrize("fault, says", [
    ("not root", "capturing needs root"),
    ("no tracefs", "mount -t tracefs nodev /sys/kernel/tracing")])
def test_no_root_or_no_tracefs_exit_2_and_nothing_written(loop, tmp_path, monkeypatch, capsys,
                                                         fault, says):
    if fault == "not root":
        monkeypatch.setattr("os.geteuid", lambda: 1000)
    else:
        mounts = tmp_path / "mounts"
        mounts.write_text("sysfs /sys sysfs rw 0 0\n")
        monkeypatch.setattr(tracefs, "MOUNTS", mounts)
    out = tmp_path / "cap.parquet"
    assert main.main(["capture", loop, "--seconds", "1", "--step", "1", "-o", str(out)]) == 2
    assert says in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.glob(".cap*"))
