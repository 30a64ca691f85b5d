"""A failed `nvme smart-log` read is recorded, declared and shown, never silently dropped.

nvme-cli is faked (tests.support.helpers.RecordedRunner in place of commands.run): smart-log exits
with status 1, or answers with a QEMU 7.2 capture.
"""

from __future__ import annotations

import dataclasses

import pytest

from pts.conditioning import prepare
from pts.device import health
from pts.device.identity import DeviceError
from pts.procedure.rounds import Outcome
from pts.procedure.runner import health_verdict
from pts.report import render
from pts.results import health_records, records
from pts.results.resume import ResumeState
from pts.stored.data import load_run
from tests.support.fake_run import NVME, FakeRun, ledger
from tests.support.helpers import QEMU_DATA, RecordedRunner, Reply, pdf_text
from tests.support.synthetic.runfactory import RunFolder, run_json, write_iops_test

MEDIA_KEYS = ("media_bytes", "media_source", "media_note", "latency_monitor", "ocp_c0")
FAILURE = "nvme exited with status 1: nvme smart-log /dev/nvme9 -o json"


def fake_nvme(monkeypatch, fail: bool = True) -> RecordedRunner:
    """nvme-cli answering smart-log with QEMU 7.2's recorded log, or failing (exit 1)."""
    reply = Reply(rc=1) if fail else Reply(out="nvme-smart-log_fresh.json")
    # Media writes (pts.device.media_writes): QEMU 7.2's namespace is in no Endurance Group
    # (id-ns endgid 0) and nvme-cli's OCP logs fail on it (C0h's bytes and JSON alike).
    return RecordedRunner({("nvme", "smart-log"): [reply],
                           ("nvme", "id-ns"): [Reply(out="nvme-id-ns.json")],
                           ("nvme", "get-log"): [Reply(rc=1)],
                           ("nvme", "ocp"): [Reply(rc=1)]}, data=QEMU_DATA).install(monkeypatch)


def smart_text() -> str:
    return (QEMU_DATA / "nvme-smart-log_fresh.json").read_text()


def test_failed_read_is_recorded_and_declared(tmp_path, monkeypatch):
    fake_nvme(monkeypatch)
    run = FakeRun(tmp_path)
    prepare.record_counters(run, "iops", "after WIPC")
    prepare.record_counters(run, "iops", "after round 1", 1)
    found = ledger(run)
    counters = [r for r in found if isinstance(r, records.DeviceCounters)]
    assert [(c.when, c.source, c.counters, c.error) for c in counters] == [
        ("after WIPC", "smart-log", None, FAILURE),
        ("after round 1", "smart-log", None, FAILURE)]
    deviations = [r.text for r in found if isinstance(r, records.Deviation)]
    # One deviation per distinct error in a test, naming the first step and the error.
    assert deviations == [
        f"NVMe SMART log (nvme smart-log) could not be read at step \"after WIPC\": "
        f"{FAILURE}. Steps without a SMART reading are not covered by the device-health "
        "check (the device-counters page lists them)."]
    assert run.lines == [f"[pts iops] SMART log not read after WIPC: {FAILURE}",
                         f"[pts iops] SMART log not read after round 1: {FAILURE}"]


def test_health_verdict_tolerates_unread_steps(tmp_path, monkeypatch):
    run = FakeRun(tmp_path)
    fake_nvme(monkeypatch, fail=False)
    prepare.record_counters(run, "iops", "test start")
    fake_nvme(monkeypatch)
    prepare.record_counters(run, "iops", "test end")
    steady = Outcome("steady", 7, 7, (3, 7), {}, "steady state reached at round 7")
    assert health_verdict(run, "iops", steady) is steady
    assert len(health_records.test_records(run.ledger.path, "iops")) == 1   # the readable one


def test_non_nvme_device_reads_nothing(monkeypatch):
    fake_nvme(monkeypatch)
    assert health.snapshot(dataclasses.replace(NVME, transport="sata")) is None


def test_resume_refuses_when_the_data_units_check_cannot_be_made(tmp_path, monkeypatch):
    fake_nvme(monkeypatch)
    recorded = (records.DeviceCounters(test="iops", when="after round 1", round=1,
                                       source="smart-log",
                                       counters={"data_units_written": 5000}),)
    state = ResumeState(tmp_path, {}, recorded)
    with pytest.raises(DeviceError, match=rf"--resume {tmp_path}: the NVMe SMART log of "
                                          r"/dev/nvme9n1 cannot be read \(nvme exited with "
                                          r"status 1.*\), so the check that nothing else "
                                          r"wrote to the drive .* Nothing was written\. Make "
                                          r"`nvme smart-log /dev/nvme9` work, or start a new "
                                          r"run\."):
        health_records.resume_counters(NVME, state)
    # A run that never read data units written has nothing to compare: no refusal.
    assert health_records.resume_counters(NVME, ResumeState(tmp_path, {}, ())) is None
    fake_nvme(monkeypatch, fail=False)
    # Readable again: the counters of the QEMU capture, to compare with the recorded step
    # (temperature 323 K = 50 °C; a data unit is 1000 x 512 bytes, SMART log page 02h).
    found = health_records.resume_counters(NVME, state)
    # and the media-write keys: QEMU 7.2 reports no media writes (pts.device.media_writes)
    assert found["media_bytes"] is None and found["latency_monitor"] is None
    assert found["ocp_c0"] is None                  # no C0h page read (pts.device.media_writes)
    assert {k: v for k, v in found.items() if k not in MEDIA_KEYS} == {
        "host_writes": 0, "page_size": 512000, "critical_warning": 0, "temperature_c": 50,
        "percent_used": 0, "data_units_read": 1, "data_units_written": 0, "media_errors": 0,
        "error_log_entries": 0, "warning_temp_minutes": 0, "critical_temp_minutes": 0,
        "thermal_transitions": 0}


def unread_run(tmp_path):
    run = RunFolder(tmp_path / "r", run_json())
    smart = {"critical_warning": 0, "temperature_c": 40, "data_units_written": 100,
             "host_writes": 100, "page_size": 512000}
    write_iops_test(run, (3.0, 2.0, 1.08, 1.04, 1.0, 1.0, 1.0),
                    counters={"after purge": smart, "after WIPC": smart},
                    counters_source="smart-log")
    run.record("device_counters", test="iops", when="test end", round=None,
               source="smart-log", counters=None, error=FAILURE)
    return run.path


def test_report_loads_and_shows_unread_steps(tmp_path):
    test = load_run(unread_run(tmp_path)).tests[0]
    last = test.counters[-1]
    assert (last.when, last.error, last.health, last.host_writes) == \
        ("test end", FAILURE, None, None)


@pytest.mark.needs("pdftotext")
def test_report_page_says_which_steps_were_not_read(tmp_path):
    text = pdf_text(render(unread_run(tmp_path)))
    assert ("The SMART log could not be read at 1 of 3 steps: those steps have no health "
            "data, and the device-health check does not cover them." in text)
    assert f"test end: {FAILURE}" in text
