"""Purge: the plan per device and option, the NVMe decisions (SANICAP / OACS / FNA), sanitize
polling, and every way an NVMe purge or a discard stops the test (fail closed).

NVMe decisions use nvme-cli JSON in the shape QEMU 7.2 / nvme-cli 2.3 print it (see
tests/data/qemu-7.2/ for the captured originals); the controller fields that differ per
case (sanicap, fna, oacs) are changed in the test. Failures QEMU cannot produce are in
tests/data/recorded/ (constructed, see its README). The other namespaces on the controller
are read for real from a constructed /sys/class/nvme tree (nvme_sysfs): one namespace
unless the test adds another. The marker check that a purge really
erased something runs on real loop devices in tests/e2e/test_purge_verify.py. The real
Format path runs against QEMU's NVMe in tests/e2e/test_qemu_e2e.py.
"""

import dataclasses
import functools
import json
import time
from types import SimpleNamespace

import pytest

from pts.conditioning import prepare, purge, purge_nvme
from pts.conditioning.purge_plan import PurgeError
from pts.results import records
from pts.results.ledger import Ledger, read_records
from pts.tools import commands
from tests.support.helpers import QEMU_DATA, RECORDED, RecordedRunner, Reply

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


FORMAT_DONE = Reply("nvme-format_ses1.txt")
# What nvme-cli prints when the drive fails the Format (constructed, tests/data/recorded/)
FORMAT_FAILED = Reply(stderr=(RECORDED / "nvme-format_invalid-format.stderr.txt").read_text(),
                      rc=1)
# QEMU 7.2 has no Sanitize Status log: nvme-cli's answer (recorded)
SANITIZE_LOG_UNREADABLE = Reply(err="nvme-sanitize-log_invalid-field.stderr.txt", rc=1)


def fake_nvme(ctrl=None, ns=None, sanitize_logs=(), sanitize=SANITIZE_ACCEPTED,
              fmt=FORMAT_DONE, ns_after=None) -> RecordedRunner:
    """nvme-cli as QEMU 7.2 answers (tests/data/qemu-7.2/), with the Identify fields of the
    case changed; `sanitize_logs` are the Sanitize Status logs read in turn (JSON text, or a
    Reply); `ns_after`: the Identify Namespace fields changed after the first read."""
    id_ns = [Reply(stdout=json.dumps({**ID_NS, **(ns or {})}))]
    if ns_after:
        id_ns.append(Reply(stdout=json.dumps({**ID_NS, **(ns or {}), **ns_after})))
    script = {
        ("nvme", "id-ctrl"): [Reply(stdout=json.dumps({**ID_CTRL, **(ctrl or {})}))],
        ("nvme", "id-ns"): id_ns,
        ("nvme", "format"): [fmt],
        ("nvme", "sanitize"): [sanitize],
    }
    if sanitize_logs:
        script["nvme", "sanitize-log"] = [log if isinstance(log, Reply) else Reply(stdout=log)
                                          for log in sanitize_logs]
    return RecordedRunner(script, data=QEMU_DATA)


@pytest.fixture
def nvme_sysfs(tmp_path, monkeypatch):
    """/sys/class/nvme with controller nvme9 and its one namespace nvme9n1, as the kernel lays
    it out (a directory per namespace beside the controller's attributes); the real
    other_namespaces reads it. A test adds a namespace with mkdir."""
    root = tmp_path / "sys-class-nvme"
    ctrl = root / "nvme9"
    for name in ("nvme9n1", "device", "power"):
        (ctrl / name).mkdir(parents=True)
    for attr, value in (("model", "QEMU NVMe Ctrl"), ("serial", "deadbeef"),
                        ("firmware_rev", "7.2.22"), ("cntlid", "0")):
        (ctrl / attr).write_text(value + "\n")
    monkeypatch.setattr(purge_nvme, "other_namespaces",
                        functools.partial(purge_nvme.other_namespaces, sys_class=root))
    return ctrl


@pytest.fixture
def nvme_dev(nvme_sysfs):
    """A BlockDevice record that says NVMe (nothing is opened: plans only read identify)."""
    from pts.device.identity import BlockDevice, Identity
    return BlockDevice("/dev/nvme9n1", "/dev/nvme9n1", "nvme9n1", (259, 99), 1 << 30, 512,
                       512, "nvme", False, Identity("QEMU NVMe Ctrl", "deadbeef", "7.2.22",
                                                    "nvme id-ctrl"))


