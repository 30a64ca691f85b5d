"""A several-device session refuses one drive given twice under two names, before anything
is written or locked for the second name (pts.session.gate.check_all). Real loop devices and
the real resolver (pts.device.identity.resolve, as the session calls it): the same device
given as its node again, as a symlink to it (a /dev/disk/by-* link is one) and as another
device node of the same number; the lock is the real one, in a folder of the test's own.
Then the session as a user starts it: `pytest pts/ --device A --device LINK --destructive`
stops with the usage error before any child run (about 3 s)."""

from __future__ import annotations

import functools
import os
import stat

import pytest

from pts.device.lock import DeviceLock
from pts.session import gate
from pts.session.devices import labels
from tests.support.ptsrun import run_suite

pytestmark = pytest.mark.needs("root", "losetup")

SIZE = 8 << 20


def other_names(dev: str, folder) -> tuple[str, str]:
    """A symlink to `dev` (as udev's /dev/disk/by-id links) and a second block device node
    of the same major:minor (another path, no link to follow)."""
    link = folder / "by-id-link"
    link.symlink_to(dev)
    node = folder / "same-number-node"
    os.mknod(node, stat.S_IFBLK | 0o600, os.stat(dev).st_rdev)
    return str(link), str(node)


def test_one_drive_given_again_under_any_name_is_refused_before_it_is_locked(
        make_loop, monkeypatch, tmp_path):
    a, b = make_loop(SIZE), make_loop(SIZE)
    link, node = other_names(a, tmp_path)
    gated = []
    check = gate.safety.check_writable
    monkeypatch.setattr(gate.safety, "check_writable",
                        lambda dev, destructive: gated.append(dev.given) or check(
                            dev, destructive=destructive))
    locks = tmp_path / "locks"
    monkeypatch.setattr(gate, "DeviceLock", functools.partial(DeviceLock, lock_dir=locks))
    givens = [a, b, link, node, a]
    checked = gate.check_all(givens, labels(givens), destructive=True,
                             check_capacity=lambda dev: None)
    try:
        assert [c.accepted for c in checked] == [True, True, False, False, False], \
            [c.refused for c in checked]
        assert [c.refused for c in checked[2:]] == [
            f"{link} is the same device as {a} ({a}), given twice: give each device once",
            f"{node} is the same device as {a} ({node}), given twice: give each device once",
            f"{a} is the same device as {a} ({a}), given twice: give each device once"]
        assert all(c.device is None and c.lock is None for c in checked[2:])  # nothing taken
        # one lock per drive: the first name's; the other drive has its own
        assert sorted(p.name for p in locks.iterdir()) == sorted(
            c.lock.path.name for c in checked[:2])
        assert [c.device.devno for c in checked[:2]] == [
            (os.major(r), os.minor(r)) for r in (os.stat(a).st_rdev, os.stat(b).st_rdev)]
        text = gate.refusal(checked)
        assert text.startswith(f"refusing the whole session: [by-id-link] {link} is the same "
                               f"device as {a}")
        assert "Nothing was written to any of the 5 devices" in text
        assert "leave out the refused device(s)" in text
    finally:
        gate.release_all(checked)
    assert sorted(gated) == sorted(givens)     # every name passed the safety gate first


def test_the_session_refuses_a_drive_given_twice(make_loop, tmp_path):
    """As a user starts it: nothing written to the device, no reports folder, no child."""
    a = make_loop(SIZE)
    link, _ = other_names(a, tmp_path)
    with open(a, "r+b") as fh:
        fh.write(b"sentinel" * 512)
    reports = tmp_path / "reports"
    p = run_suite("--device", a, "--device", link, "--destructive", "-k", "iops",
                  "--purge", "trim", "--reports-dir", str(reports), timeout=120)
    out = p.stdout + p.stderr
    assert p.returncode == 4, out                          # pytest's usage error
    assert f"refusing the whole session: [by-id-link] {link} is the same device as {a} " \
           f"({a}), given twice: give each device once. Nothing was written to any of the " \
           "2 devices" in out
    assert "[pts iops]" not in out and not reports.exists()
    with open(a, "rb") as fh:
        assert fh.read(4096) == b"sentinel" * 512
