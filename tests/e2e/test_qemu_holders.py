"""Holders for real (issue 23 §2), in the QEMU guest's one boot (tests/support/qemu_guest.py;
fixture `guest` in conftest.py), after the SATA and SCSI disks' own tests: the guest builds
an MD RAID1 over two partitions of the SATA disk (mdadm), an LVM logical volume on its third
partition (lvm) and a dm-linear mapping over the whole SCSI disk (dmsetup), with the same
2 MiB of random data on each. The suite, pointed at both disks with --destructive in one
session (two --device), must refuse the whole session before it writes anything, naming
every holder of each disk as the kernel's sysfs shows it, and the data on the three holders
must read back unchanged.

This machine has neither device-mapper nor MD (no kernel modules); the guest's kernel has
both. A dm-crypt mapping and a multipath map cannot be built in the guest (no crypto module
autoload, no multipathd): those stay on the constructed sysfs tree of
tests/e2e/test_device_safety.py::test_holders_refused.
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.qemu, pytest.mark.slow,
              pytest.mark.needs("root", "qemu-system-x86_64", "busybox", "cpio", "depmod",
                                "/dev/fuse", "mfusepy", "sfdisk", "mdadm", "lvm", "dmsetup")]


def held_by(guest) -> dict[str, list[str]]:
    """Per partition or disk, its holders as the guest's /sys/class/block/<name>/holders."""
    rows = (line.split() for line in (guest.out / "holders-sysfs").read_text().splitlines())
    return {row[0]: row[1:] for row in rows}


def kinds(guest) -> dict[str, list[str]]:
    """dm-N: [dm name, dm uuid]; mdN: [level], from the guest's sysfs."""
    rows = (line.split() for line in (guest.out / "holders-kinds").read_text().splitlines())
    return {row[0]: row[1:] for row in rows if len(row) > 1}


def test_the_guest_built_md_lvm_and_dm_linear(guest):
    assert guest.rc("holders-setup") == 0, guest.text("holders-setup")
    sata, scsi = (d.removeprefix("/dev/") for d in (guest.disks()["sata"], guest.disks()["scsi"]))
    found, what = held_by(guest), kinds(guest)
    assert found[f"{sata}1"] == found[f"{sata}2"] == ["md0"]
    assert what["md0"] == ["raid1"]
    (lv,), (linear,) = found[f"{sata}3"], found[scsi]
    assert what[lv][0] == "ptsvg-data" and what[lv][1].startswith("LVM-")
    assert what[linear] == ["ptslinear"]              # dmsetup create: no uuid


def test_the_suite_refuses_each_disk_naming_its_holders(guest):
    sata, scsi = (d.removeprefix("/dev/") for d in (guest.disks()["sata"], guest.disks()["scsi"]))
    found = held_by(guest)
    (lv,), (linear,) = found[f"{sata}3"], found[scsi]
    expected = {
        sata: [f"/dev/{sata}1 is held by md0 (MD RAID1 array /dev/md0)",
               f"/dev/{sata}2 is held by md0 (MD RAID1 array /dev/md0)",
               f"/dev/{sata}3 is held by {lv} (LVM logical volume /dev/mapper/ptsvg-data)"],
        scsi: [f"/dev/{scsi} is held by {linear} (device-mapper mapping "
               "/dev/mapper/ptslinear)"]}
    out = guest.text("holders")
    assert guest.rc("holders") == 4, out[-3000:]          # a usage error: nothing ran
    assert "refusing the whole session: " in out and \
        "Nothing was written to any of the 2 devices." in out, out[-3000:]
    said = out.split("refusing the whole session: ", 1)[1]
    for disk, reasons in expected.items():
        # each disk's reasons in its own part of the refusal: "[sdX] refusing to write ..."
        part = said.split(f"[{disk}] refusing to write to /dev/{disk}: ", 1)[1].split("; [")[0]
        for reason in reasons:
            assert reason in part, (disk, reason, out[-3000:])
    assert not (guest.out.parent / "held").exists()      # no run folder: nothing written


def test_the_data_on_each_holder_is_intact(guest):
    written = (guest.out / "held-data.sha256").read_text().strip()
    before = (guest.out / "held-before.sha256").read_text().split()
    after = (guest.out / "held-after.sha256").read_text().split()
    assert before[1::2] == ["/dev/md0", "/dev/mapper/ptsvg-data", "/dev/mapper/ptslinear"]
    assert before[0::2] == [written] * 3                 # what was written, read back
    assert after == before