def use(monkeypatch, fake: RecordedRunner) -> RecordedRunner:
    return fake.install(monkeypatch)


def commands_run(fake: RecordedRunner) -> list[str]:
    return [c[1] for c in fake.calls]


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


SLOW_S = 0.25          # each slow read below: much more than the test's own steps


def timed(monkeypatch, fake: RecordedRunner, slow: str) -> dict[str, list[float]]:
    """nvme-cli as `fake` answers, each `slow` command (an nvme-cli read: a process, longer on
    a loaded host) taking SLOW_S; the monotonic times each command was issued and answered."""
    seen: dict[str, list[float]] = {}

    def run(argv, **kw):
        seen.setdefault(f"{argv[1]} issued", []).append(time.monotonic())
        if argv[1] == slow:
            time.sleep(SLOW_S)
        try:
            return fake(argv, **kw)
        finally:
            seen.setdefault(f"{argv[1]} answered", []).append(time.monotonic())
    monkeypatch.setattr(commands, "run", run)
    return seen


def test_a_purges_recorded_time_is_the_drives_not_the_reads_around_it(monkeypatch, nvme_dev):
    """The seconds a purge records (the OCP purge time verdict holds them against a limit
    with only the poll's interval or nvme-cli's own start as slack) run from the command's
    issue to the drive's answer: the sanitize log read before a Sanitize and the Identify
    Namespace read after a Format were counted in, late by each read."""
    logs = [sanitize_log(1, 65535), sanitize_log(2, 32768), sanitize_log(1, 65535)]
    fake = use(monkeypatch, fake_nvme(ctrl={"sanicap": 0x2}, sanitize_logs=logs))
    no_poll_sleep(monkeypatch)
    seen = timed(monkeypatch, fake, "sanitize-log")
    result = purge.plan("sanitize", nvme_dev, say=lambda s: None).execute()
    assert [c[1] for c in fake.calls][-4:] == ["sanitize-log", "sanitize", "sanitize-log",
                                               "sanitize-log"]
    # from the Sanitize's issue to the answer of the read that saw it done
    took = seen["sanitize-log answered"][-1] - seen["sanitize issued"][0]
    assert abs(result.seconds - took) < SLOW_S / 5, (result.seconds, took)

    fake = use(monkeypatch, fake_nvme())
    seen = timed(monkeypatch, fake, "id-ns")
    result = purge.plan("format", nvme_dev, say=print).execute()
    assert [c[1] for c in fake.calls][-2:] == ["format", "id-ns"]
    took = seen["format answered"][0] - seen["format issued"][0]
    assert abs(result.seconds - took) < SLOW_S / 5, (result.seconds, took)


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


# ------------------------------------------------------------ other namespaces (fail closed)

SHARED = {"sanitize": ({"sanicap": 0x2}, r"NVMe Sanitize \(acts on the whole NVM subsystem\)",
                       ["sanitize-log", "sanitize", "sanitize-log"]),
          "format": ({"fna": 0x1}, r"NVMe Format \(FNA bit 0: applies to all namespaces\)",
                     ["format", "id-ns"])}


@pytest.mark.parametrize("method", ["sanitize", "format"])
def test_a_second_namespace_on_the_controller_refuses_the_erase(monkeypatch, nvme_dev,
                                                                nvme_sysfs, method):
    """Sanitize, and Format with FNA bit 0, would erase nvme9n2 too: refused before any
    command that writes, naming it."""
    ctrl, what, _ = SHARED[method]
    (nvme_sysfs / "nvme9n2").mkdir()
    fake = use(monkeypatch, fake_nvme(ctrl=ctrl, sanitize_logs=[sanitize_log(1, 65535)]))
    chosen = purge.plan(method, nvme_dev, say=print)
    with pytest.raises(PurgeError, match=rf"^{what} would also erase the other namespace\(s\) "
                                         r"on this controller: /dev/nvme9n2\. Refusing .*"
                                         r"Delete or detach them first, or use --purge trim"):
        chosen.execute()
    assert commands_run(fake) == ["id-ctrl", "id-ns"]        # nothing sent to the drive


