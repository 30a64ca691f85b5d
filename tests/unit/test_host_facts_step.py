"""The run-time hook of the host facts (pts.conditioning.host_facts_step, through
prepare.record_counters) and their stored reader (pts.stored.host_facts), on what QEMU 10's
controller with FDP answered (tests/data/qemu-10/fdp, recorded by tests/support/guest/
fdp_probe.py: no NVMe drive on the test host, so a stand-in for commands.run writes the
recorded bytes where nvme-cli would). The live controller: tests/e2e/test_qemu_e2e.py."""

from __future__ import annotations

import dataclasses
import json

from pts.conditioning import prepare
from pts.results import records
from pts.stored import host_facts, host_judge
from pts.stored.data import load_run
from pts.tools import commands
from tests.support.fake_run import NVME, FakeRun, ledger
from tests.support.qemu10_drive import FDP, STATS, Drive, pci_function, recorded_facts
from tests.support.synthetic.runfactory import build_run


def steps(run, rounds=2):
    prepare.host_facts_step.record(run, "iops", "test start")
    prepare.host_facts_step.record(run, "iops", "after purge")
    prepare.host_facts_step.record(run, "iops", "after WIPC")
    for n in range(1, rounds + 1):
        prepare.host_facts_step.record(run, "iops", f"after round {n}", n)


def install(monkeypatch, stats) -> Drive:
    drive = Drive(stats)
    monkeypatch.setattr(commands, "run", drive)
    monkeypatch.setattr(commands, "require", lambda tool, package: tool)
    return drive


def verdicts(facts: dict) -> dict:
    return {v.req_id: (v.verdict, v.why) for v in host_judge.judge(facts, "2.7")}


def test_all_facts_at_test_start_and_log_22h_at_every_step(tmp_path, monkeypatch):
    """At test start every fact, the PCI function's too (its sysfs directory laid out from
    the recording), in a record that judges as the recorded controller's facts do, rule by
    rule; the FDP statistics in their own record; after it only log 22h, with the Endurance
    Group in LSI, at every step; each round's WAF window is the recorded one (the probe's
    16 MiB of plain writes: 16,785,408 media bytes for 16,777,216 host bytes; 1 MiB through
    handle 1 and the handle moved: 8 MiB media)."""
    folder = build_run(tmp_path, "run")
    drive = install(monkeypatch, ("0", "0") + STATS[1:])
    function = pci_function(tmp_path / "sysfs")
    monkeypatch.setattr(prepare.host_facts_step, "pci_function", lambda root, kname: function)
    run = FakeRun(folder)
    steps(run, rounds=2)
    found = [r for r in ledger(run) if isinstance(r, records.NvmeFacts | records.FdpStatistics)]
    assert [(type(r).__name__, getattr(r, "when", None) or r.moment) for r in found] == [
        ("NvmeFacts", "test start"), ("FdpStatistics", "test start"),
        ("FdpStatistics", "after purge"), ("FdpStatistics", "after WIPC"),
        ("FdpStatistics", "after round 1"), ("FdpStatistics", "after round 2")]
    facts = found[0]
    assert facts.error is None and facts.folder == "host-facts/iops" and facts.refused == {}
    assert (folder / "host-facts" / "iops" / facts.files["id_ctrl"]).read_bytes() == \
        (FDP / "nvme-id-ctrl.bin").read_bytes()
    assert (folder / "host-facts" / "iops" / "pci-config.bin").read_bytes() == \
        (FDP / "pci-config.bin").read_bytes()
    mine = verdicts(facts.facts)
    assert len(mine) == len(host_judge.ids("2.7")) > 100
    assert mine == verdicts(recorded_facts(tmp_path / "recorded"))
    # (the run's own facts, "run", are not the record's: pts.stored.run_facts)
    assert not [i for i, (v, why) in mine.items()
                if "not read" in why and why != "not read in this run: run"]
    reads = drive.calls[-4:]
    assert all(c[1] == "get-log" and "--log-id=0x22" in c and c[-1] == "--lsi=1"
               for c in reads), reads
    rows = host_facts.fdp_rounds(load_run(folder))
    assert [(r["round"], r["window"], r["host_bytes"], r["media_bytes"]) for r in rows] == [
        (1, "after WIPC -> after round 1", 16_777_216, 16_785_408),
        (2, "after round 1 -> after round 2", 1_048_576, 8_388_608)]
    assert rows[0]["waf"] == 16_785_408 / 16_777_216 and rows[1]["waf"] == 8.0
    assert host_facts.facts(load_run(folder)).facts == facts.facts


def test_a_refused_step_is_kept_and_the_window_says_so(tmp_path, monkeypatch):
    folder = build_run(tmp_path, "run")
    install(monkeypatch, ["0", "0", "0", None, "after-64MiB-phndl0"])
    run = FakeRun(folder)
    steps(run, rounds=2)
    stats = [r for r in ledger(run) if isinstance(r, records.FdpStatistics)]
    assert [r.stats is None for r in stats] == [False, False, False, True, False]
    assert "Invalid Field in Command" in stats[3].error and stats[3].file is None
    rows = host_facts.fdp_rounds(load_run(folder))
    assert [r["waf"] for r in rows] == [None, None]
    assert rows[0]["note"].startswith("log 22h not read at after round 1: ")
    assert any("FDP statistics (log 22h) not read after round 1" in line for line in run.lines)


def test_a_drive_without_fdp_gets_the_facts_and_no_statistics(tmp_path, monkeypatch):
    drive = install(monkeypatch, [None])
    run = FakeRun(tmp_path)
    steps(run)
    found = ledger(run)
    # (and the latency monitor left alone: FakeRun has no --destructive)
    assert [type(r) for r in found] == [records.NvmeFacts, records.LatencyMonitor]
    assert found[1].action == "not sent" and not [c for c in drive.calls if "set-feature" in c]
    assert "fdp_stats" in found[0].refused and found[0].facts["id_ctrl"]
    assert sum("--log-id=0x22" in c for c in drive.calls) == 1      # asked at test start only


def test_a_failed_read_never_fails_the_run(tmp_path, monkeypatch):
    def missing(tool, package):
        raise commands.ToolMissing(f"{tool} not found: apt-get install {package}")
    monkeypatch.setattr(commands, "require", missing)
    run = FakeRun(tmp_path)
    steps(run)
    rec, monitor = ledger(run)
    assert rec.facts == {} and "nvme not found" in rec.error
    assert run.lines[0] == f"[pts iops] NVMe host facts not read: {rec.error}"
    assert monitor.action == "not sent" and len(run.lines) == 2    # no --destructive


def test_not_nvme_reads_and_records_nothing(tmp_path, monkeypatch):
    drive = install(monkeypatch, STATS)
    for device in (dataclasses.replace(NVME, transport="loop"),
                   dataclasses.replace(NVME, emulated=True)):
        run = FakeRun(tmp_path)
        run.device = device
        steps(run)
        assert ledger(run) == [] and drive.calls == []


def test_the_record_is_what_nvme_facts_as_record_gives(tmp_path, monkeypatch):
    """The ledger line has the shape of pts.tools.nvme_facts.Facts.as_record (type, moment,
    facts, files, refused), plus folder and error."""
    install(monkeypatch, STATS)
    run = FakeRun(tmp_path)
    steps(run, rounds=0)
    line = json.loads((tmp_path / "ledger.jsonl").read_text().splitlines()[0])
    assert {"type", "moment", "facts", "files", "refused"} <= set(line)
    assert line["type"] == "nvme_facts" and line["moment"] == "test start"
