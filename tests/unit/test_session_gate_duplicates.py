"""A several-device session refuses one drive given twice under two names (its node and a
/dev/disk/by-id link: the same device number), before anything is written or locked for the
second name (pts.session.gate.check_all). The devices are records from a fake resolver;
the lock is the real one, in a folder of the test's own."""

from __future__ import annotations

import dataclasses
import functools

from pts.device.identity import BlockDevice, Identity
from pts.device.lock import DeviceLock
from pts.session import gate
from pts.session.devices import labels

NVME = BlockDevice("/dev/nvme9n1", "/dev/nvme9n1", "nvme9n1", (259, 99), 1 << 30, 512, 512,
                   "nvme", False, Identity("QEMU NVMe Ctrl", "deadbeef", "7.2.22",
                                           "nvme id-ctrl"))
BY_ID = "/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_deadbeef"      # a udev link to /dev/nvme9n1
OTHER = dataclasses.replace(NVME, path="/dev/nvme8n1", given="/dev/nvme8n1", kname="nvme8n1",
                            devno=(259, 98))


def resolve(given: str) -> BlockDevice:
    """As pts.device.identity.resolve: the link resolves to the node it points to."""
    dev = OTHER if given == OTHER.given else NVME
    return dataclasses.replace(dev, given=given)


def test_one_drive_given_twice_is_refused_before_its_second_name_is_locked(monkeypatch,
                                                                          tmp_path):
    gated = []
    monkeypatch.setattr(gate.safety, "check_writable",
                        lambda dev, destructive: gated.append(dev.given))
    monkeypatch.setattr(gate, "DeviceLock", functools.partial(DeviceLock, lock_dir=tmp_path))
    givens = [NVME.given, OTHER.given, BY_ID]
    checked = gate.check_all(givens, labels(givens), destructive=True,
                             check_capacity=lambda dev: None, resolver=resolve)
    try:
        assert [c.accepted for c in checked] == [True, True, False]
        dup = checked[2]
        assert dup.refused == (f"{BY_ID} is the same device as /dev/nvme9n1 (/dev/nvme9n1), "
                               "given twice: give each device once")
        assert dup.device is None and dup.lock is None          # nothing taken for it
        # one lock per drive: the first name's; the other drive has its own
        assert sorted(p.name for p in tmp_path.iterdir()) == ["dev-259-98.lock",
                                                              "dev-259-99.lock"]
        assert checked[0].lock.path.name == "dev-259-99.lock"
        text = gate.refusal(checked)
        assert text.startswith("refusing the whole session: [nvme-QEMU_NVMe_Ctrl_deadbeef] "
                               f"{BY_ID} is the same device as /dev/nvme9n1")
        assert "Nothing was written to any of the 3 devices" in text
        assert "leave out the refused device(s)" in text
    finally:
        gate.release_all(checked)
    assert sorted(gated) == sorted(givens)     # every name passed the safety gate first
