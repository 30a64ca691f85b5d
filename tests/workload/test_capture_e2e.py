"""`python -m pts capture` for real: a /dev/shm loop device under fio, the kernel's own
counters as the oracle, lost events provoked for real (a 64 KiB ring buffer whose reader the
test holds back) and said by the count, the notes and the card, the tracefs instance's life,
the device's data untouched, bad input. Each capture traces until SIGINT once fio is done
(tests.support.apps.capturing), and every one compared with what fio did is guarded: fio
ran inside the capture's window (tests.support.apps.ran_inside)."""

from __future__ import annotations

import hashlib
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from pts.cli import main
from pts.workload.capture import tracefs
from pts.workload.capture.events import NO_TIME, Op, open_capture
from tests.support.apps import (
    BOUND_S,
    capturing,
    diskstats,
    ran_inside,
    start_capture,
    wait_for_instance,
)
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
    """Requests and sectors per direction against /sys/block stat; the capture ended by
    SIGINT once fio is done, its step count that of the time it traced; every request
    issued at or after the capture's start (issue_ns >= 0; the deterministic check of the
    start is tests/workload/test_capture_instance.py) and completed after its issue."""
    out = tmp_path / "cap.parquet"
    with capturing(loop, out, "--step", "1") as cap:
        began = time.time()
        before = diskstats(loop)
        # at a rate the text parser keeps up with on a busy 2-core machine: this checks the
        # counting, not the throughput (benchmarks/capture_overhead.py measures that)
        fio(loop, "randrw", 2, rwmixread=70, rate_iops="7000,3000")
        after = diskstats(loop)
        ended = time.time()
    assert not cap.instance.exists()
    ran_inside(out, began, ended, "fio (2 s)")
    delta = after - before
    info = open_capture(out).info
    assert info.lost_events == 0 and info.step_s == 1.0
    assert info.notes[0].startswith("stopped by SIGINT after"), info.notes
    # every step boundary it passed, and the step it was in
    assert len(info.lost_by_step) == int(info.seconds // info.step_s) + 1 >= 3, \
        (info.lost_by_step, info.seconds)
    got = {c: np.concatenate([b[c] for b in open_capture(out).batches()])
           for c in ("op", "bytes", "issue_ns", "complete_ns")}
    ops, size = got["op"], got["bytes"]
    for op, ios, sectors in ((Op.READ, delta[0], delta[2]), (Op.WRITE, delta[4], delta[6])):
        mine = ops == op
        # enough for the 1 % below to mean something (the rate asked gives 6,000-14,000;
        # a loaded host gives less, which is not what this checks)
        assert ios > 600
        assert abs(mine.sum() - ios) <= 0.01 * ios, (op, mine.sum(), ios)
        assert abs(size[mine].sum() // 512 - sectors) <= 0.01 * sectors, op
    done = got["complete_ns"] != NO_TIME
    assert (got["issue_ns"] >= 0).all(), got["issue_ns"].min()
    assert (got["complete_ns"][done] >= got["issue_ns"][done]).all()
    assert f"written: {out}" in cap.stdout and "lost events: 0" in cap.stdout
    assert "kworker share" in cap.stdout


HELD = 8192      # 4 KiB random reads done while the capture's reader is held back
STEP = 0.2       # the lossy capture's step (s); its reader is held back for 2 steps at least


def stopped(pid: int, timeout: float = 10) -> None:
    """Once the process is stopped (SIGSTOP taken: state T in /proc/PID/stat)."""
    end = time.monotonic() + timeout
    while Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "T":
        assert time.monotonic() < end, f"{pid} did not stop"
        time.sleep(0.01)


@pytest.mark.needs("pdftotext")
def test_a_ring_buffer_overrun_is_counted_noted_and_on_the_card(loop, tmp_path, capsys):
    """Lost events for real, by construction: the smallest ring buffer the capture takes
    (--buffer-kb 64: 16 pages per CPU) and its reader held back by the test (SIGSTOP) while
    fio reads HELD blocks (2 x HELD events, an issue and a completion each): however fast or
    loaded the machine, at most the buffers' pages survive and the rest is overwritten. The
    count is checked against the kernel, not just > 0: every event of the device is either
    read or counted lost, so the events read (issues, completions paired or not) plus
    `lost_events` are twice the requests /sys/block stat counted. Held for 2 steps at least
    and ended by a SIGINT that waits for it (sent while it is stopped), its first look after
    SIGCONT ends it: the steps it passed while held are all counted, the losses in them.
    Then the summary, the notes, the workload card and its PDF descriptor page say so."""
    out = tmp_path / "lossy.parquet"
    # the device's block events only (the attribution's task events are the machine's)
    with capturing(loop, out, "--step", str(STEP), "--buffer-kb", "64",
                   "--no-writeback-attribution") as cap:
        began = time.time()
        before = diskstats(loop)
        cap.proc.send_signal(signal.SIGSTOP)
        try:
            stopped(cap.proc.pid)
            held = time.monotonic()
            subprocess.run(["fio", "--name=r", f"--filename={loop}", "--rw=randread",
                            "--bs=4k", f"--size={HELD * 4096}", "--direct=1",
                            "--ioengine=libaio", "--iodepth=32", "--randrepeat=0",
                            "--output=/dev/null"], check=True, capture_output=True)
            delta = diskstats(loop) - before
            ended = time.time()
            time.sleep(max(0.0, held + 2 * STEP - time.monotonic()))
            cap.proc.send_signal(signal.SIGINT)
        finally:
            cap.proc.send_signal(signal.SIGCONT)
        stdout, stderr = cap.proc.communicate(timeout=120)
        assert cap.proc.returncode == 0, stderr
    ran_inside(out, began, ended, f"fio ({HELD} reads)")
    info = open_capture(out).info
    lost = info.lost_events
    kernel_events = 2 * int(delta[0] + delta[4])       # an issue and a completion each
    assert kernel_events >= 2 * 0.99 * HELD, delta.tolist()    # (merged reads count once)
    completions = sum(int((b["complete_ns"] != NO_TIME).sum())
                      for b in open_capture(out).batches(("complete_ns",)))
    read = info.extra["requests_seen"] + completions + info.extra["unmatched_completions"]
    # what survives: each CPU's buffer pages, its reader page and the one being written,
    # of 4 KiB, the smallest event taking 40 bytes
    ncpus = len(list((tracefs.find_tracefs() / "per_cpu").glob("cpu*")))
    assert read <= ncpus * (64 // 4 + 2) * 4096 // 40 < kernel_events // 2, (read, ncpus)
    assert abs(read + lost - kernel_events) <= 0.01 * kernel_events, (read, lost,
                                                                      kernel_events)
    assert lost == sum(info.lost_by_step)
    assert len(info.lost_by_step) == int(info.seconds // STEP) + 1, (info.lost_by_step,
                                                                     info.seconds)
    assert info.events < int(delta[0])                 # the capture undercounts, and says so
    # the summary, the notes (after the stop's: the buffer that overran and the fix)
    assert f"lost events: {lost} (results incomplete)" in stdout, stdout
    assert info.notes[0].startswith("stopped by SIGINT after"), info.notes
    assert info.notes[1].startswith(f"{lost} events lost (tracing ring buffer overruns"), \
        info.notes
    assert "64 KiB per-CPU buffer" in info.notes[1] and "--buffer-kb" in info.notes[1]
    assert f"  note: {info.notes[1]}" in stdout
    # the workload card (text) and its PDF descriptor page
    pdf = tmp_path / "lossy.pdf"
    assert main.main(["workload", str(out), "--step", str(STEP), "--pdf", "-o", str(pdf)]) == 0
    card = capsys.readouterr().out
    assert f"  lost events: {lost}\n" in card
    assert f"!!! WARNING: {lost} EVENTS WERE LOST (tracing buffer overruns)" in card
    first = pdf_page_texts(pdf, layout=True)[0]
    assert f"WARNING: {lost} EVENTS WERE LOST" in first
    assert table_row(first, "Lost events") == [str(lost)]


def test_capture_leaves_the_devices_data_unchanged(loop, tmp_path):
    fio(loop, "write", 1, size="8M", bs="64k")            # some data to checksum
    digest = hashlib.sha256(Path(loop).read_bytes()).hexdigest()
    with capturing(loop, tmp_path / "cap.parquet"):
        began = time.time()
        fio(loop, "randread", 0.5)
        ended = time.time()
    ran_inside(tmp_path / "cap.parquet", began, ended, "fio (0.5 s)")
    assert open_capture(tmp_path / "cap.parquet").rows > 0
    assert hashlib.sha256(Path(loop).read_bytes()).hexdigest() == digest


def test_sigterm_ends_the_capture_keeping_it_and_sigkill_leftover_is_cleaned_next_time(
        loop, tmp_path):
    """SIGTERM (as SIGINT) ends the tracing early, as its end would: what was traced is
    decoded and kept, exit 0, the notes and the summary say so; the spool is removed."""
    out = tmp_path / "cap.parquet"
    proc = start_capture(loop, out, BOUND_S)
    instance = wait_for_instance(proc)
    before = diskstats(loop)
    fio(loop, "randread", 1, rate_iops=500)
    reads = int((diskstats(loop) - before)[0])      # the kernel's count of fio's reads
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    assert not instance.exists() and [p.name for p in tmp_path.iterdir()] == ["cap.parquet"]
    info = open_capture(out).info
    # every read fio did (how many a loaded host lets it do at 500/s is not asked), and the
    # tracing ended by the signal, not by its bound
    assert reads > 0 and info.events >= reads and info.seconds < BOUND_S, (
        info.events, reads, info.seconds)
    assert info.notes[0].startswith("stopped by SIGTERM after") and \
        "everything traced until then kept" in info.notes[0]
    assert f"note: {info.notes[0]}" in stdout

    killed = start_capture(loop, out, BOUND_S)
    left = wait_for_instance(killed)
    killed.kill()
    # not reaped yet: a zombie's pid is alive, so no capture beside this test (-n 2) can
    # take its instance for a leftover before it is checked here
    zombie = Path(f"/proc/{killed.pid}/stat")
    deadline = time.monotonic() + 20
    while zombie.read_text().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < deadline, "the killed capture did not end"
        time.sleep(0.01)
    assert left.exists()                     # SIGKILL: nothing could remove it
    killed.wait()
    with capturing(loop, tmp_path / "next.parquet"):     # removed before it traces
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
