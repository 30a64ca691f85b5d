"""Buffered writeback attributed to the application that dirtied it (issue 40 §2), for real:
a capture of an ext4 file system on a loop device while two buffered writers with distinct
names (fio, named by its exec; python3 renamed "pywriter" by prctl) write a file each, then
sync. The flusher (kworker) issues their writes; each request attributed to a writer lies
within its file's extents (the kernel's FIEMAP, as filefrag -v prints it; the file system is
on the whole device) and together they cover the file; `--process fio` keeps fio's
writeback; jbd2's writes are counted as not attributable (journal). The same spool without
the attribution's layouts (as a spool made before them) decodes to the same requests, without
dirtiers, its writeback "not traced"."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import struct
import subprocess
import sys

import numpy as np
import pytest

from pts.cli import main
from pts.workload.capture import local, spool, tracefs, unspool
from pts.workload.capture.events import COLUMNS, Op
from pts.workload.capture.loop import process_filter
from tests.support.apps import ext4_loop, start_capture, wait_for_instance
from tests.support.tracefs_mount import ensure_tracefs

pytestmark = [pytest.mark.needs("root", "fio", "losetup", "mkfs.ext4", "mount", "umount")]
FIO_BYTES, PY_BYTES = 4 << 20, 3 << 20
PY_WRITER = ("import ctypes, sys\n"
             "ctypes.CDLL(None).prctl(15, b'pywriter', 0, 0, 0)   # PR_SET_NAME\n"
             "with open(sys.argv[1], 'wb') as f:\n"
             f"    for _ in range({PY_BYTES >> 16}):\n"
             "        f.write(b'p' * 65536)\n")


FS_IOC_FIEMAP = 0xC020660B          # _IOWR('f', 11, struct fiemap), linux/fs.h
FIEMAP_FLAG_SYNC = 1
EXTENT = struct.Struct("=QQQ2QI3I")  # struct fiemap_extent (56 bytes), linux/fiemap.h


def extents(path, most: int = 64) -> list[tuple[int, int]]:
    """(first sector, end sector) of each of the file's extents on the device: the kernel's
    FIEMAP (what filefrag -v prints; the file system starts at sector 0)."""
    head = struct.pack("=QQIIII", 0, 2**64 - 1, FIEMAP_FLAG_SYNC, 0, most, 0)
    buf = bytearray(head + bytes(EXTENT.size * most))
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, FS_IOC_FIEMAP, buf)
    finally:
        os.close(fd)
    mapped = struct.unpack_from("=I", buf, 20)[0]
    out = []
    for i in range(mapped):
        _, physical, length, *_ = EXTENT.unpack_from(buf, 32 + i * EXTENT.size)
        out.append((physical // 512, (physical + length) // 512))
    return out


def rows(cap) -> dict[str, np.ndarray]:
    got = list(cap.batches())
    return {c: np.concatenate([b[c] for b in got]) for c in COLUMNS}


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    ensure_tracefs()
    tmp = tmp_path_factory.mktemp("writeback")
    out = tmp / "cap.parquet"
    with ext4_loop(64 << 20) as (dev, mnt):
        proc = start_capture(dev, out, 60, "--keep-spool")
        try:
            wait_for_instance(proc)
            subprocess.run(["fio", "--name=buffered", f"--filename={mnt / 'fio.bin'}",
                            "--rw=write", "--bs=64k", f"--size={FIO_BYTES}", "--direct=0",
                            "--ioengine=psync", "--fallocate=none", "--output=/dev/null"],
                           check=True)
            subprocess.run([sys.executable, "-c", PY_WRITER, str(mnt / "py.bin")], check=True)
            os.sync()
            spans = {"fio": extents(mnt / "fio.bin"), "pywriter": extents(mnt / "py.bin")}
        finally:
            proc.send_signal(signal.SIGINT)
            stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    return out, spans, stdout


def test_each_writers_writeback_lies_in_its_own_file_and_covers_it(captured, capsys,
                                                                    tmp_path, monkeypatch):
    out, spans, stdout = captured
    cap = unspool.open_capture(out)
    r = rows(cap)
    for name, size in (("fio", FIO_BYTES), ("pywriter", PY_BYTES)):
        mine = r["dirtier_comm"] == name
        assert mine.any(), (name, set(r["dirtier_comm"].tolist()))
        assert set(r["comm"][mine].tolist()) <= {c for c in r["comm"].tolist()
                                                if c.startswith("kworker/")}, name
        assert (r["op"][mine] == Op.WRITE).all()
        start, end = r["sector"][mine], r["sector"][mine] + r["bytes"][mine] // 512
        inside = np.zeros(len(start), bool)
        covered = 0
        for a, b in spans[name]:
            inside |= (start >= a) & (end <= b)
            covered += sum(min(e, b) - max(s, a) for s, e in zip(start.tolist(), end.tolist(),
                                                                strict=True) if s < b and e > a)
        assert inside.all(), (name, spans[name], list(zip(start[~inside], end[~inside],
                                                                    strict=True)))
        assert covered * 512 == size, (name, covered * 512, size)
    wb = cap.info.extra["writeback"]
    assert wb["by_dirtier"]["fio"] == int((r["dirtier_comm"] == "fio").sum())
    assert wb["by_dirtier"]["pywriter"] == int((r["dirtier_comm"] == "pywriter").sum())
    journal = int(((r["op"] == Op.WRITE) & np.char.startswith(r["comm"].astype(str),
                                                              "jbd2/")).sum())
    assert journal > 0 and wb["not_attributable"]["journal"] == journal, wb
    assert (r["dirtier_pid"][r["dirtier_comm"] == ""] == 0).all()
    assert f"writeback: {wb['requests']} kworker/jbd2 write requests, " in stdout, stdout
    assert f"journal {journal}" in stdout.split("not attributable: ")[1], stdout
    # the workload card says the same
    monkeypatch.chdir(tmp_path)
    assert main.main(["workload", str(out), "--step", "1"]) == 0
    card = capsys.readouterr().out
    line = stdout.split("  writeback: ")[1].splitlines()[0]
    assert f"  writeback: {line}" in card and "fio " in line and "pywriter " in line, card


def test_process_fio_keeps_fios_writeback_issued_by_kworker(captured):
    out = captured[0]
    sp = spool.open_spool(spool.spool_of(out))
    kept: list[dict] = []
    unspool.decode(sp, kept.append, keep=process_filter(("fio",)))
    comm = np.concatenate([np.asarray(b["comm"], object) for b in kept])
    dirtier = np.concatenate([np.asarray(b["dirtier_comm"], object) for b in kept])
    whole = rows(unspool.open_capture(out))
    fios = int((whole["dirtier_comm"] == "fio").sum())
    assert fios and int((dirtier == "fio").sum()) == fios
    assert all(c.startswith("kworker/") for c in comm[dirtier == "fio"])
    assert set(comm[dirtier != "fio"]) <= {"fio"}       # and fio's own (metadata reads)
    assert "pywriter" not in set(dirtier)


def test_a_spool_without_the_attribution_events_decodes_without_dirtiers(captured, tmp_path):
    out = captured[0]
    old = tmp_path / "old.spool"
    shutil.copytree(spool.spool_of(out), old, ignore=shutil.ignore_patterns(unspool.DECODED))
    for name in spool.EXTRA_FORMATS:
        (old / name).unlink(missing_ok=True)
    got = unspool.open_capture(old)
    new, was = rows(got), rows(unspool.open_capture(out))
    for c in ("issue_ns", "complete_ns", "sector", "bytes", "op", "pid", "comm"):
        assert np.array_equal(new[c], was[c]), c
    assert (new["dirtier_pid"] == 0).all() and set(new["dirtier_comm"]) == {""}
    assert any("not attributed to its applications" in n for n in got.info.notes)
    wb = got.info.extra["writeback"]
    assert wb["attributed"] == 0 and wb["not_attributable"]["not traced"] > 0


def test_no_writeback_attribution_traces_the_request_events_only():
    """--no-writeback-attribution (tracefs.Instance(writeback=False)): none of the
    attribution's events on, its layouts not kept; by default all of them, filtered."""
    ensure_tracefs()
    with ext4_loop(16 << 20) as (dev, _):
        rdev = os.stat(dev).st_rdev
        dev_t = local.kernel_dev_t(os.major(rdev), os.minor(rdev))
        for writeback in (False, True):
            with tracefs.Instance(tracefs.find_tracefs(), dev_t, 64, writeback=writeback,
                                  name=f"pts-test-wb-{os.getpid()}") as inst:
                on = {names[0]: (inst.path / "events" / names[0] / "enable").read_text()
                      for names, _ in tracefs.ATTRIBUTION_EVENTS}
                kept = set(inst.formats())
                bio_filter = (inst.path / "events/block/block_bio_queue/filter").read_text()
            if writeback:
                assert set(on.values()) == {"1\n"} and kept == set(tracefs.LAYOUT_FILES) - {
                    "writeback_dirty_page.format"}, (on, kept)
                assert f'dev == {dev_t} && comm ~ "kworker/*"' in bio_filter
            else:
                assert set(on.values()) == {"0\n"} and kept == set(tracefs.REQUIRED_LAYOUTS)
