"""Device resolution and the safety gate, on loop devices made for the purpose.

Every refusal is checked to have written nothing: the files on a mounted filesystem and a
checksum of the raw device are compared before and after.
"""

import hashlib
import os
import signal
import subprocess
import sys
import time

import pytest

from pts.device.identity import DeviceError, resolve
from pts.device.lock import diskseq
from pts.device.safety import UnsafeDeviceError, _disks_under, check_writable, in_use_reasons
from pts.tools.commands import on_parent_death
from tests.support.helpers import loop_device
from tests.support.ptsrun import run_suite

pytestmark = pytest.mark.needs("root", "losetup")


def sha(path, limit=None):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        h.update(fh.read(limit) if limit else fh.read())
    return h.hexdigest()


@pytest.fixture
def mounted_fs(make_loop, tmp_path):
    dev = make_loop(64 << 20)
    subprocess.run(["mkfs.ext4", "-F", "-q", dev], check=True, capture_output=True)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", dev, str(mnt)], check=True)
    (mnt / "precious.txt").write_text("do not destroy\n" * 1000)
    os.sync()
    try:
        yield dev, mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


@pytest.mark.needs("mkfs.ext4", "fio")
def test_mounted_filesystem_refused_and_intact(mounted_fs, tmp_path):
    dev, mnt = mounted_fs
    before = sha(mnt / "precious.txt")
    with pytest.raises(UnsafeDeviceError, match=f"{dev} is mounted on {mnt}"):
        check_writable(resolve(dev), destructive=True)
    p = run_suite("--device", dev, "--destructive", "--purge", "trim", "--point-seconds", "1",
                  "--reports-dir", str(tmp_path / "reports"), timeout=300)
    assert p.returncode != 0
    assert f"refusing to write to {dev}: {dev} is mounted on {mnt}" in p.stderr + p.stdout
    assert "Nothing was written" in p.stderr + p.stdout
    assert not (tmp_path / "reports").exists()
    assert sha(mnt / "precious.txt") == before


def test_symlink_to_mounted_device_refused(mounted_fs, tmp_path):
    dev, mnt = mounted_fs
    link = tmp_path / "by-id-link"
    link.symlink_to(dev)
    resolved = resolve(str(link))
    assert resolved.path == dev and resolved.given == str(link)
    with pytest.raises(UnsafeDeviceError, match="is mounted on"):
        check_writable(resolved, destructive=True)


def wait_for_node(node: str, timeout: float = 10.0) -> None:
    """Wait for the kernel to add partition `node` (/sys) and devtmpfs to create its /dev
    node; no udev needed (a container or a minimal host has no udevd to settle)."""
    sys_entry = f"/sys/class/block/{os.path.basename(node)}"
    deadline = time.monotonic() + timeout
    while not (os.path.exists(sys_entry) and os.path.exists(node)):
        if time.monotonic() > deadline:
            pytest.fail(f"{node} did not appear within {timeout:.0f} s ({sys_entry} "
                        f"{'exists' if os.path.exists(sys_entry) else 'missing'}): /dev "
                        "must be devtmpfs for partition nodes to appear without udev")
        time.sleep(0.05)


@pytest.mark.needs("sfdisk", "mkfs.ext4", "partx", "mount", "umount")
def test_partition_rejected_and_mounted_partition_refused(make_loop, tmp_path):
    dev = make_loop(64 << 20, partitioned=True)
    subprocess.run(["sfdisk", "-q", dev], input="label: dos\n,\n", text=True, check=True)
    subprocess.run(["partx", "-u", dev], check=False)
    part = dev + "p1"
    wait_for_node(part)
    with pytest.raises(DeviceError, match=f"{part} is partition 1 of {dev}; PTS tests a whole "
                                          f"device: give {dev}"):
        resolve(part)
    subprocess.run(["mkfs.ext4", "-F", "-q", part], check=True, capture_output=True)
    mnt = tmp_path / "m"
    mnt.mkdir()
    # read-only, so that the filesystem itself writes nothing and a checksum can compare
    subprocess.run(["mount", "-o", "ro,noload", part, str(mnt)], check=True)
    try:
        before = sha(dev)
        reasons = in_use_reasons(resolve(dev))
        assert f"{dev} has partition {part} mounted on {mnt}" in reasons
        with pytest.raises(UnsafeDeviceError):
            check_writable(resolve(dev), destructive=True)
    finally:
        subprocess.run(["umount", str(mnt)], check=True)
    assert sha(dev) == before


@pytest.mark.needs("mkswap", "swapon", "swapoff")
def test_active_swap_refused(make_loop):
    dev = make_loop(32 << 20)
    subprocess.run(["mkswap", "-q", dev], check=True, capture_output=True)
    subprocess.run(["swapon", dev], check=True)
    try:
        # the swap header page only: once swapon'd, the kernel may page out to the rest of
        # it at any time (this machine has no other swap; seen under load in the fast tier)
        before = sha(dev, 4096)
        with pytest.raises(UnsafeDeviceError, match=f"{dev} is an active swap device"):
            check_writable(resolve(dev), destructive=True)
    finally:
        subprocess.run(["swapoff", dev], check=True)
    assert sha(dev, 4096) == before


