"""Write cache (PTS-E WCD / PTS-C WCE): set where the suite can, and record what the device
then reports. NVMe answers come from QEMU 7.2 captures (tests/data/qemu-7.2/); the real
Set/Get Features path runs in tests/e2e/test_qemu_e2e.py. hdparm's and sdparm's answers are
real drives' (tests/data/recorded/README.md)."""

import dataclasses
import json

import pytest

from pts.conditioning import write_cache
from pts.device.identity import BlockDevice, Identity
from tests.support.helpers import QEMU_DATA, RecordedRunner, Reply

SET_ACCEPTED = Reply("nvme-set-feature-6_value-0.txt")
SET_FAILED = Reply(rc=1)
NVME = BlockDevice("/dev/nvme9n1", "/dev/nvme9n1", "nvme9n1", (259, 9), 1 << 30, 512, 512,
                   "nvme", False, Identity("m", "s", "f", "nvme id-ctrl"))


def fake_nvme(monkeypatch, vwc=7, feature_file="nvme-get-feature-6_disabled.txt",
              set_feature=SET_ACCEPTED) -> RecordedRunner:
    """nvme-cli as QEMU 7.2 answers (its id-ctrl with VWC changed), in place of commands.run."""
    ctrl = {**json.loads((QEMU_DATA / "nvme-id-ctrl.json").read_text()), "vwc": vwc}
    return RecordedRunner({
        ("nvme", "id-ctrl"): [Reply(stdout=json.dumps(ctrl))],
        ("nvme", "set-feature"): [set_feature],
        ("nvme", "get-feature"): [Reply(feature_file)],
    }, data=QEMU_DATA).install(monkeypatch)


def test_nvme_cache_disabled_for_enterprise_and_read_back(monkeypatch):
    run = fake_nvme(monkeypatch)
    state = write_cache.apply(NVME, "WCD")
    assert run.calls == [("nvme", "id-ctrl", "/dev/nvme9n1", "-o", "json"),
                         ("nvme", "set-feature", "/dev/nvme9", "--feature-id=6", "--value=0"),
                         ("nvme", "get-feature", "/dev/nvme9", "--feature-id=6")]
    assert (state.actual, state.settable, state.matches, state.deviation()) == \
        ("disabled", True, True, None)


def test_nvme_drive_ignoring_the_set_is_reported_as_it_is(monkeypatch):
    fake_nvme(monkeypatch, feature_file="nvme-get-feature-6_enabled.txt")
    state = write_cache.apply(NVME, "WCD")
    assert state.actual == "enabled" and not state.matches
    assert state.deviation() == ("Write cache: the spec requires it disabled (WCD); it is not, "
                                 "which reports 'enabled'.")


def test_nvme_without_volatile_cache(monkeypatch):
    run = fake_nvme(monkeypatch, vwc=0)
    assert write_cache.apply(NVME, "WCD").deviation() is None   # nothing to disable
    wce = write_cache.apply(NVME, "WCE")
    assert wce.actual == write_cache.ABSENT and not wce.matches
    assert all(c[1] == "id-ctrl" for c in run.calls)  # nothing set on a drive without one


def test_nvme_set_failure_falls_back_to_a_declared_deviation(monkeypatch):
    fake_nvme(monkeypatch, set_feature=SET_FAILED)
    state = write_cache.apply(NVME, "WCE")
    assert not state.settable and state.how.startswith("NVMe Set Features 06h failed")


@pytest.mark.parametrize("vendor, required, replies, state", [
    ("ATA", "WCE", {("hdparm", "-W1"): "hdparm-W1_set.txt", ("hdparm", "-W"): "hdparm-W_on.txt"},
     ("enabled", True, "hdparm -W1, read back with hdparm -W")),
    ("ATA", "WCD", {("hdparm", "-W0"): "hdparm-W0_set.txt",
                    ("hdparm", "-W"): "hdparm-W_off.txt"},
     ("disabled", True, "hdparm -W0, read back with hdparm -W")),
    ("HGST", "WCE", {("sdparm", "--set=WCE=1"): "sdparm_set-WCE.txt",
                     ("sdparm", "--get=WCE=1"): "sdparm_get-WCE_on.txt"},
     ("enabled", True, "sdparm --set=WCE=1, read back with sdparm --get=WCE=1")),
    ("HGST", "WCD", {("sdparm", "--set=WCE=0"): "sdparm_set-WCE.txt",
                     ("sdparm", "--get=WCE=1"): "sdparm_get-WCE_off.txt"},
     ("disabled", True, "sdparm --set=WCE=0, read back with sdparm --get=WCE=1")),
    # the drive says the cache is still on after -W0: the state is what it says
    ("ATA", "WCD", {("hdparm", "-W0"): "hdparm-W0_set.txt", ("hdparm", "-W"): "hdparm-W_on.txt"},
     ("enabled", False, "hdparm -W0, read back with hdparm -W; the drive did not take the "
                        "setting"))])
def test_scsi_transport_sets_with_hdparm_or_sdparm_and_reads_back(monkeypatch, tmp_path, vendor,
                                                                   required, replies, state):
    """A SATA drive behind the SCSI layer (sysfs vendor "ATA") is set with hdparm, a SAS drive
    with sdparm: the commands the suite runs (recorded tools' outputs answer them, tests/data/
    recorded), and the state it derives from the read-back, never from what it asked."""
    from pts.device import identity as device
    (tmp_path / "block" / "sdz" / "device").mkdir(parents=True)
    (tmp_path / "block" / "sdz" / "device" / "vendor").write_text(vendor)
    monkeypatch.setattr(device, "SYS", tmp_path)
    dev = dataclasses.replace(NVME, path="/dev/sdz", kname="sdz", transport="scsi")
    run = RecordedRunner({k: [Reply(v)] for k, v in replies.items()}).install(monkeypatch)
    got = write_cache.apply(dev, required)
    assert run.calls == [(*k, "/dev/sdz") for k in replies]       # set, then read back
    assert (got.required, got.actual, got.settable, got.how) == (required, *state)
    assert got.matches == state[1]


@pytest.mark.parametrize("vendor, command, back", [
    ("ATA", "hdparm -W0 /dev/sdz", "read back with hdparm -W"),
    ("HGST", "sdparm --set=WCE=0 /dev/sdz", "read back with sdparm --get=WCE=1")])
def test_the_plan_says_how_a_scsi_transport_drive_gets_its_cache_set(monkeypatch, tmp_path,
                                                                       vendor, command, back):
    """--dry-run shows the command the run will use (apply, above), not "not settable"."""
    from pts.device import identity as device
    from pts.procedure import plan
    (tmp_path / "block" / "sdz" / "device").mkdir(parents=True)
    (tmp_path / "block" / "sdz" / "device" / "vendor").write_text(vendor)
    monkeypatch.setattr(device, "SYS", tmp_path)
    dev = dataclasses.replace(NVME, path="/dev/sdz", kname="sdz", transport="scsi")
    line = plan.cache_line(dev, write_cache.CacheState("WCD", "write back", False))
    assert f"set before WIPC and before the test loop with `{command}`, {back}" in line
    assert "not settable" not in line
    loop = dataclasses.replace(NVME, path="/dev/loop9", kname="loop9", transport="loop")
    assert "not settable on this transport" in plan.cache_line(
        loop, write_cache.CacheState("WCD", "write back", False))
