"""The capture's spool for real (issue 40 §2): a capture of a /dev/shm loop device under fio,
killed with SIGKILL mid-way, is read from its spool's parts as one capture, its request
count checked against the kernel's (/sys/block stat) before and at the kill; the parts read
as one equal the same pages read as a single part; a part cut mid-page is read up to its
last whole page and the cut stated."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from pts.cli import main
from pts.workload import capture, spool, tracefs, unspool
from pts.workload.events import COLUMNS
from tests.support.apps import diskstats, start_capture, wait_for_instance
from tests.support.helpers import loop_device
from tests.support.tracefs_mount import ensure_tracefs

pytestmark = [pytest.mark.needs("root", "fio", "losetup")]
RATE = 1000                  # the I/Os per second running when the capture is killed


def fio_argv(dev: str, seconds: float, rate: str) -> list[str]:
    return ["fio", "--name=w", f"--filename={dev}", "--rw=randrw", "--bs=4k", "--direct=1",
            "--ioengine=libaio", "--iodepth=4", "--time_based", f"--runtime={seconds}",
            f"--rate_iops={rate}", "--randrepeat=0", "--output=/dev/null"]


def ios(stat: np.ndarray) -> int:
    return int(stat[0] + stat[4])           # reads and writes completed


@pytest.fixture(scope="module")
def killed(tmp_path_factory):
    """A capture with 0.4 s parts: fio runs 1 s (about 2000 I/Os), then quiet for longer than a
    flush of the partly filled pages (the spool then read while the capture runs), then
    fio again at RATE and the capture killed 1.5 s into it. The kernel's I/O counts at each
    point."""
    ensure_tracefs()
    tmp = tmp_path_factory.mktemp("killed")
    out = tmp / "cap.parquet"
    with loop_device(size=64 << 20) as dev:
        proc = start_capture(dev, out, 60, "--part-seconds", "0.4", "--step", "1")
        instance = wait_for_instance(proc)
        try:
            before = diskstats(dev)
            subprocess.run(fio_argv(dev, 1, "1500,500"), check=True, capture_output=True)
            quiet = diskstats(dev)
            time.sleep(spool.FLUSH_S + 3 * capture.POLL_S)
            # the spool read while the capture runs: every request done FLUSH_S ago is in it
            spooled = unspool.decode(spool.open_spool(spool.spool_of(out)), lambda rows: None)
            busy = subprocess.Popen(fio_argv(dev, 10, f"{RATE // 2},{RATE // 2}"))
            time.sleep(1.5)
            proc.kill()
            at_kill = diskstats(dev)
            proc.wait()
            busy.kill()
            busy.wait()
        finally:
            proc.kill()
            proc.wait()
            if instance.exists():        # SIGKILL left it tracing: ours, remove it
                tracefs.remove_instance(instance)
    return out, ios(quiet) - ios(before), ios(at_kill) - ios(before), spooled.counts


def rows(cap) -> dict[str, np.ndarray]:
    got = list(cap.batches())
    return {c: np.concatenate([b[c] for b in got]) for c in COLUMNS}


def test_a_killed_capture_reads_from_its_parts_as_one(killed, capsys):
    out, done_before_quiet, done_at_kill, spooled = killed
    # fio's rate over 1 s gives about 2000 I/Os (1999 seen in a CI run); the capture must
    # hold exactly the kernel's count
    assert done_before_quiet == spooled.seen, (done_before_quiet, spooled)
    assert abs(done_before_quiet - 2000) <= 20, done_before_quiet
    assert spooled.incomplete == 0 and spooled.unmatched_completions == 0, spooled
    where = spool.spool_of(out)
    assert not out.exists() and spool.is_spool(where)
    sp = spool.open_spool(where)
    assert sp.end is None and sp.parts >= 4 and not sp.cut, (sp.parts, sp.cut)
    cap = unspool.open_capture(out)         # CAPTURE never written: its spool is read
    assert cap.path == where / unspool.DECODED
    # at most FLUSH_S (+ polls) of RATE is lost at the kill: what was still in the
    # ring buffer
    assert done_before_quiet <= cap.rows <= done_at_kill, (cap.rows, done_before_quiet,
                                                           done_at_kill)
    loss = done_at_kill - cap.rows
    assert loss <= RATE * (spool.FLUSH_S + 3 * capture.POLL_S), loss
    info = cap.info
    assert info.notes[0].startswith("the capture did not end cleanly (killed, its host lost "
                                    "power or its disk filled) after"), info.notes
    assert info.extra["spool"]["ended"] == "not cleanly"
    assert 2.5 < info.seconds < 30 and info.lost_events == 0
    assert len(info.lost_by_step) >= 2          # the step boundaries it passed
    # `pts workload` takes the capture's name (or the spool's) as a capture
    assert main.main(["workload", str(out), "--step", "1"]) == 0
    assert "the capture did not end cleanly" in capsys.readouterr().out


def copy_spool(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(unspool.DECODED))
    return dst


def test_parts_read_as_one_equal_the_same_pages_in_one_part(killed, tmp_path):
    out = killed[0]
    whole = rows(unspool.open_capture(out))
    one = copy_spool(spool.spool_of(out), tmp_path / "one.spool")
    sp = spool.open_spool(one)
    for cpu, files in enumerate(sp.files):
        joined = b"".join(p.read_bytes() for p in files)
        for p in files:
            p.unlink()
        spool.part_file(one, 0, cpu).write_bytes(joined)
    assert spool.open_spool(one).parts == 1
    single = rows(unspool.open_capture(one))
    assert len(single["issue_ns"]) == len(whole["issue_ns"]) > 2000
    for c in COLUMNS:
        assert np.array_equal(single[c], whole[c]), c


def test_a_part_cut_mid_page_is_read_to_its_last_whole_page_and_the_cut_said(killed,
                                                                             tmp_path):
    out = killed[0]
    whole = unspool.open_capture(out)
    cut = copy_spool(spool.spool_of(out), tmp_path / "cut.spool")
    page = spool.open_spool(cut).layout.page_size
    victim = max(spool.open_spool(cut).files[0][:-1], key=lambda p: p.stat().st_size)
    size = victim.stat().st_size
    assert size >= 2 * page
    with open(victim, "r+b") as fh:
        fh.truncate(size - page // 2)        # half of its last page gone
    got = unspool.open_capture(cut)
    assert f"{page // 2} bytes after the last whole page of 1 part files ignored" in \
        " ".join(got.info.notes) and victim.name in " ".join(got.info.notes)
    assert got.info.extra["spool"]["cut_bytes"] == page // 2
    # the same as the part without that page: its events only are missing
    with open(victim, "r+b") as fh:
        fh.truncate(size - page)
    (cut / unspool.DECODED).unlink()
    exact = unspool.open_capture(cut)
    assert rows(got)["issue_ns"].tolist() == rows(exact)["issue_ns"].tolist()
    assert whole.rows - page // 48 <= got.rows < whole.rows   # <= one page of events


def test_idle_priority_runs_the_decoding_at_sched_idle_and_restores():
    before = os.sched_getscheduler(0)
    with unspool.idle_priority():
        assert os.sched_getscheduler(0) == os.SCHED_IDLE
    assert os.sched_getscheduler(0) == before != os.SCHED_IDLE
    with unspool.idle_priority(False):
        assert os.sched_getscheduler(0) == before


@pytest.mark.needs("mount", "umount")
def test_a_full_disk_ends_the_capture_exit_1_keeping_what_was_spooled(tmp_path):
    """The spool's file system fills up while tracing (a real one: a 512 KiB tmpfs): the
    capture ends with exit 1, names the spool and the fault, removes its instance, and the
    spool (copied elsewhere: there is no room to decode it in place) reads as a capture."""
    ensure_tracefs()
    small = tmp_path / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "pts-test-full", str(small)],
                   check=True)
    try:
        with loop_device(size=64 << 20) as dev:
            out = small / "cap.parquet"
            proc = start_capture(dev, out, 30)
            instance = wait_for_instance(proc)
            subprocess.run(fio_argv(dev, 2, "20000,5000"), check=True, capture_output=True)
            _, stderr = proc.communicate(timeout=30)
        assert proc.returncode == 1, stderr
        assert "No space left on device" in stderr and \
            f"python -m pts workload {spool.spool_of(out)}" in stderr, stderr
        assert not instance.exists() and not out.exists()
        with pytest.raises(unspool.CaptureError, match="copy the spool to a writable place"):
            unspool.open_capture(spool.spool_of(out))
        cap = unspool.open_capture(copy_spool(spool.spool_of(out), tmp_path / "c.spool"))
        assert cap.rows > 500 and cap.info.extra["spool"]["ended"] == "not cleanly"
    finally:
        subprocess.run(["umount", str(small)], check=True)