def test_device_open_by_another_process_refused(make_loop):
    """A process that keeps the device open (here `sleep` with it as stdin; in the field a
    fio a killed run left) would disturb the measurement: named, with its pid."""
    dev = make_loop()
    with open(dev, "rb") as node:
        holder = subprocess.Popen(["sleep", "60"], stdin=node)
    try:
        with pytest.raises(UnsafeDeviceError,
                           match=f"{dev} is open by sleep \\(pid {holder.pid}: sleep 60\\)"):
            check_writable(resolve(dev), destructive=True)
    finally:
        holder.kill()
        holder.wait()
    check_writable(resolve(dev), destructive=True)     # released: allowed again


@pytest.mark.needs("root-on-block-device")
def test_root_filesystem_device_is_refused_by_resolution_only():
    """Never writes: resolves the disk under / and asks the gate."""
    root = os.stat("/").st_dev
    disks = _disks_under((os.major(root), os.minor(root)))
    assert disks, "/ is on a block device (checked by the needs marker) but has no disk"
    major, minor = sorted(disks)[0]
    name = os.path.basename(os.path.realpath(f"/sys/dev/block/{major}:{minor}"))
    dev = resolve(f"/dev/{name}")
    assert f"/dev/{name} backs the root filesystem" in in_use_reasons(dev)
    with pytest.raises(UnsafeDeviceError, match="backs the root filesystem"):
        check_writable(dev, destructive=True)


@pytest.mark.needs("root", "losetup")
def test_without_destructive_nothing_is_written_and_header_shows_device(make_loop, tmp_path):
    dev = make_loop()
    p = run_suite("-rs", "--device", dev, "--reports-dir", str(tmp_path / "r"))
    assert p.returncode == 0
    assert "add --destructive to allow it" in p.stdout
    assert f"snia-pts device: {dev}" in p.stdout and "model='Linux loop device'" in p.stdout
    assert "snia-pts settings: spec pts-2.0.2-enterprise, point 60 s, max rounds 25" in p.stdout
    assert not (tmp_path / "r").exists()


def test_no_destructive_no_write(make_loop):
    dev = make_loop()
    with pytest.raises(UnsafeDeviceError, match="without --destructive"):
        check_writable(resolve(dev), destructive=False)
    check_writable(resolve(dev), destructive=True)     # free loop device + opt-in: allowed


@pytest.mark.needs("blockdev")
def test_read_only_device_refused(make_loop):
    dev = make_loop()
    subprocess.run(["blockdev", "--setro", dev], check=True)
    try:
        with pytest.raises(UnsafeDeviceError, match="is read-only"):
            check_writable(resolve(dev), destructive=True)
    finally:
        # The read-only flag stays on the loop node after detach: clear it for the next user.
        subprocess.run(["blockdev", "--setrw", dev], check=True)


def test_identity_and_geometry_from_sysfs(make_loop):
    dev = resolve(make_loop(64 << 20, sector=4096))
    assert (dev.capacity_bytes, dev.logical_sector, dev.transport) == (64 << 20, 4096, "loop")
    assert dev.identity.model == "Linux loop device" and dev.identity.serial.startswith("LOOP-")


@pytest.mark.parametrize("path,needle", [
    ("/nonexistent/dev", "no such device"),
    ("/etc/hostname", "is a regular file, not a block device; to test a file, attach it"),
    ("/dev/null", "is a character device"),
    ("/tmp", "is a directory"),
])
def test_not_a_block_device(path, needle):
    with pytest.raises(DeviceError, match=needle):
        resolve(path)


@pytest.mark.needs("mkfs.ext4")
def test_unused_filesystem_is_listed_before_it_is_destroyed(make_loop, tmp_path):
    dev = make_loop(64 << 20)
    subprocess.run(["mkfs.ext4", "-F", "-q", "-L", "oldfs", dev], check=True,
                   capture_output=True)
    p = run_suite("--device", dev, "--destructive", "--co")
    assert p.returncode == 0, p.stderr
    assert "snia-pts WILL DESTROY: ext4 at offset 0x438 (label oldfs)" in p.stdout


def test_second_pts_process_on_the_same_device_is_refused(make_loop, tmp_path):
    from pts.device.lock import DeviceLock

    dev = resolve(make_loop())
    held = DeviceLock(dev, tmp_path).acquire()
    try:
        with pytest.raises(UnsafeDeviceError, match=f"already under test by another snia-pts "
                                                    f"process \\(pid {os.getpid()}"):
            DeviceLock(dev, tmp_path).acquire()
    finally:
        held.release()
    DeviceLock(dev, tmp_path).acquire().release()      # free again once released