@pytest.mark.parametrize("method", ["sanitize", "format"])
def test_the_only_namespace_on_the_controller_is_purged(monkeypatch, nvme_dev, method):
    ctrl, _, after = SHARED[method]
    fake = use(monkeypatch, fake_nvme(ctrl=ctrl, sanitize_logs=[sanitize_log(1, 65535)]))
    purge.plan(method, nvme_dev, say=print).execute()
    assert commands_run(fake) == ["id-ctrl", "id-ns", *after]


def test_a_second_namespace_seen_through_multipath_refuses_the_sanitize(monkeypatch, nvme_dev,
                                                                       nvme_sysfs):
    """Native NVMe multipath (a controller of a multi-controller subsystem): the controller's
    node holds the paths nvme9c9n1 / nvme9c9n2, the namespaces are /dev/nvme9n1 / nvme9n2."""
    (nvme_sysfs / "nvme9n1").rmdir()
    for path in ("nvme9c9n1", "nvme9c9n2"):
        (nvme_sysfs / path).mkdir()
    fake = use(monkeypatch, fake_nvme(ctrl={"sanicap": 0x2}))
    with pytest.raises(PurgeError, match=r"other namespace\(s\) on this controller: "
                                         r"/dev/nvme9n2\. Refusing"):
        purge.plan("sanitize", nvme_dev, say=print).execute()
    assert commands_run(fake) == ["id-ctrl", "id-ns"]


# ------------------------------------------------------------ NVMe Format fails closed

def test_a_failed_format_stops_the_test(monkeypatch, nvme_dev):
    fake = use(monkeypatch, fake_nvme(fmt=FORMAT_FAILED))
    with pytest.raises(PurgeError, match=r"(?s)^NVMe Format SES=1 \(user data erase\) of "
                                         r"/dev/nvme9n1 failed, stopping \(fail closed; nothing "
                                         r"ran after it\).*`nvme error-log /dev/nvme9`.*re-run"
                                         r".*Invalid Format: The LBA Format specified is not "
                                         r"supported\(0x410a\)"):
        purge.plan("format", nvme_dev, say=print).execute()
    assert commands_run(fake) == ["id-ctrl", "id-ns", "format"]


@pytest.mark.parametrize("after, shown", [({"flbas": 2}, "2097152 x 512 B -> 2097152 x 4096 B"),
                                          ({"nsze": 1048576}, "2097152 x 512 B -> 1048576 x "
                                                              "512 B")])
def test_a_format_that_changed_the_namespace_stops_the_test(monkeypatch, nvme_dev, after,
                                                            shown):
    """nvme-cli exit 0, but the namespace is not the one the test started on."""
    use(monkeypatch, fake_nvme(ns_after=after))
    with pytest.raises(PurgeError, match=rf"changed the namespace \({shown}\); stopping \(fail "
                                         r"closed\).*Format it back \(`nvme format "
                                         r"/dev/nvme9n1 --lbaf=0`\) or start a new run"):
        purge.plan("format", nvme_dev, say=print).execute()


# ------------------------------------------------------------ NVMe Sanitize fails closed

def test_a_sanitize_already_in_progress_is_not_started_again(monkeypatch, nvme_dev):
    fake = use(monkeypatch, fake_nvme(ctrl={"sanicap": 0x2},
                                      sanitize_logs=[sanitize_log(2, 16384)]))
    no_poll_sleep(monkeypatch)              # were it started, its poll would not sleep
    with pytest.raises(PurgeError, match=r"^a sanitize is already in progress on /dev/nvme9 "
                                         r"\(25%\); wait for it to finish\.$"):
        purge.plan("sanitize", nvme_dev, say=print).execute()
    assert commands_run(fake) == ["id-ctrl", "id-ns", "sanitize-log"]     # no sanitize sent


def test_an_unreadable_sanitize_log_stops_before_the_sanitize(monkeypatch, nvme_dev):
    fake = use(monkeypatch, fake_nvme(ctrl={"sanicap": 0x2},
                                      sanitize_logs=[SANITIZE_LOG_UNREADABLE]))
    with pytest.raises(PurgeError, match=r"(?s)^NVMe Sanitize \(block erase\): cannot read the "
                                         r"sanitize log, so cannot tell whether the drive was "
                                         r"sanitized; stopping \(fail closed\)\. Check `nvme "
                                         r"sanitize-log /dev/nvme9`, or use --purge format: "
                                         r".*Invalid Field in Command"):
        purge.plan("sanitize", nvme_dev, say=print).execute()
    assert commands_run(fake) == ["id-ctrl", "id-ns", "sanitize-log"]


