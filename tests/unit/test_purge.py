"""Purge: the plan per device and option, the NVMe decisions (SANICAP / OACS / FNA), sanitize
polling.

NVMe decisions use nvme-cli JSON in the shape QEMU 7.2 / nvme-cli 2.3 print it (see
tests/data/qemu-7.2/ for the captured originals); the controller fields that differ per
case (sanicap, fna, oacs) are changed in the test. The marker check that a purge really
erased something runs on real loop devices in tests/e2e/test_purge_verify.py. The real
Format path runs against QEMU's NVMe in tests/e2e/test_qemu_e2e.py.
"""

import dataclasses
import functools
import json

import pytest

from pts.conditioning import purge, purge_nvme
from pts.conditioning.purge_plan import PurgeError
from tests.helpers import QEMU_DATA, RecordedRunner, Reply

ID_CTRL = {"vid": 6966, "sn": "deadbeef            ", "mn": "QEMU NVMe Ctrl   ",
           "fr": "7.2.22  ", "oacs": 0x10a, "fna": 0, "sanicap": 0, "vwc": 7, "nn": 256}
ID_NS = {"nsze": 2097152, "flbas": 0, "dlfeat": 1,
         "lbafs": [{"ms": 0, "ds": 9, "rp": 0}, {"ms": 8, "ds": 9, "rp": 0},
                   {"ms": 0, "ds": 12, "rp": 0}]}


def sanitize_log(state: int, sprog: int) -> str:
    """nvme-cli 2.3 layout: the log under the device name, SSTAT status as "(N) text"."""
    return json.dumps({"nvme0": {"sprog": sprog, "sstat": {
        "global_erased": 0, "no_cmplted_passes": 0, "status": f"({state}) text"},
        "cdw10_info": 0, "time_over_write": 4294967295}})


SANITIZE_ACCEPTED = Reply()
# QEMU 7.2 has no Sanitize: what nvme-cli prints when a controller rejects the command
SANITIZE_REJECTED = Reply(err="nvme-sanitize_invalid-opcode.stderr.txt", rc=1)


def fake_nvme(ctrl=None, ns=None, sanitize_logs=(),
              sanitize=SANITIZE_ACCEPTED) -> RecordedRunner:
    """nvme-cli as QEMU 7.2 answers (tests/data/qemu-7.2/), with the Identify fields of the
    case changed; `sanitize_logs` are the Sanitize Status logs read in turn."""
    script = {
        ("nvme", "id-ctrl"): [Reply(stdout=json.dumps({**ID_CTRL, **(ctrl or {})}))],
        ("nvme", "id-ns"): [Reply(stdout=json.dumps({**ID_NS, **(ns or {})}))],
        ("nvme", "format"): [Reply("nvme-format_ses1.txt")],
        ("nvme", "sanitize"): [sanitize],
    }
    if sanitize_logs:
        script["nvme", "sanitize-log"] = [Reply(stdout=log) for log in sanitize_logs]
    return RecordedRunner(script, data=QEMU_DATA)


@pytest.fixture
def nvme_dev(tmp_path):
    """A BlockDevice record that says NVMe (nothing is opened: plans only read identify)."""
    from pts.device.identity import BlockDevice, Identity
    return BlockDevice("/dev/nvme9n1", "/dev/nvme9n1", "nvme9n1", (259, 99), 1 << 30, 512,
                       512, "nvme", False, Identity("QEMU NVMe Ctrl", "deadbeef", "7.2.22",
                                                    "nvme id-ctrl"))


def use(monkeypatch, fake: RecordedRunner) -> RecordedRunner:
    fake.install(monkeypatch)
    monkeypatch.setattr(purge_nvme, "other_namespaces", lambda dev: [])
    return fake


def no_poll_sleep(monkeypatch):
    """The sanitize poll without its sleeps. wait_for_sanitize binds time.sleep as a default
    argument, so patching time.sleep would not reach it."""
    monkeypatch.setattr(purge_nvme, "wait_for_sanitize",
                        functools.partial(purge_nvme.wait_for_sanitize, sleep=lambda s: None))


