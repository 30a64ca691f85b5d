"""The host ceiling (pts.procedure.ceiling, pts.device.ramdev) without fio or root: the
host-bound judgement on hand-computed cases, which points are the heaviest, the RAM device's
choice (null_blk vs a tmpfs loop device) on constructed trees, and which leftovers are ours."""

from __future__ import annotations

import hashlib
import os
import socket
from types import SimpleNamespace

import pytest

from pts.config.spec import RwMix
from pts.device import ramdev
from pts.procedure import ceiling
from pts.procedure.rounds import TestPoint
from pts.procedure.runner import RoundTest
from pts.testdefs import fields
from pts.tools import liveness
from pts.tools.fio import random_job, sequential_job
from pts.tools.hosts import LOCAL

# A RAM device's figures, made up to be easy to compute with: 200,000 IOPS at 4 KiB, and
# 4,000 MB/s at 1 MiB (1,048,576 bytes: 3,814.7 IOPS), 10 us at QD 1.
SMALL = {"label": "RND 4KiB 0/100", "block_size": 4096, "numjobs": 4, "iodepth": 32,
         "iops": 200_000.0, "mbps": 819.2, "lat_mean_us": 640.0}
LARGE = {"label": "RND 1024KiB 0/100", "block_size": 1 << 20, "numjobs": 4, "iodepth": 32,
         "iops": 3814.7, "mbps": 4000.0, "lat_mean_us": 33_000.0}
FLOOR = {"label": "RND 4KiB 0/100 QD1", "block_size": 4096, "numjobs": 1, "iodepth": 1,
         "iops": 100_000.0, "mbps": 409.6, "lat_mean_us": 10.0}


def point(iops, bs, mbps=None, lat=None):
    return {"iops": iops, "block_size": bs, "mbps": iops * bs / 1e6 if mbps is None else mbps,
            "lat_mean_us": lat}


def test_a_small_point_at_share_of_the_iops_ceiling_is_host_bound():
    # 4 KiB: min(200,000, 4,000e6 / 4096 = 976,562) = 200,000 IOPS (the per-I/O bound);
    # 0.8 x 200,000 = 160,000: 160,000 reaches it, 159,999 does not
    mark = ceiling.judge(point(160_000, 4096), [SMALL, LARGE], 0.8, 0.25)
    assert mark == {"by": "IOPS", "figure": 160_000, "ceiling": 200_000.0,
                    "limit": 160_000.0, "ceiling_label": "RND 4KiB 0/100"}
    assert ceiling.judge(point(159_999, 4096), [SMALL, LARGE], 0.8, 0.25) is None


def test_a_large_point_is_judged_on_the_bandwidth_ceiling():
    # 64 KiB: min(200,000, 4,000e6 / 65,536 = 61,035) -> the MB/s bound, 4,000 MB/s;
    # limit 0.9 x 4,000 = 3,600 MB/s
    assert ceiling.judge(point(0, 65536, mbps=3600.0), [SMALL, LARGE], 0.9, 0.25) == {
        "by": "MB/s", "figure": 3600.0, "ceiling": 4000.0, "limit": 3600.0,
        "ceiling_label": "RND 1024KiB 0/100"}
    assert ceiling.judge(point(0, 65536, mbps=3599.0), [SMALL, LARGE], 0.9, 0.25) is None


def test_latency_within_the_margin_of_the_floor_at_oio_1_only():
    # floor 10 us, margin 0.25: limit 12.5 us; 1 / 12.5 us = 80,000 IOPS < 0.8 x 200,000
    qd1 = point(80_000, 4096, lat=12.5)
    assert ceiling.judge(qd1, [SMALL, LARGE, FLOOR], 0.8, 0.25, oio=1) == {
        "by": "latency", "figure": 12.5, "ceiling": 10.0, "limit": 12.5,
        "ceiling_label": "RND 4KiB 0/100 QD1"}
    assert ceiling.judge(point(79_000, 4096, lat=12.6), [SMALL, LARGE, FLOOR], 0.8, 0.25,
                         oio=1) is None
    # a point at OIO 128 is not judged on the QD 1 floor
    assert ceiling.judge(qd1, [SMALL, LARGE, FLOOR], 0.8, 0.25, oio=128) is None


def test_an_emulated_ssd_far_below_is_not_and_nothing_without_a_ceiling():
    assert ceiling.judge(point(9000, 4096, lat=3500.0), [SMALL, LARGE, FLOOR], 0.8, 0.25,
                         oio=1) is None
    assert ceiling.judge(point(1e9, 4096), [], 0.8, 0.25) is None