@pytest.mark.slow     # re-attaches a number it freed: no other worker may take it in between
def test_a_new_disk_with_a_vanished_ones_number_is_not_refused(tmp_path):
    """A run on a loop device that was detached under it still holds its lock; the next loop
    device given the same number is another disk (a new diskseq): not "already under test".
    Without the sequence number in the key it was refused (two runs at once in CI)."""
    from pts.device.lock import DeviceLock

    with loop_device() as first:
        dev = resolve(first)
        seq = diskseq(dev)
        held = DeviceLock(dev, tmp_path).acquire()
    try:                                   # detached, its lock still held: re-attach the number
        backing = tmp_path / "second.img"
        backing.write_bytes(b"")
        os.truncate(backing, 64 << 20)
        subprocess.run(["losetup", first, str(backing)], check=True)
        try:
            again = resolve(first)
            assert again.devno == dev.devno and diskseq(again) != seq != ""
            DeviceLock(again, tmp_path).acquire().release()
        finally:
            subprocess.run(["losetup", "-d", first], check=True)
    finally:
        held.release()


def test_lock_is_held_by_a_running_suite(make_loop, tmp_path):
    # the holder keeps the lock until it is killed below or with this process (600 s: only
    # a bound), not 60 s: a suite's start-up on a loaded host can take tens of seconds, and
    # a lock let go before the suite looked would have let it run its tests on the device
    dev = make_loop()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pts.device.identity import resolve; "
         "from pts.device.lock import DeviceLock; DeviceLock(resolve(sys.argv[1])).acquire(); "
         "print('locked', flush=True); time.sleep(600)", dev],
        stdout=subprocess.PIPE, text=True, preexec_fn=on_parent_death(signal.SIGKILL))
    try:
        assert holder.stdout.readline().strip() == "locked"
        p = run_suite("--device", dev, "--destructive")
        assert p.returncode == 4 and "already under test by another snia-pts process" in p.stderr
    finally:
        holder.kill()
        holder.wait()


def test_device_too_small_for_the_spec(make_loop):
    dev = make_loop(2 << 20)
    p = run_suite("--device", dev, "--destructive")
    assert p.returncode == 4
    assert "is too small: its ActiveRange is 2097152 bytes, the spec needs at least 4194304 " \
           "bytes (4 threads of 1024 KiB I/O)" in p.stderr


def test_holders_refused(tmp_path, monkeypatch):
    """Holders the QEMU guest cannot build (tests/e2e/test_qemu_holders.py builds LVM, MD
    RAID1 and dm-linear for real): a dm-crypt mapping and a multipath map, named by their
    device-mapper UUID prefix, and a holder whose sysfs says nothing. On a constructed sysfs
    tree with the kernel's layout (/sys/block/<disk>/holders/<dm>/dm/{name,uuid},
    /sys/block/<disk>/<part>/holders/<dm>)."""
    import pts.device.identity as device_mod
    from pts.device.identity import BlockDevice, Identity

    def holder(parent, name, dm_name=None, uuid=""):
        node = parent / "holders" / name
        node.mkdir(parents=True)
        if dm_name:
            (node / "dm").mkdir()
            (node / "dm" / "name").write_text(dm_name + "\n")
            (node / "dm" / "uuid").write_text(uuid + "\n")

    disk = tmp_path / "block" / "sdz"
    holder(disk, "dm-0", "crypt0", "CRYPT-LUKS2-0c5e0d6bd9f44bb6a1c1f5e0b2f3a4c5-crypt0")
    for n, (name, dm_name, uuid) in enumerate((("dm-3", "mpatha", "mpath-36001405aa"),
                                               ("md127", None, "")), 1):
        part = disk / f"sdz{n}"
        holder(part, name, dm_name, uuid)
        (part / "partition").write_text(f"{n}\n")
        (part / "dev").write_text(f"8:{240 + n}\n")
    monkeypatch.setattr(device_mod, "SYS", tmp_path)
    dev = BlockDevice(path="/dev/sdz", given="/dev/sdz", kname="sdz", devno=(8, 240),
                      capacity_bytes=1 << 30, logical_sector=512, physical_sector=512,
                      transport="scsi", read_only=False,
                      identity=Identity("m", "s", "f", "test"))
    reasons = in_use_reasons(dev)
    assert "/dev/sdz is held by dm-0 (dm-crypt mapping /dev/mapper/crypt0)" in reasons
    assert "/dev/sdz1 is held by dm-3 (multipath map /dev/mapper/mpatha)" in reasons
    assert "/dev/sdz2 is held by md127 (LVM, MD RAID, dm-crypt or multipath use it)" in reasons
    with pytest.raises(UnsafeDeviceError, match="held by dm-0"):
        check_writable(dev, destructive=True)
