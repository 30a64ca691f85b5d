"""The OCP latency monitor the suite configures at a test's start and reads at its end
(pts.conditioning.latency_monitor, through pts.conditioning.host_facts_step) and the rows that
judge it (pts.stored.latency_monitor_rules: LMLOG-6, LMLOG-14, LMSF-10).

No NVMe drive here: the drive is tests/support/qemu10_drive.Drive, QEMU 10's recorded reads,
whose answer to Set Features C5h is CONSTRUCTED (QEMU refuses it: Feature Identifier Not
Saveable, from its hw/nvme/ctrl.c; not recorded, as a probe writes nothing) and, for a drive
that accepts it, a stand-in answering exit 0 and a CONSTRUCTED C3h page (the product's encoder,
pts.tools.ocp_log_decode.encode: no drive here gave it; QEMU refuses C3h, recorded).
"""

from __future__ import annotations

import dataclasses

from pts.conditioning import host_facts_step, latency_monitor
from pts.config import ocp_log_pages as P
from pts.config.ocp_all_ids import all_ids
from pts.results import records
from pts.stored import host_judge, latency_monitor_rules, ocp_every_id
from pts.stored.data import load_run
from pts.stored.host_rules import FAIL, NOT_CHECKED, PASS
from pts.stored.latency_monitor_rules import with_page_after
from pts.tools import commands
from pts.tools.commands import CommandResult
from pts.tools.ocp_log_decode import encode
from tests.support.fake_run import NVME, FakeRun, ledger
from tests.support.qemu10_drive import Drive, pci_function
from tests.support.synthetic.runfactory import build_run

ROWS = ("LMLOG-6", "LMLOG-14", "LMSF-10")
SENT = {"feature_status": 0x07, "active_bucket_timer": 0, "active_bucket_timer_threshold": 0x7E0,
        "active_threshold_a": 0x05, "active_threshold_b": 0x13, "active_threshold_c": 0x1E,
        "active_threshold_d": 0x2E, "active_latency_configuration": 0x0FFF,
        "active_latency_minimum_window": 0x0A,
        "active_bucket_counter_0": {"read": 9, "write": 4, "deallocate": 1}}


class Accepting(Drive):
    """A drive that accepts Set Features C5h and then answers C3h with `page` (CONSTRUCTED);
    the rest as QEMU 10 (recorded)."""

    def __init__(self, page: dict):
        super().__init__()
        self.page, self.sent = encode(P.C3, page, 4), None

    def __call__(self, argv, *, stdout_path=None, **kw):
        if argv[1] == "set-feature":
            self.calls.append(list(argv))
            self.sent = open(self._arg(argv, "--data"), "rb").read()
            return CommandResult(tuple(argv), 0, "", "set-feature:0xc5 (...), value:0", 0.1)
        if self._arg(argv, "--log-id") == "0xc3" and self.sent is not None:
            self.calls.append(list(argv))
            stdout_path.write_bytes(self.page[:int(self._arg(argv, "--log-len"))])
            return CommandResult(tuple(argv), 0, "", "", 0.1)
        return super().__call__(argv, stdout_path=stdout_path, **kw)


def a_test(tmp_path, monkeypatch, drive, destructive=True, device=None):
    """test start and test end of test "iops" on `drive`; the run folder and the run."""
    folder = build_run(tmp_path, "run")
    monkeypatch.setattr(commands, "run", drive)
    monkeypatch.setattr(commands, "require", lambda tool, package: tool)
    function = pci_function(tmp_path / "sysfs")
    monkeypatch.setattr(host_facts_step, "pci_function", lambda root, kname: function)
    run = FakeRun(folder)
    run.settings.destructive = destructive
    if device is not None:
        run.device = device
    host_facts_step.record(run, "iops", "test start")
    host_facts_step.record(run, "iops", "test end")
    return folder, run


def monitor(run) -> list[records.LatencyMonitor]:
    return [r for r in ledger(run) if isinstance(r, records.LatencyMonitor)]


