"""Purge on real loop devices: --purge auto refuses a loop device (no PTS purge method for
it; TRIM is a declared deviation), and the marker check that a purge really erased
something (marker blocks written before it must be gone after it).

The NVMe decisions and sanitize polling, against recorded nvme-cli output, are in
tests/unit/test_purge.py.
"""

import dataclasses
import subprocess

import pytest

from pts.conditioning import purge, purge_nvme, purge_verify
from pts.conditioning.purge_plan import PurgeError, PurgePlan, PurgeResult
from pts.device.identity import resolve

pytestmark = pytest.mark.needs("root", "losetup")


def test_loop_device_auto_refuses_and_trim_is_a_deviation(make_loop):
    dev = resolve(make_loop(16 << 20))
    with pytest.raises(PurgeError, match="no PTS purge method .* --purge trim"):
        purge.plan("auto", dev)
    chosen = purge.plan("trim", dev)
    assert chosen.deviation and chosen.command == ["blkdiscard", "-v", dev.path]


@pytest.mark.needs("root", "blkdiscard")
def test_markers_are_gone_after_a_discard_and_survive_without_one(make_loop):
    dev = resolve(make_loop(16 << 20))
    markers = purge_verify.write_markers(dev)
    assert len(markers) == purge_verify.COUNT
    assert sorted(purge_verify.surviving_markers(dev, markers)) == sorted(markers)
    subprocess.run(["blkdiscard", dev.path], check=True)
    assert purge_verify.surviving_markers(dev, markers) == []


@pytest.mark.needs("root")
def test_a_purge_that_erased_nothing_fails_closed(make_loop, monkeypatch):
    """A method that reports success but leaves the data: the markers catch it."""
    dev = dataclasses.replace(resolve(make_loop(16 << 20)), transport="nvme")
    silent = PurgePlan("NVMe Format SES=1 (user data erase)", ["nvme", "format"], False,
                       "test", lambda: PurgeResult("NVMe Format SES=1", ["nvme"], 0.1, False))
    monkeypatch.setattr(purge_nvme, "plan", lambda *a: silent)
    with pytest.raises(PurgeError, match=r"marker blocks written before it are still readable"
                                         r".*NOT purged.*fail closed"):
        purge.purge("auto", dev, say=print)


@pytest.mark.needs("root", "blkdiscard")
def test_a_purge_that_erased_passes_with_its_verification(make_loop, monkeypatch):
    dev = dataclasses.replace(resolve(make_loop(16 << 20)), transport="nvme")

    def discard():
        subprocess.run(["blkdiscard", dev.path], check=True)
        return PurgeResult("NVMe Format SES=1", ["nvme", "format"], 0.1, False, (), "exit 0")
    monkeypatch.setattr(purge_nvme, "plan", lambda *a: PurgePlan("x", None, False, "t", discard))
    result = purge.purge("auto", dev, say=print)
    assert result.verification == ("exit 0; 16 marker blocks written at sampled offsets "
                                   "before the purge were gone after it")