def declaration(points, tracked, tc=4, qd=32):
    return RoundTest(test="t", title="T", clause="c", parameters={}, points=tuple(points),
                     tracking={p.label: p for p in points if p.index in tracked},
                     value_key="iops",
                     job=lambda p: random_job(f"p{p.index:02d}", p.rw_mix.read_pct,
                                              p.block_size, qd, tc, 1, 1 << 30),
                     fields=fields.basic, thread_count=tc, queue_depth=qd,
                     wipc_block_size=None)


def test_heaviest_points_smallest_and_largest_size_prefer_tracking():
    read, write = RwMix(100), RwMix(0)
    pts = [TestPoint(0, read, 512, "N/A here"), TestPoint(1, read, 4096),
           TestPoint(2, read, 1 << 20), TestPoint(3, write, 4096), TestPoint(4, write, 1 << 20)]
    shapes = ceiling.heaviest(declaration(pts, tracked={3}))
    # 512 B is N/A: the smallest measured size is 4 KiB; its tracking point (0/100) is
    # chosen over the first; at 1 MiB no tracking point: the first in loop order
    assert [(s.label, s.oio) for s in shapes] == [("RND 4KiB 0/100", 128),
                                                  ("RND 1024KiB 100/0", 128)]


def test_latency_test_adds_the_qd1_4k_floor_and_dirth_its_highest_oio():
    write = RwMix(0)
    lat = [TestPoint(0, write, 8192), TestPoint(1, write, 4096), TestPoint(2, write, 512)]
    assert [s.label for s in ceiling.heaviest(declaration(lat, {1}, tc=1, qd=1))] == [
        "RND 0.5KiB 0/100", "RND 8KiB 0/100", "RND 4KiB 0/100"]
    grid = [TestPoint(0, RwMix(65), 4096, thread_count=tc, queue_depth=qd)
            for tc, qd in ((1, 1), (32, 32), (4, 8))]
    grid = [TestPoint(i, p.rw_mix, 4096, thread_count=p.thread_count,
                      queue_depth=p.queue_depth) for i, p in enumerate(grid)]
    assert [(s.oio, s.label) for s in ceiling.heaviest(declaration(grid, set()))] == [
        (1024, "RND 4KiB 65/35 TC32/QD32"), (1, "RND 4KiB 65/35 TC1/QD1")]


def test_fitted_job_keeps_the_shape_and_fits_the_ram_device():
    job = sequential_job("p01", 0, 1 << 20, 32, 4, 60, 100 << 30)
    fit = ceiling.fitted(job, 1 << 30, 5, "c00")
    assert (fit.rw, fit.block_size, fit.iodepth, fit.numjobs) == ("write", 1 << 20, 32, 4)
    assert (fit.runtime, fit.size, fit.offset_increment) == (5, 256 << 20, 256 << 20)
    rnd = ceiling.fitted(random_job("p00", 65, 4096, 32, 4, 60, 100 << 30), 1 << 30, 1, "c01")
    assert (rnd.size, rnd.rwmixread, rnd.runtime, rnd.name) == (None, 65, 1, "c01")
    assert ceiling.seconds_for(60) == 5 and ceiling.seconds_for(1) == 1


def tree(tmp_path, nullb: bool, shm_fs: str | None):
    if nullb:
        (tmp_path / ramdev.NULLB.lstrip("/")).mkdir(parents=True)
    (tmp_path / "proc").mkdir()
    lines = ["proc /proc proc rw 0 0", "/dev/vda1 / ext4 rw 0 0"]
    if shm_fs:
        lines.append(f"shm /dev/shm {shm_fs} rw,nosuid,nodev 0 0")
    (tmp_path / "proc" / "mounts").write_text("\n".join(lines) + "\n")
    return str(tmp_path)


@pytest.mark.parametrize("nullb, shm, kind", [
    (True, "tmpfs", ramdev.NULL_BLK), (True, None, ramdev.NULL_BLK),
    (False, "tmpfs", ramdev.TMPFS_LOOP), (False, "ext4", None), (False, None, None)])
def test_ram_device_choice_on_constructed_trees(tmp_path, nullb, shm, kind):
    found, why = ramdev.choose(LOCAL, tree(tmp_path, nullb, shm))
    assert found == kind
    if kind is None:
        assert "no RAM-backed block device" in why


