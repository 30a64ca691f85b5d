"""Write cache (PTS-E WCD / PTS-C WCE): set where the suite can, and record what the device
then reports. NVMe answers come from QEMU 7.2 captures (tests/data/qemu-7.2/); the real
Set/Get Features path runs in tests/e2e/test_qemu_e2e.py."""

import dataclasses
import json

import pytest

from pts.conditioning import write_cache
from pts.device.identity import BlockDevice, Identity
from pts.tools import commands
from tests.helpers import DATA

QEMU = DATA / "qemu-7.2"
NVME = BlockDevice("/dev/nvme9n1", "/dev/nvme9n1", "nvme9n1", (259, 9), 1 << 30, 512, 512,
                   "nvme", False, Identity("m", "s", "f", "nvme id-ctrl"))


def fake_nvme(monkeypatch, vwc=7, feature_file="nvme-get-feature-6_disabled.txt", fail=()):
    calls = []
    ctrl = {**json.loads((QEMU / "nvme-id-ctrl.json").read_text()), "vwc": vwc}

    def run(argv, **kwargs):
        calls.append(argv[1:])
        if argv[1] in fail:
            raise commands.ToolFailed(f"nvme exited with status 1: {' '.join(argv)}")
        out = {"id-ctrl": json.dumps(ctrl),
               "get-feature": (QEMU / feature_file).read_text()}.get(argv[1], "")
        return commands.CommandResult(tuple(argv), 0, out, "", 0.0)
    monkeypatch.setattr(commands, "run", run)
    monkeypatch.setattr(commands, "require", lambda tool, package: tool)
    return calls


def test_nvme_cache_disabled_for_enterprise_and_read_back(monkeypatch):
    calls = fake_nvme(monkeypatch)
    state = write_cache.apply(NVME, "WCD")
    assert calls == [["id-ctrl", "/dev/nvme9n1", "-o", "json"],
                     ["set-feature", "/dev/nvme9", "--feature-id=6", "--value=0"],
                     ["get-feature", "/dev/nvme9", "--feature-id=6"]]
    assert (state.actual, state.settable, state.matches, state.deviation()) == \
        ("disabled", True, True, None)


def test_nvme_drive_ignoring_the_set_is_reported_as_it_is(monkeypatch):
    fake_nvme(monkeypatch, feature_file="nvme-get-feature-6_enabled.txt")
    state = write_cache.apply(NVME, "WCD")
    assert state.actual == "enabled" and not state.matches
    assert state.deviation() == ("Write cache: the spec requires it disabled (WCD); it is not, "
                                 "which reports 'enabled'.")


def test_nvme_without_volatile_cache(monkeypatch):
    calls = fake_nvme(monkeypatch, vwc=0)
    assert write_cache.apply(NVME, "WCD").deviation() is None   # nothing to disable
    wce = write_cache.apply(NVME, "WCE")
    assert wce.actual == write_cache.ABSENT and not wce.matches
    assert all(c[0] == "id-ctrl" for c in calls)      # nothing set on a drive without one


def test_nvme_set_failure_falls_back_to_a_declared_deviation(monkeypatch):
    fake_nvme(monkeypatch, fail={"set-feature"})
    state = write_cache.apply(NVME, "WCE")
    assert not state.settable and state.how.startswith("NVMe Set Features 06h failed")


@pytest.mark.parametrize("vendor, setter", [("ATA", "set_ata"), ("HGST", "set_scsi")])
def test_scsi_transport_uses_hdparm_or_sdparm(monkeypatch, tmp_path, vendor, setter):
    from pts.device import identity as device
    (tmp_path / "block" / "sdz" / "device").mkdir(parents=True)
    (tmp_path / "block" / "sdz" / "device" / "vendor").write_text(vendor)
    monkeypatch.setattr(device, "SYS", tmp_path)
    dev = dataclasses.replace(NVME, path="/dev/sdz", kname="sdz", transport="scsi")
    seen = []
    for name in ("set_ata", "set_scsi"):
        monkeypatch.setattr(write_cache, name, lambda path, enabled, log_file, n=name:
                            seen.append((n, path, enabled)) or "state")
    assert write_cache.apply(dev, "WCE") == "state"
    assert seen == [(setter, "/dev/sdz", True)]