def rows(run, facts=None) -> dict:
    facts = facts or next(r for r in ledger(run) if isinstance(r, records.NvmeFacts)).facts
    f = with_page_after({**facts, "run": {"latency_monitor": [r.to_json()
                                                              for r in monitor(run)]}})
    return {v.req_id: v for v in host_judge.judge(f) if v.req_id in (*ROWS, "LMLOG-12")}


def test_the_bytes_sent_field_by_field_from_the_texts_layout():
    """The 4,096-byte Latency Monitoring Data Structure (v2.7 4.15.11.1) byte by byte, each
    field at the text's offset and the line the module cites is its ID's line in the text."""
    data = latency_monitor.data()
    assert len(data) == 4096
    assert data[0:2] == bytes([0xE0, 0x07])       # LMDS-1 Active Bucket Timer Threshold 07E0h
    assert list(data[2:6]) == [0x05, 0x13, 0x1E, 0x2E]    # LMDS-2..5 thresholds A < B < C < D
    assert data[6:8] == bytes([0xFF, 0x0F])       # LMDS-6 Active Latency Configuration 0FFFh
    assert data[8] == 0x0A                        # LMDS-7 Active Latency Minimum Window
    assert data[9:11] == bytes(2)                 # LMDS-8 Debug Log Trigger Enable: none
    assert data[11] == 0x01                       # LMDS-9 Discard Debug Log: load all fields
    assert data[12] == 0x01                       # LMDS-10 Latency Monitor Feature Enable
    assert data[13:] == bytes(4083)               # LMDS-11 reserved
    at = {e.id: e.at for e in all_ids("2.7")}
    assert [(rid, line) for *_, rid, line in latency_monitor.FIELDS] == \
        [(f"LMDS-{n}", at[f"LMDS-{n}"]) for n in range(1, 11)]
    assert latency_monitor.argv("/dev/nvme0", "x.bin") == [
        "nvme", "set-feature", "/dev/nvme0", "--feature-id=0xc5", "--value=0",
        "--data-len=4096", "--data=x.bin", "--save"]


def test_qemu_refuses_it_recorded_said_and_the_rows_fail(tmp_path, monkeypatch):
    """Under --destructive on QEMU 10's controller (its Set Features answer constructed: see
    the module docstring): the command, the drive's words and the bytes sent are recorded and
    said; C3h is not read again at test end; LMLOG-6/14 and LMSF-10 FAIL citing the refusal,
    on the stored run's OCP verdicts too."""
    drive = Drive()
    folder, run = a_test(tmp_path, monkeypatch, drive)
    (rec,) = monitor(run)
    assert (rec.action, rec.exit, rec.refused) == (
        "refused", 1, "Feature Identifier Not Saveable (0x410d)")
    assert rec.command == ("nvme set-feature /dev/nvme9 --feature-id=0xc5 --value=0 "
                           f"--data-len=4096 --data={folder}/host-facts/iops/"
                           "set-feature-c5h.bin --save")
    assert (folder / rec.file).read_bytes() == latency_monitor.data()
    assert rec.data == latency_monitor.data()[:16].hex() and rec.data_len == 4096
    assert [c for c in drive.calls if c[1] == "set-feature"] == [rec.command.split()]
    c3 = [c for c in drive.calls if "--log-id=0xc3" in c]
    assert len(c3) == 1 and drive.calls.index(c3[0]) < drive.calls.index(rec.command.split())
    assert any("the drive refused Set Features C5h: Feature Identifier Not Saveable (0x410d)"
               in line for line in run.lines)
    got = rows(run)
    assert {r: got[r].verdict for r in ROWS} == dict.fromkeys(ROWS, FAIL)
    assert got["LMLOG-6"].why.startswith("the drive refused the suite's Set Features C5h: "
                                         "Feature Identifier Not Saveable (0x410d), exit 1")
    view = load_run(folder)
    every = {v.id: v for v in ocp_every_id.judge_every(view, "2.7").verdicts}
    assert every["LMLOG-14"].verdict == FAIL and "Not Saveable" in every["LMLOG-14"].reason
    page = latency_monitor_rules.said([r.to_json() for r in
                                       view.records_of(records.LatencyMonitor)])
    assert "test iops: Set Features C5h sent, the drive refused it: Feature Identifier Not " \
        "Saveable (0x410d), exit 1" in page          # the report's OCP page says it