@pytest.mark.parametrize("host, pid, digest", [
    ("lab7", 0, False), ("lab7", 1234567, True), ("rack12-node07.example.com", 0, True)])
def test_the_tag_is_host_and_namespace_or_their_digest_when_too_long(monkeypatch, host, pid,
                                                                    digest):
    """A name null_blk can hold (DISK_NAME characters) carries the host name and the pid
    namespace; a longer one the first 8 hex digits of their SHA-1 (ramdev._host_marks)."""
    monkeypatch.setattr(ramdev, "socket", SimpleNamespace(gethostname=lambda: host))
    monkeypatch.setattr(ramdev, "liveness", SimpleNamespace(namespace_mark=lambda: "4026531836"))
    mark = f"{host}.4026531836"
    short = hashlib.sha1(mark.encode()).hexdigest()[:8]
    expected = f"pts-ceiling-{short}-{pid}" if digest else f"pts-ceiling-{mark}-{pid}"
    assert ramdev.tag(pid) == expected
    # the case is what it says: the name with the host would (not) pass null_blk's limit
    assert (len(f"pts-ceiling-{mark}-{pid}") > ramdev.DISK_NAME) == digest
    assert len(expected) <= ramdev.DISK_NAME


def test_only_our_leftovers_of_dead_processes():
    """Ours: this host name AND this pid namespace (a suite in a container on this host
    names its devices with its own pids: pid 111 there is not pid 111 here); made before
    the namespace was in the name: not ours either."""
    mine = ramdev.tag(0)[:-1]        # pts-ceiling-<this host>.<pid namespace>-, or its digest
    host = socket.gethostname()
    names = [f"{mine}111.img", f"{mine}222.img", f"{mine}{os.getpid()}.img",
             "pts-ceiling-otherhost-111.img", "pts-test-1234.img", f"{mine}333",
             f"pts-ceiling-{host}.1-111.img", f"pts-ceiling-{host}-111.img"]
    alive = {222, os.getpid()}.__contains__
    assert ramdev.leftovers(names, alive) == [f"{mine}111.img", f"{mine}333"]


class LoopHost:
    """A host whose `losetup -a` lists loop devices; what the clean-up ran is kept."""
    name = "this host"

    def __init__(self, listed: str, bound: dict[str, str]):
        self.listed, self.bound, self.ran = listed, bound, []

    def run(self, argv, log_file=None, check=True, timeout=None):
        self.ran.append(argv)
        return type("R", (), {"stdout": self.listed if argv == ["losetup", "-a"] else ""})

    def listdir(self, path):
        return []

    def read(self, path, default=None):
        return self.bound.get(path, default)


def test_a_loop_device_left_bound_to_a_removed_file_is_detached():
    """A run that removed its file but not its loop device (or was killed between the two):
    the kernel lists the file as '(deleted)'; the next run detaches it, only if it is ours
    and its process is gone."""
    dead = ramdev.tag(0)[:-1] + "111.img"
    other = "pts-ceiling-otherhost-111.img"
    host = LoopHost(
        f"/dev/loop7: [0027]:1314 (/dev/shm/{dead} (deleted))\n"
        f"/dev/loop8: [0027]:1315 (/dev/shm/{other} (deleted))\n"
        "/dev/loop9: [0027]:1316 (/dev/shm/someone-elses.img)\n",
        {"/sys/block/loop7/loop/backing_file": f"/dev/shm/{dead} (deleted)",
         "/sys/block/loop8/loop/backing_file": f"/dev/shm/{other} (deleted)"})
    found = ramdev.clean_leftovers(host)
    assert found == [f"/dev/loop7 (/dev/shm/{dead}, removed)"]
    assert ["losetup", "-d", "/dev/loop7"] in host.ran
    assert not [a for a in host.ran if a[:2] == ["losetup", "-d"] and a[2] != "/dev/loop7"]


MIB = 1 << 20


@pytest.mark.parametrize("kind, mem, shm, size", [
    # a large host: the full 1 GiB
    (ramdev.TMPFS_LOOP, 24 << 30, 23 << 30, ramdev.SIZE),
    # the QEMU guest (-m 2G, /dev/shm half of it): 1/2 of 990 MiB, in 4 MiB blocks: 492 MiB
    (ramdev.TMPFS_LOOP, 1600 * MIB, 990 * MIB, 492 * MIB),
    # null_blk does not live in /dev/shm: only MemAvailable counts (1600 / 2 = 800 MiB)
    (ramdev.NULL_BLK, 1600 * MIB, 100 * MIB, 800 * MIB),
    (ramdev.NULL_BLK, 514 * MIB, None, 256 * MIB),        # 257 -> 256 MiB: the floor itself
    (ramdev.TMPFS_LOOP, None, None, ramdev.SIZE)])        # nothing known: as before