def test_auto_without_sanicap_falls_back_to_format_ses1(monkeypatch, nvme_dev):
    fake = use(monkeypatch, fake_nvme())
    chosen = purge.plan("auto", nvme_dev, say=print)
    assert chosen.method == "NVMe Format SES=1 (user data erase)"
    assert "SANICAP = 0" in chosen.reason
    assert chosen.command[:4] == ["nvme", "format", "/dev/nvme9n1", "--ses=1"]
    assert "--lbaf=0" in chosen.command and "--force" in chosen.command
    assert [c[1] for c in fake.calls] == ["id-ctrl", "id-ns"]     # planning writes nothing
    result = chosen.execute()
    assert [c[1] for c in fake.calls] == ["id-ctrl", "id-ns", "format", "id-ns"]
    assert not result.deviation and "namespace format unchanged" in result.verification


def test_format_uses_crypto_erase_when_fna_says_so(monkeypatch, nvme_dev):
    use(monkeypatch, fake_nvme(ctrl={"fna": 0x4}, ns={"flbas": 2}))
    chosen = purge.plan("format", nvme_dev, say=print)
    assert chosen.method == "NVMe Format SES=2 (crypto erase)"
    assert "--ses=2" in chosen.command and "--lbaf=2" in chosen.command


def test_sanitize_requested_but_not_supported_fails_closed(monkeypatch, nvme_dev):
    fake = use(monkeypatch, fake_nvme())
    with pytest.raises(PurgeError, match=r"supports no NVMe Sanitize action .*SANICAP = 0x0"
                                         r".*Nothing was erased.*--purge format"):
        purge.plan("sanitize", nvme_dev, say=print)
    assert all(c[1] in ("id-ctrl", "id-ns") for c in fake.calls)


def test_no_format_and_no_sanitize_refuses(monkeypatch, nvme_dev):
    use(monkeypatch, fake_nvme(ctrl={"oacs": 0x8}))
    with pytest.raises(PurgeError, match="neither NVMe Sanitize .* nor Format NVM"):
        purge.plan("auto", nvme_dev, say=print)


@pytest.mark.parametrize("sanicap, action, sanact", [(0x7, "block erase", 2),
                                                     (0x5, "crypto erase", 4),
                                                     (0x4, "overwrite", 3)])
def test_auto_prefers_block_then_crypto_then_overwrite(monkeypatch, nvme_dev, sanicap, action,
                                                       sanact):
    use(monkeypatch, fake_nvme(ctrl={"sanicap": sanicap}))
    chosen = purge.plan("auto", nvme_dev, say=print)
    assert chosen.method == f"NVMe Sanitize ({action})"
    assert chosen.command[:4] == ["nvme", "sanitize", "/dev/nvme9", f"--sanact={sanact}"]


def test_sanitize_polls_the_log_until_done(monkeypatch, nvme_dev):
    logs = [sanitize_log(1, 65535),            # before: an older sanitize, done
            sanitize_log(2, 6554), sanitize_log(2, 32768), sanitize_log(1, 65535)]
    fake = use(monkeypatch, fake_nvme(ctrl={"sanicap": 0x2}, sanitize_logs=logs))
    no_poll_sleep(monkeypatch)
    said = []
    result = purge.plan("sanitize", nvme_dev, say=said.append).execute()
    assert [c[1] for c in fake.calls] == ["id-ctrl", "id-ns", "sanitize-log", "sanitize",
                                          "sanitize-log", "sanitize-log", "sanitize-log"]
    assert said[0].startswith("sanitize 10%") and said[1].startswith("sanitize 50%")
    assert "SSTAT 1 (completed successfully)" in result.verification


def test_sanitize_failure_in_the_log_stops_the_test(monkeypatch, nvme_dev):
    logs = [sanitize_log(0, 65535), sanitize_log(2, 100), sanitize_log(3, 65535)]
    use(monkeypatch, fake_nvme(ctrl={"sanicap": 0x2}, sanitize_logs=logs))
    no_poll_sleep(monkeypatch)
    with pytest.raises(PurgeError, match="SSTAT 3: the last sanitize failed"):
        purge.plan("auto", nvme_dev, say=lambda s: None).execute()