def test_never_without_destructive_nor_on_a_device_the_safety_check_refuses(tmp_path,
                                                                            monkeypatch):
    """No --destructive: nothing sent, said and recorded; a read-only device (a reason the
    purge's safety check refuses whatever the flags) under --destructive: the same."""
    for name, destructive, device, said in (
            ("plain", False, None, "without --destructive"),
            ("ro", True, dataclasses.replace(NVME, read_only=True),
             "is read-only")):
        drive = Accepting(SENT)
        _, run = a_test(tmp_path / name, monkeypatch, drive, destructive, device)
        assert not [c for c in drive.calls if c[1] == "set-feature"], name
        (rec,) = monitor(run)
        assert rec.action == "not sent" and said in rec.why and rec.command is None, name
        assert any("latency monitor not configured" in x and said in x for x in run.lines)
        got = rows(run)
        assert {r: got[r].verdict for r in ROWS} == dict.fromkeys(ROWS, NOT_CHECKED), name
        assert said in got["LMLOG-6"].why


def test_accepted_the_page_after_the_test_is_judged(tmp_path, monkeypatch):
    """A drive that accepts (stand-in, constructed C3h): the bytes it received are the
    structure; C3h is read again at test end into the record; LMLOG-6/14 and LMSF-10 PASS,
    and the C3h rows judge that page (LMLOG-12's evidence says so). Broken one field at a
    time: the configuration not read back, a Static Bucket not reset, the timer not reset."""
    drive = Accepting(SENT)
    folder, run = a_test(tmp_path, monkeypatch, drive)
    assert drive.sent == latency_monitor.data()
    configured, after = monitor(run)
    assert (configured.action, after.action) == ("configured", "read after")
    assert after.after["decoded"]["fields"]["active_threshold_d"] == 0x2E
    assert (folder / after.file).read_bytes() == drive.page
    got = rows(run)
    assert {r: got[r].verdict for r in ROWS} == dict.fromkeys(ROWS, PASS), got
    assert got["LMLOG-12"].verdict == PASS and "test end" in got["LMLOG-12"].evidence[0].source
    assert "log C3h read at test end" in latency_monitor_rules.said(
        [r.to_json() for r in monitor(run)])
    for change, words in (({"active_threshold_b": 0x14}, "active_threshold_b 20 (sent 19)"),
                          ({"feature_status": 0x06}, "bit 0 (enabled) clear"),
                          ({"static_bucket_counter_2": {"read": 1, "write": 0,
                                                        "deallocate": 0}},
                           "static_bucket_counter_2 not zero"),
                          ({"active_bucket_timer": 5}, "Active Bucket Timer 5")):
        drive = Accepting(SENT | change)
        _, run = a_test(tmp_path / str(len(words)) / words[:6], monkeypatch, drive)
        got = rows(run)
        assert got["LMLOG-6"].verdict == FAIL and words in got["LMLOG-6"].why, got["LMLOG-6"]
        assert got["LMLOG-14"].verdict == FAIL and got["LMSF-10"].verdict == PASS


def test_dry_run_says_what_it_would_do():
    lines = latency_monitor.dry_run_lines(NVME, True, [])
    assert len(lines) == 1 and lines[0].endswith("would be sent") and "--save" in lines[0]
    assert latency_monitor.dry_run_lines(NVME, False, [])[0].endswith(
        "NOT SENT without --destructive")
    assert "NOT SENT, the safety check" in latency_monitor.dry_run_lines(NVME, True, ["x"])[0]
    assert latency_monitor.dry_run_lines(dataclasses.replace(NVME, transport="loop"),
                                         True, []) == []