def test_the_ram_device_is_sized_to_what_the_host_has_free(kind, mem, shm, size):
    got, why = ramdev.fit(kind, mem, shm)
    assert got == size
    assert why.startswith(f"{size // MIB:,} MiB")
    assert (", not 1,024 MiB" in why) == (size < ramdev.SIZE)


@pytest.mark.parametrize("kind, mem, shm, names", [
    (ramdev.TMPFS_LOOP, 8 << 30, 400 * MIB, "free in /dev/shm 400 MiB"),
    (ramdev.NULL_BLK, 500 * MIB, 8 << 30, "MemAvailable 500 MiB")])
def test_too_little_free_memory_is_refused_with_the_figures(kind, mem, shm, names):
    with pytest.raises(ramdev.RamDeviceError) as err:
        ramdev.fit(kind, mem, shm)
    assert names in str(err.value) and "at least 256 MiB" in str(err.value)
    assert "--host-ceiling off" in str(err.value)


class TreeHost:
    """A root host over a constructed tree (/proc/meminfo, /dev/shm's `df -Pk`) that keeps
    what `make` ran and answers each command as the tools would."""
    remote, name = "constructed", "constructed host"

    def __init__(self, root, shm_kib: int):
        self.root, self.shm_kib, self.ran = root, shm_kib, []

    def run(self, argv, log_file=None, check=True, timeout=None):
        self.ran.append(argv)
        out = {"id": "0\n", "losetup": "/dev/loop5\n",
               "df": f"Filesystem 1024-blocks Used Available Capacity Mounted on\n"
                     f"tmpfs 9999999 0 {self.shm_kib} 0% /dev/shm\n"}.get(argv[0], "")
        return type("R", (), {"stdout": out})

    def read(self, path, default=""):
        return LOCAL.read(self.root + path if not path.startswith(self.root) else path, default)

    def realpath(self, path):
        return LOCAL.realpath(self.root + path).removeprefix(self.root)

    def exists(self, path):
        return LOCAL.exists(path)


def meminfo(tmp_path, root, mem_kib):
    (tmp_path / "proc" / "meminfo").write_text(
        f"MemTotal:        2000000 kB\nMemFree:          900000 kB\n"
        f"MemAvailable:    {mem_kib} kB\n")


def test_make_sizes_the_loop_device_and_refuses_before_writing(tmp_path):
    root = tree(tmp_path, False, "tmpfs")
    meminfo(tmp_path, root, 1600 * 1024)                  # 1600 MiB available
    host = TreeHost(root, 990 * 1024)                     # 990 MiB free in /dev/shm
    dev = ramdev.make(host, root=root)
    assert (dev.kind, dev.path, dev.size) == (ramdev.TMPFS_LOOP, "/dev/loop5", 492 * MIB)
    (dd,) = [a for a in host.ran if a[0] == "dd"]
    assert f"bs={ramdev.FILL_BLOCK}" in dd and f"count={492 // 4}" in dd
    assert "492 MiB, 1/2 of the least free (MemAvailable 1,600 MiB, free in /dev/shm 990 MiB)" \
        in ramdev.describe(dev)
    small = TreeHost(root, 300 * 1024)
    with pytest.raises(ramdev.RamDeviceError, match="free in /dev/shm 300 MiB"):
        ramdev.make(small, root=root)
    assert [a[0] for a in small.ran] == ["id", "df"]      # no dd, no losetup: nothing written


def nullb_disk(tmp_path, disk: str, index: int = 3, major: int = 251) -> None:
    """The kernel's view of our null_blk device in a constructed tree: configfs `index`,
    null_blk's major in /proc/devices and /sys/dev/block/MAJ:MIN linking to disk `disk`."""
    (tmp_path / ramdev.NULLB.lstrip("/") / ramdev.tag()).mkdir(parents=True)
    (tmp_path / ramdev.NULLB.lstrip("/") / ramdev.tag() / "index").write_text(f"{index}\n")
    (tmp_path / "proc" / "devices").write_text(
        f"Character devices:\n  1 mem\n{major} nullb_char\n\nBlock devices:\n  7 loop\n"
        f"{major} nullb\n259 blkext\n")
    (tmp_path / "sys" / "devices" / "virtual" / "block" / disk).mkdir(parents=True)
    (tmp_path / "sys" / "dev" / "block").mkdir(parents=True)
    (tmp_path / "sys" / "dev" / "block" / f"{major}:{index}").symlink_to(
        f"../../devices/virtual/block/{disk}")