def test_sanitize_command_rejected_fails_closed(monkeypatch, nvme_dev):
    use(monkeypatch, fake_nvme(ctrl={"sanicap": 0x2}, sanitize_logs=[sanitize_log(0, 65535)],
                               sanitize=SANITIZE_REJECTED))
    with pytest.raises(PurgeError,
                       match="(?s)failed to start.*fail closed.*Invalid Command Opcode"):
        purge.plan("auto", nvme_dev, say=print).execute()


def test_sanitize_timeout(monkeypatch, nvme_dev):
    use(monkeypatch, fake_nvme(sanitize_logs=[sanitize_log(2, 1000)] * 5))
    ticks = iter([0.0, 100.0, 200.0, 99999.0])
    with pytest.raises(PurgeError, match=r"still in progress after \d+ min .*sanitize-log"):
        purge_nvme.wait_for_sanitize(nvme_dev, None, "NVMe Sanitize (block erase)",
                                     say=lambda s: None, timeout=300, poll=0,
                                     clock=lambda: next(ticks), sleep=lambda s: None)


def test_other_namespaces_block_a_subsystem_wide_erase(tmp_path, nvme_dev):
    ctrl = tmp_path / "nvme9"
    for name in ("nvme9n1", "nvme9n2", "nvme9c9n1", "device"):
        (ctrl / name).mkdir(parents=True)
    assert purge_nvme.other_namespaces(nvme_dev, sys_class=tmp_path) == ["/dev/nvme9n2"]


@pytest.mark.parametrize("vendor, method, routed", [
    ("ATA", "auto", "purge_ata"), ("ATA", "security-erase", "purge_ata"),
    ("ATA", "sanitize", "purge_ata"), ("SEAGATE", "auto", "purge_scsi"),
    ("SEAGATE", "format", "purge_scsi"), ("SEAGATE", "sanitize", "purge_scsi")])
def test_sata_and_sas_drives_go_to_their_own_purge(monkeypatch, tmp_path, nvme_dev, vendor,
                                                   method, routed):
    """libata drives show as SCSI with vendor "ATA": they get hdparm, others sg3_utils."""
    from pts.conditioning import purge_ata, purge_scsi
    from pts.device import identity as device
    (tmp_path / "block" / "sdz" / "device").mkdir(parents=True)
    (tmp_path / "block" / "sdz" / "device" / "vendor").write_text(vendor + "\n")
    monkeypatch.setattr(device, "SYS", tmp_path)
    dev = dataclasses.replace(nvme_dev, path="/dev/sdz", kname="sdz", transport="scsi")
    calls = []
    for module in (purge_ata, purge_scsi):
        monkeypatch.setattr(module, "plan", lambda m, path, log_file, name=module.__name__:
                            calls.append((name, m, path)))
    purge.plan(method, dev)
    assert calls == [(f"pts.conditioning.{routed}", method, "/dev/sdz")]


@pytest.mark.parametrize("vendor, method, words", [
    ("ATA", "format", "--purge format is for NVMe or SCSI devices; /dev/sdz is an ATA device"),
    ("SEAGATE", "security-erase", "--purge security-erase is for ATA devices; /dev/sdz is "
                                  "SCSI")])
def test_method_of_another_transport_is_refused(monkeypatch, tmp_path, nvme_dev, vendor,
                                                method, words):
    from pts.device import identity as device
    (tmp_path / "block" / "sdz" / "device").mkdir(parents=True)
    (tmp_path / "block" / "sdz" / "device" / "vendor").write_text(vendor)
    monkeypatch.setattr(device, "SYS", tmp_path)
    dev = dataclasses.replace(nvme_dev, path="/dev/sdz", kname="sdz", transport="scsi")
    with pytest.raises(PurgeError, match=words):
        purge.plan(method, dev)
