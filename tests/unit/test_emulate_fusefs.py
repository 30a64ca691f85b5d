"""The emulator's FUSE operations called directly (no mount, no root): data path and stats.

Needs mfusepy and libfuse3 to import (the [emulate] extra); without them collection fails.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from dataclasses import replace

import mfusepy  # a dependency of the [emulate] extra: missing = collection error, not a skip
import pytest

from pts.emulate import fusefs
from pts.emulate.profiles import PROFILES

SIZE = 16 << 20
PROFILE = replace(PROFILES["fast"], pages_per_block=16)


class FileInfo:
    """Stand-in for fuse_file_info: what open() sets, what read/write/release see."""

    def __init__(self, flags: int = os.O_RDWR) -> None:
        self.flags, self.fh, self.direct_io = flags, 0, 0


@pytest.fixture
def fs(tmp_path):
    ops = fusefs.EmulatedSSD.from_profile(SIZE, PROFILE, str(tmp_path / "backing.img"),
                                          {"serial": "EMUTEST0000"})
    yield ops
    ops.close()


def opened(fs, path="/disk.img", flags=os.O_RDWR) -> FileInfo:
    fi = FileInfo(flags)
    assert fs.open(path, fi) == 0
    assert fi.direct_io == 1                   # the page cache must never answer
    return fi


def test_namespace_and_statfs(fs):
    assert sorted(fs.readdir("/", None)) == [".", "..", "disk.img", "stats"]
    attrs = fs.getattr("/disk.img")
    assert attrs["st_size"] == SIZE and stat.S_ISREG(attrs["st_mode"])
    assert stat.S_ISDIR(fs.getattr("/")["st_mode"])
    with pytest.raises(mfusepy.FuseOSError) as err:
        fs.getattr("/nope")
    assert err.value.errno == errno.ENOENT
    assert fs.statfs("/")["f_bsize"] == 4096


def test_sub_page_writes_read_back(fs):
    fi = opened(fs)
    assert fs.write("/disk.img", b"a" * 512, 4096 - 256, fi) == 512   # straddles pages 0/1
    assert fs.write("/disk.img", b"b" * 100, 10, fi) == 100
    data = fs.read("/disk.img", 8192, 0, fi)
    assert data[10:110] == b"b" * 100 and data[3840:4352] == b"a" * 512
    assert data[:10] == bytes(10) and data[4352:] == bytes(8192 - 4352)
    assert fs.ftl.host_writes == 3 and fs.ftl.mapped == 2


def test_write_past_the_end_is_refused(fs):
    with pytest.raises(mfusepy.FuseOSError) as err:
        fs.write("/disk.img", b"x" * 4096, SIZE - 2048, opened(fs))
    assert err.value.errno == errno.ENOSPC


@pytest.mark.parametrize("mode", [
    fusefs.FALLOC_FL_PUNCH_HOLE | fusefs.FALLOC_FL_KEEP_SIZE,     # blkdiscard, fio trim
    fusefs.FALLOC_FL_ZERO_RANGE | fusefs.FALLOC_FL_KEEP_SIZE,     # blkdiscard -z
])
def test_discard_reaches_model_and_backing_file(fs, mode):
    fi = opened(fs)
    fs.write("/disk.img", b"z" * (64 << 10), 0, fi)
    assert fs.fallocate("/disk.img", mode, 4096, 8192 + 100, fi) == 0
    data = fs.read("/disk.img", 64 << 10, 0, fi)
    assert data[:4096] == b"z" * 4096
    assert data[4096:12288 + 100] == bytes(8192 + 100)       # the backing file is zeroed...
    assert data[12288 + 100:] == b"z" * ((64 << 10) - 12388)
    assert fs.ftl.trims == 1 and fs.ftl.trimmed_pages == 2   # ...the model unmaps whole pages
    assert fs.ftl.mapped == 14


def test_whole_device_discard_returns_to_fob(fs):
    fi = opened(fs)
    for off in range(0, 3 * SIZE, 1 << 20):                  # 3x capacity: GC runs
        fs.write("/disk.img", os.urandom(1 << 20), off % SIZE, fi)
    assert fs.ftl.gc_runs > 0
    mode = fusefs.FALLOC_FL_PUNCH_HOLE | fusefs.FALLOC_FL_KEEP_SIZE
    fs.fallocate("/disk.img", mode, 0, SIZE, fi)
    s = fs.stats()
    assert s["free_blocks"] == s["blocks"] and s["valid_pages"] == 0 and s["formats"] == 1
    assert fs.read("/disk.img", 4096, SIZE - 4096, fi) == bytes(4096)


def test_unsupported_fallocate_modes(fs):
    fi = opened(fs)
    assert fs.fallocate("/disk.img", 0, 0, 4096, fi) == 0     # preallocate: nothing to do
    with pytest.raises(mfusepy.FuseOSError) as err:
        fs.fallocate("/disk.img", 0x08 | fusefs.FALLOC_FL_PUNCH_HOLE, 0, 4096, fi)  # COLLAPSE
    assert err.value.errno == errno.EOPNOTSUPP


def test_stats_file_is_a_snapshot_taken_at_open(fs):
    with pytest.raises(mfusepy.FuseOSError):
        fs.open("/stats", FileInfo(os.O_WRONLY))
    fi = opened(fs, "/stats", os.O_RDONLY)
    disk = opened(fs)
    fs.write("/disk.img", b"x" * 4096, 0, disk)                # after the snapshot
    text = fs.read("/stats", 1 << 16, 0, fi)
    assert fs.read("/stats", 1 << 16, len(text), fi) == b""   # EOF after the JSON
    data = json.loads(text)
    assert data["host_writes"] == 0 and data["serial"] == "EMUTEST0000"
    assert data["profile"] == "fast" and data["parameters"]["pages_per_block"] == 16
    assert {"waf", "gc_runs", "erases", "reads", "trims", "valid_pages",
            "free_blocks", "nand_writes"} <= set(data)
    fs.release("/stats", fi)
    assert json.loads(fs.stats_json())["host_writes"] == 1


def test_truncate_only_to_the_same_size(fs):
    assert fs.truncate("/disk.img", SIZE) == 0
    with pytest.raises(mfusepy.FuseOSError):
        fs.truncate("/disk.img", SIZE // 2)


def test_a_discard_on_purge_keeps_mapping_zeroes_the_data_and_keeps_the_map(tmp_path):
    """The 'purge-keeps-mapping' profile: the discarded range reads back as zeros (a purge's
    marker check passes), while the model keeps every page mapped (still steady state)."""
    keeps = replace(PROFILES["purge-keeps-mapping"], pages_per_block=16)
    ops = fusefs.EmulatedSSD.from_profile(SIZE, keeps, str(tmp_path / "backing.img"),
                                          {"serial": "EMUTEST0001"})
    try:
        fi = opened(ops)
        ops.write("/disk.img", b"m" * (1 << 20), 0, fi)
        mapped = ops.ftl.mapped
        mode = fusefs.FALLOC_FL_PUNCH_HOLE | fusefs.FALLOC_FL_KEEP_SIZE
        assert ops.fallocate("/disk.img", mode, 0, SIZE, fi) == 0
        assert ops.read("/disk.img", 1 << 20, 0, fi) == bytes(1 << 20)
        s = ops.stats()
        assert s["valid_pages"] == mapped and s["formats"] == 0 and s["ignored_trims"] == 1
    finally:
        ops.close()


def test_write_errors_after_the_set_amount_one_in_every_n(tmp_path):
    """Profile fields eio_every / eio_after_capacity (the 'eio' profile): the writes up to
    0.5 x capacity since FOB succeed; then one write in 3 ends in EIO and writes nothing;
    a whole-device discard (FOB) makes the errors wait for 0.5 x capacity again."""
    ops = fusefs.EmulatedSSD.from_profile(
        SIZE, replace(PROFILE, eio_every=3, eio_after_capacity=0.5),
        str(tmp_path / "backing.img"), {"serial": "EMUTEST0000"})
    try:
        fi, chunk = opened(ops), 1 << 20
        for off in range(0, SIZE // 2, chunk):
            assert ops.write("/disk.img", b"a" * chunk, off, fi) == chunk
        outcomes = []
        for off in range(SIZE // 2, SIZE, chunk):
            try:
                outcomes.append(ops.write("/disk.img", b"b" * chunk, off, fi) == chunk)
            except mfusepy.FuseOSError as err:
                assert err.errno == errno.EIO
                outcomes.append(False)
        assert outcomes == [True, True, False] * 2 + [True, True]
        failed = SIZE // 2 + 2 * chunk                       # the third write after 0.5 x
        assert ops.read("/disk.img", chunk, failed, fi) == bytes(chunk)   # nothing written
        assert ops.read("/disk.img", chunk, failed - chunk, fi) == b"b" * chunk
        assert ops.stats()["faults"]["eio_writes"] == 2
        mode = fusefs.FALLOC_FL_PUNCH_HOLE | fusefs.FALLOC_FL_KEEP_SIZE
        ops.fallocate("/disk.img", mode, 0, SIZE, fi)
        for off in range(0, SIZE // 2, chunk):               # FOB: no errors again yet
            assert ops.write("/disk.img", b"c" * chunk, off, fi) == chunk
        assert ops.stats()["faults"] == {"written_since_fob": SIZE // 2, "writes_failing": 0,
                                         "eio_writes": 2}
    finally:
        ops.close()