def test_a_log_saying_never_sanitized_after_the_command_stops_the_test(monkeypatch, nvme_dev):
    """The controller accepted Sanitize, yet its log still says "never sanitized" (SSTAT 0)."""
    fake = use(monkeypatch, fake_nvme(ctrl={"sanicap": 0x2},
                                      sanitize_logs=[sanitize_log(0, 65535),
                                                     sanitize_log(0, 65535)]))
    no_poll_sleep(monkeypatch)
    said = []
    with pytest.raises(PurgeError, match=r"^NVMe Sanitize \(block erase\): the sanitize log "
                                         r"says the drive was never sanitized after the command "
                                         r"was accepted\. Test stopped \(fail closed\)\. Check "
                                         r"`nvme sanitize-log`.*or use --purge format\.$"):
        purge.plan("sanitize", nvme_dev, say=said.append).execute()
    assert commands_run(fake) == ["id-ctrl", "id-ns", "sanitize-log", "sanitize",
                                  "sanitize-log"]
    assert said == []                                         # no polling on a dead sanitize


# ------------------------------------------------------------ a failed discard: no WIPC

class FakeFio:
    """fio that must not run: every call is kept."""

    def __init__(self):
        self.calls = []

    def run(self, *args, **kwargs):
        self.calls.append(args)
        raise AssertionError("fio ran after a failed purge")


def test_a_failed_blkdiscard_stops_before_the_write_cache_and_wipc(monkeypatch, tmp_path,
                                                                   nvme_dev):
    """--purge trim on a device another holder has open: blkdiscard exits 1; the failed purge
    is in the ledger with the tool's words, and nothing after it ran (no write cache, no
    WIPC: fio never started)."""
    fake = RecordedRunner({("blkdiscard",): [Reply(err="blkdiscard_busy.stderr.txt", rc=1)]})
    fake.install(monkeypatch)
    gated = []
    monkeypatch.setattr(prepare, "check_writable", lambda dev, destructive: gated.append(dev))
    run = SimpleNamespace(
        device=nvme_dev, settings=SimpleNamespace(purge="trim", destructive=True,
                                                  purge_probe=True),
        commands_log=tmp_path / "commands.log", ledger=Ledger(tmp_path / "ledger.jsonl"),
        fio=FakeFio(), lines=[], spec=SimpleNamespace(common=SimpleNamespace(
            thread_count=1, queue_depth=1, active_range_pct=100, write_cache="enabled")))
    run.write = run.lines.append
    fix = (r"If the device is in use \(mounted, swap, RAID, LVM\), free it; if it cannot "
           r"discard, use --purge none \(a declared deviation\)\. Then re-run")
    with pytest.raises(PurgeError, match=r"(?s)^purge by trim of /dev/nvme9n1 failed, stopping "
                                         rf"\(fail closed; nothing ran after it\)\. {fix}: "
                                         r"blkdiscard exited with status 1.*cannot open "
                                         r"/dev/nvme9n1: Device or resource busy"):
        prepare.prepare(run, "iops", 1 << 30, 131072, probe=True)
    assert gated == [nvme_dev] and fake.calls == [("blkdiscard", "-v", "/dev/nvme9n1")]
    found, problems = read_records(run.ledger.path)
    assert not problems and [type(r) for r in found] == [records.Purge]
    (failed,) = found
    assert (failed.ok, failed.method) == (False, "trim")
    assert "Device or resource busy" in failed.error
    assert run.fio.calls == [] and run.lines == ["[pts iops] purge: trim"]


def test_a_drive_that_cannot_be_identified_is_not_purged(monkeypatch, nvme_dev):
    """id-ctrl fails: no method can be chosen, so none is tried."""
    fake = use(monkeypatch, RecordedRunner({("nvme", "id-ctrl"): [SANITIZE_LOG_UNREADABLE]},
                                           data=QEMU_DATA))
    with pytest.raises(PurgeError, match=r"(?s)^cannot identify /dev/nvme9n1 to choose its "
                                         r"purge, so nothing was erased \(fail closed\)\. Check "
                                         r"`nvme id-ctrl /dev/nvme9n1`, or use --purge trim.*: "
                                         r"nvme exited with status 1.*Invalid Field"):
        purge.plan("auto", nvme_dev, say=print)
    assert commands_run(fake) == ["id-ctrl"]