def test_make_sizes_null_blk_to_memavailable_in_mib(tmp_path):
    root = tree(tmp_path, True, None)
    meminfo(tmp_path, root, 700 * 1024)                   # 700 MiB -> 350 -> 348 MiB
    nullb_disk(tmp_path, ramdev.tag())                    # Linux >= 6.0: the folder's name
    host = TreeHost(root, 0)                              # /dev/shm does not count
    dev = ramdev.make(host, root=root)
    assert (dev.kind, dev.size) == (ramdev.NULL_BLK, 348 * MIB)
    size_write = next(a for a in host.ran if a[0] == "sh" and a[-1].endswith("/size"))
    assert size_write[-2] == "348"                         # configfs size is in MiB
    assert "df" not in [a[0] for a in host.ran]
    # dd only once the node is there (devtmpfs makes it after power=1), never making a file
    wait = next(i for i, a in enumerate(host.ran) if a[0] == "sh" and "-b" in a[2])
    assert host.ran[wait][4:] == [f"/dev/{ramdev.tag()}"]
    dd = next(i for i, a in enumerate(host.ran) if a[0] == "dd")
    assert wait < dd and "conv=nocreat" in host.ran[dd] and dev.path == f"/dev/{ramdev.tag()}"
    assert f"of=/dev/{ramdev.tag()}" in host.ran[dd]


LONG_HOST = "ci-runner-" + "x" * 40 + ".lab.example.com"      # 66 characters


@pytest.mark.parametrize("disk", ["nullb3", None])     # before 6.0; 6.0+: the folder cut to 31
def test_a_long_host_name_makes_a_null_blk_disk_read_back_from_the_kernel(
        tmp_path, monkeypatch, disk):
    """A host name of 66 characters: `pts-ceiling-<host>-<pid>` would be cut to 31 by null_blk
    (Linux >= 6.0) and the guessed /dev/<folder> never appear. The folder's name fits in
    31 (a digest of the host name), and the disk is the one the kernel links to our index."""
    monkeypatch.setattr(ramdev.socket, "gethostname", lambda: LONG_HOST)
    folder = ramdev.tag()
    assert len(folder) <= ramdev.DISK_NAME == 31 and LONG_HOST not in folder
    assert len(ramdev.tag(4_194_304)) <= 31                 # the largest pid (pid_max 2^22)
    disk = disk or folder[:31]
    root = tree(tmp_path, True, None)
    meminfo(tmp_path, root, 700 * 1024)
    nullb_disk(tmp_path, disk, index=12)
    host = TreeHost(root, 0)
    dev = ramdev.make(host, root=root)
    assert (dev.path, dev.config) == (f"/dev/{disk}", f"{ramdev.NULLB}/{folder}")
    assert ["mkdir", f"{ramdev.NULLB}/{folder}"] in host.ran
    assert f"of=/dev/{disk}" in next(a for a in host.ran if a[0] == "dd")
    # its leftovers are still ours (digest) and so are names made with the whole host name
    names = [folder.rsplit("-", 1)[0] + "-111",
             f"pts-ceiling-{LONG_HOST}.{liveness.namespace_mark()}-222.img",
             "pts-ceiling-0badc0de-333"]
    assert ramdev.leftovers(names, lambda pid: False) == names[:2]


def test_a_disk_that_cannot_be_read_back_removes_the_folder(tmp_path):
    root = tree(tmp_path, True, None)
    meminfo(tmp_path, root, 700 * 1024)
    nullb_disk(tmp_path, "nullb3", index=3)
    (tmp_path / ramdev.NULLB.lstrip("/") / ramdev.tag() / "index").write_text("4\n")
    host = TreeHost(root, 0)
    with pytest.raises(ramdev.RamDeviceError, match="/sys/dev/block/251:4 is no link to a disk"):
        ramdev.make(host, root=root)
    assert "dd" not in [a[0] for a in host.ran]
    assert host.ran[-1] == ["rmdir", f"{ramdev.NULLB}/{ramdev.tag()}"]
