"""Media writes from the drive's own counters (pts.device.media_writes, pts.tools.nvme,
pts.tools.smartctl) and the write amplification computed from them (pts.stored.waf), from
files in tests/data/recorded (constructed from nvme-cli's printers: see its README) and
QEMU 7.2's recorded answers."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pts.device import media_writes
from pts.procedure.round_measure import LEARNING
from pts.report.pages import counters as counters_page
from pts.report.pages.counters import waf_block
from pts.results import records
from pts.results.ledger import Ledger
from pts.stored import waf
from pts.stored.data import load_run
from pts.tools import commands, nvme, nvme_ocp, smartctl
from tests.support.helpers import QEMU_DATA, RECORDED, RecordedRunner, Reply
from tests.support.synthetic.drive_logs import c0h_bytes
from tests.support.synthetic.runfactory import RunFolder, run_json

DEV = "/dev/nvme9n1"


def test_endurance_log_media_units_written():
    """Log 09h counts in units of 10^9 bytes ("reported in billions", NVMe Base
    Specification), not the SMART log's 512,000 bytes: the constructed file's 1,851 media
    units are 1,851 x 1,000,000,000 = 1,851,000,000,000 bytes (1.851 TB), where 512,000-byte
    units would have made 947,712,000 bytes, 1,953.125 times too few."""
    host, media = nvme.parse_endurance_log(
        (RECORDED / "nvme-endurance-log_constructed.json").read_text())
    assert (host, media) == (1_234, 1_851)          # units of 10^9 bytes
    assert nvme.ENDURANCE_UNIT_BYTES == 1_000_000_000


def test_ocp_physical_media_units_written_is_128_bit_bytes():
    found = nvme_ocp.parse_ocp_smart_add_log(
        (RECORDED / "nvme-ocp-smart-add-log_v1_constructed.json").read_text())
    assert found == (1 << 64) + 527_805_403_860_992
    assert nvme_ocp.parse_ocp_smart_add_log('{"physical_media_units_written": "4096"}') == 4096


def test_ocp_latency_monitor_buckets():
    log = nvme_ocp.parse_ocp_latency_monitor(
        (RECORDED / "nvme-ocp-latency-monitor-log_constructed.json").read_text())
    assert log["Active Bucket Counter"]["Bucket 0"] == {"Read": 12, "Write": 3,
                                                        "Deallocate/TRIM": 0}
    assert log["Active Measured Latency"]["Bucket 1"]["Read"] == 180
    assert log["Active Bucket Timer"] == 1250
    with pytest.raises(nvme.NvmeError, match="no active bucket counters"):
        nvme_ocp.parse_ocp_latency_monitor('{"Feature Status": 1}')


def test_sata_media_writes_only_from_a_named_nand_attribute():
    h = smartctl.parse((RECORDED / "smartctl-json_ata_intel-nand-writes_constructed.json")
                       .read_text())
    assert (h.media_bytes, h.media_attribute) == (1_831_054 << 25,
                                                  "ATA attribute 243 NAND_Writes_32MiB")
    assert (h.sectors_written, h.sector_bytes) == (81_920_000_000, 512)
    hdd = smartctl.parse((RECORDED / "smartctl-json_ata_wd5002abys.json").read_text())
    assert hdd.media_bytes is None and hdd.media_attribute is None


def test_qemu_drive_reports_none_and_is_asked_once(monkeypatch, tmp_path):
    """QEMU 7.2: Identify Namespace ENDGID 0 (recorded), C0h refused as nvme-cli 2.3's OCP
    plugin prints it there (the status as a number, 'ret = 16386' = 0x4002, Invalid Field in
    Command; recorded in the guest), the latency monitor with the status QEMU answers a log
    page it lacks by name (recorded for its sanitize log): not reported, and the second step
    asks nothing more."""
    runner = RecordedRunner({("nvme", "id-ns"): [Reply(out="nvme-id-ns.json")],
                             ("nvme", "get-log"): [Reply(   # QEMU 10's words for a log it lacks
                                 rc=1, err="../qemu-10/nvme-get-log-c3h_refused.stderr.txt")],
                             ("nvme", "ocp"): [Reply(
                                 rc=1, err="nvme-sanitize-log_invalid-field.stderr.txt")]},
                            data=QEMU_DATA).install(monkeypatch)
    log = tmp_path / "commands.log"
    first = media_writes.nvme_counters(DEV, log)
    assert first["media_bytes"] is None and first["latency_monitor"] is None
    assert first["media_note"].startswith("not reported by this drive: endgid: the namespace "
                                          "is in no Endurance Group")
    asked = len(runner.calls)
    assert asked == 3      # id-ns, get-log 0xc0 (C0h's bytes), ocp latency-monitor-log
    assert media_writes.nvme_counters(DEV, log) == first
    assert len(runner.calls) == asked


def test_endurance_group_drive(monkeypatch, tmp_path):
    """A drive with log 09h and C0h (QEMU 10's NVMe controller in a subsystem has both): the
    media writes from log 09h, and the C0h page read at the same step and kept whole."""
    id_ns = (QEMU_DATA / "nvme-id-ns.json").read_text().replace('"endgid":0', '"endgid":1')
    runner = RecordedRunner({("nvme", "id-ns"): [Reply(stdout=id_ns)],
                             ("nvme", "endurance-log"): [Reply(
                                 out="nvme-endurance-log_constructed.json")],
                             ("nvme", "get-log"): [Reply(raw=c0h_bytes(
                                 "nvme-ocp-smart-add-log_v1_constructed.json"))],
                             ("nvme", "ocp", "smart-add-log"): [Reply(
                                 out="nvme-ocp-smart-add-log_v1_constructed.json")],
                             ("nvme", "ocp"): [Reply(
                                 out="nvme-ocp-latency-monitor-log_constructed.json")]}
                            ).install(monkeypatch)
    found = media_writes.nvme_counters(DEV, tmp_path / "c.log")
    assert found["media_bytes"] == 1_851_000_000_000        # 1,851 x 10^9 bytes
    assert (found["media_source"], found["media_unit"]) == (media_writes.ENDURANCE,
                                                            1_000_000_000)
    assert found["latency_monitor"]["Active Bucket Timer"] == 1250
    c0 = found[media_writes.OCP_C0]
    assert c0 is not None, "C0h not read beside log 09h"
    assert c0["fields"]["physical_media_units_written"] == (1 << 64) + 527_805_403_860_992
    assert (c0["source"], c0["cross_check"]) == ("bytes", [])    # nvme-cli's JSON agrees
    assert ("nvme", "get-log", "/dev/nvme9", "--log-id=0xc0", "--log-len=512",
            "--raw-binary") in runner.calls
    # the next step asks the logs again, not Identify Namespace (its ENDGID is kept)
    asked = [c[:2] for c in runner.calls]
    again = media_writes.nvme_counters(DEV, tmp_path / "c.log")
    assert again["media_bytes"] == found["media_bytes"]
    assert [c[:2] for c in runner.calls[len(asked):]].count(("nvme", "id-ns")) == 0
    assert asked.count(("nvme", "id-ns")) == 1
    assert ("nvme", "endurance-log", "/dev/nvme9", "--group-id=1",
            "--output-format=json") in runner.calls


def dc(when, rnd, host_pages, nand_pages, **extra):
    counters = {"host_writes": host_pages, "nand_writes": nand_pages, "page_size": 4096}
    return records.DeviceCounters(test="iops", when=when, round=rnd, source="emulator",
                                  counters=counters | media_writes.emulator(counters) | extra)


def point(rnd, index, written):
    return records.Point(test="iops", round=rnd, index=index, rw_mix="0/100", read_pct=0,
                         block_size=4096, na=False, measured={"write_bytes": written})


def wipc(written):
    return records.Wipc(test="iops", block_size=131072, bytes_expected=written,
                        bytes_written=written, seconds=1.0, thread_count=1, queue_depth=1,
                        raw="raw/wipc.json")


# An emulated SSD: the purge writes nothing; WIPC 400 MB at WAF 1.0; round 1 two points of
# 40.96 MB each, NAND 2.0x; round 2 the same at 3.0x.
LEDGER = [dc("test start", None, 0, 0), dc("after purge", None, 0, 0),
          wipc(409_600_000), dc("after WIPC", None, 100_000, 100_000),
          point(1, 0, 40_960_000), point(1, 1, 40_960_000),
          dc("after round 1", 1, 120_000, 140_000),
          point(2, 0, 40_960_000), point(2, 1, 40_960_000),
          dc("after round 2", 2, 140_000, 200_000),
          dc("test end", None, 140_000, 200_000)]


def test_waf_per_test_and_per_round_from_a_synthetic_ledger():
    found = waf.from_records(LEDGER, Path("."))
    assert found.source == "emulator FTL" and found.note == ""
    host = 409_600_000 + 4 * 40_960_000
    assert (found.test.media_bytes, found.test.host_bytes) == (200_000 * 4096, host)
    assert found.value == pytest.approx(200_000 * 4096 / host)
    assert found.test.drive_host_bytes == found.test.fio_bytes == host    # both agree here
    assert found.test.host_source == waf.HOST_DRIVE
    assert [(r.round, r.value) for r in found.per_round] == [(1, 2.0), (2, 3.0)]
    assert (found.test.start, found.test.end) == ("after purge", "test end")
    text = waf_block(found)[0].text
    assert "WAF 1.43" in text and "(emulator FTL)" in text and "1: 2.00, 2: 3.00" in text


def test_waf_not_reported_and_unknown_host_writes():
    none = [records.DeviceCounters(test="iops", when=w, round=None, source="smart-log",
                                   counters=media_writes.keys(None, None, "endgid: 0"))
            for w in ("after purge", "test end")]
    found = waf.from_records(none, Path("."))
    assert (found.source, found.value) == (None, None)
    assert waf_block(found)[0].text == "WAF: not reported by this drive: endgid: 0."
    # A drive without a host-write counter (OCP log only): the suite's fio bytes divide,
    # and a point whose fio JSON is lost leaves the test and its round without a WAF.
    bare = [dc_without_host(r) for r in LEDGER]
    assert waf.from_records(bare, Path(".")).test.host_source == waf.HOST_FIO
    assert waf.from_records(bare, Path(".")).value == pytest.approx(
        waf.from_records(LEDGER, Path(".")).value)
    lost = bare[:5] + [records.Point(test="iops", round=1, index=1, rw_mix="0/100",
                                     read_pct=0, block_size=4096, na=False,
                                     measured={"raw": "raw/gone.json"})] + bare[6:]
    found = waf.from_records(lost, Path("."))
    assert found.value is None and "not all in the ledger" in found.note
    assert [r.round for r in found.per_round if r.value is not None] == [2]


def dc_without_host(rec):
    if not isinstance(rec, records.DeviceCounters):
        return rec
    kept = {k: v for k, v in rec.counters.items() if k != "host_writes"}
    return records.DeviceCounters(test=rec.test, when=rec.when, round=rec.round,
                                  source=rec.source, counters=kept)


def test_a_round_measured_again_divides_by_the_drive_counter():
    """The demo's case: round 1 measured again (round_mode); its first attempt wrote 81.92 MB
    that no point record holds. The drive counted them: the WAF divides by its count."""
    again = records.RoundMode(test="iops", round=1, mode="pipelined", reason="measured again")
    ledger = LEDGER[:4] + [again] + LEDGER[4:6] + [dc("after round 1", 1, 140_000, 160_000)]
    found = waf.from_records(ledger, Path("."))
    (r1,) = found.per_round
    assert (r1.fio_bytes, r1.drive_host_bytes, r1.host_source) == (None, 40_000 * 4096,
                                                                   waf.HOST_DRIVE)
    assert r1.value == 1.5
    assert "what the suite's fio wrote is not all in the ledger" in waf_block(found)[0].text


def test_an_older_emulator_ledger_without_media_keys_gives_the_same_waf():
    """Emulator records written before the media keys existed (the reference run) hold only
    the FTL's nand_writes: they read through media_writes.emulator, same figures."""
    older = [dataclasses.replace(r, counters={k: v for k, v in r.counters.items()
                                              if not k.startswith("media_")})
             if isinstance(r, records.DeviceCounters) else r for r in LEDGER]
    assert all("media_bytes" not in r.counters for r in older
               if isinstance(r, records.DeviceCounters))
    found, new = waf.from_records(older, Path(".")), waf.from_records(LEDGER, Path("."))
    assert found.source == "emulator FTL" and found.value == new.value
    assert [(r.round, r.value) for r in found.per_round] == [(1, 2.0), (2, 3.0)]


def test_a_test_without_device_counters_says_so():
    found = waf.from_records([point(1, 0, 4096)], Path("."))
    assert found.value is None and found.note == waf.NOT_RECORDED


def test_a_first_round_run_stonewalled_to_learn_drains_loses_no_writes():
    """The learning round's round_mode record measured nothing twice: its points hold every
    write, so the suite's fio bytes stay known (unlike a round measured again)."""
    learning = records.RoundMode(test="iops", round=1, mode="stonewalled",
                                 reason=f"round 1: {LEARNING} (...)")
    ledger = LEDGER[:4] + [learning] + LEDGER[4:]
    found = waf.from_records(ledger, Path("."))
    assert found.per_round[0].fio_bytes == 2 * 40_960_000
    assert found.test.fio_bytes == waf.from_records(LEDGER, Path(".")).test.fio_bytes


def test_the_counters_page_shows_the_last_latency_monitor_of_the_test(tmp_path):
    """The OCP latency monitor recorded beside the health log (issue 33 §3): the test's last
    step that has one is on its counters page, every bucket's counts as the log gave them."""
    log = nvme_ocp.parse_ocp_latency_monitor(
        (RECORDED / "nvme-ocp-latency-monitor-log_constructed.json").read_text())
    older = {g: {b: {k: 0 for k in io} for b, io in buckets.items()}
             for g, buckets in log.items() if isinstance(buckets, dict)}
    folder = RunFolder(tmp_path / "run", run_json()).path
    ledger = Ledger(folder / "ledger.jsonl")
    for rec in (dc("after purge", None, 0, 0, latency_monitor=older),
                dc("after round 1", 1, 10, 20, latency_monitor=log),
                dc("test end", None, 10, 20, latency_monitor=None),
                records.DeviceCounters(test="latency", when="test end", round=None,
                                       source="emulator", counters={})):
        ledger.append(rec)
    ledger.close()
    run = load_run(folder)
    assert waf.latency_monitor(run, "iops") == ("after round 1", log)
    (shown,) = counters_page.latency_monitor("iops", run)
    text = shown.text
    assert text.startswith("OCP latency monitor (after round 1): Active Bucket Counter: ")
    groups = [(g, b) for g, b in log.items() if isinstance(b, dict)]
    assert len(groups) == 2
    for group, buckets in groups:      # each group with all its buckets, in the log's order
        assert f"{group}: " + "; ".join(f"{b} " + " ".join(f"{k} {v:,}" for k, v in io.items())
                                        for b, io in buckets.items()) in text
    assert counters_page.latency_monitor("latency", run) == []


def test_a_failed_first_read_is_asked_again_and_says_what_happened(monkeypatch, tmp_path):
    """A first OCP read that fails without the drive refusing the log (here nvme-cli times
    out) is not "not reported by this drive" for the whole run: the step's note says it was
    not read and why, and the next step asks again and gets the counter. The bytes' read
    (get-log) failing otherwise than by a refusal falls back to nvme-cli's JSON, said so."""
    timeout = commands.ToolFailed("nvme did not finish within 60 s: nvme ocp smart-add-log")
    runner = RecordedRunner({("nvme", "id-ns"): [Reply(out="nvme-id-ns.json")],
                             ("nvme", "get-log"): [Reply(raise_=commands.ToolFailed(
                                 "nvme did not finish within 60 s: nvme get-log"))],
                             ("nvme", "ocp", "smart-add-log"): [
                                 Reply(raise_=timeout),
                                 Reply(out="../recorded/nvme-ocp-smart-add-log_v1_constructed"
                                           ".json")],
                             ("nvme", "ocp", "latency-monitor-log"): [Reply(
                                 rc=1, err="nvme-sanitize-log_invalid-field.stderr.txt")]},
                            data=QEMU_DATA).install(monkeypatch)
    log = tmp_path / "commands.log"
    first = media_writes.nvme_counters(DEV, log)
    assert first["media_bytes"] is None
    assert first["media_note"].startswith("not read at this step: ")
    assert "ocp c0h: nvme did not finish within 60 s: nvme ocp" in first["media_note"]
    second = media_writes.nvme_counters(DEV, log)
    assert (second["media_bytes"], second["media_source"]) == ((1 << 64) + 527_805_403_860_992,
                                                               media_writes.OCP)
    page = second[media_writes.OCP_C0]
    assert (page["source"], page["bytes_error"]) == (
        "nvme-cli JSON", "nvme did not finish within 60 s: nvme get-log")
    assert runner.calls.count(("nvme", "ocp", "smart-add-log", "/dev/nvme9", "-o",
                               "json")) == 2
    # the latency monitor was refused (Invalid Field): asked once only
    assert sum(c[:3] == ("nvme", "ocp", "latency-monitor-log") for c in runner.calls) == 1
    # the WAF starts at the first step read, and the page names the step that was not
    steps = [records.DeviceCounters(test="iops", when=w, round=None, source="smart-log",
                                    counters=c | {"host_writes": h, "page_size": 512_000})
             for w, c, h in (("after purge", first, 0), ("after WIPC", second, 10),
                             ("test end", second, 20))]
    found = waf.from_records(steps, Path("."))
    assert found.test.start == "after WIPC"
    assert found.unread == ("after purge: " + first["media_note"],)
    shown = " ".join(f.text for f in waf_block(found))
    assert "Media-write counter not read at: after purge: not read at this step: " in shown


@pytest.mark.parametrize("text, refused", [
    ("ERROR : OCP : Failure reading the C0 Log Page, ret = 16386", True),   # 0x4002
    ("Failure reading the C3 Log Page, ret = 16649", True),        # 0x4109 Invalid Log Page
    ("ret = 1", True),                                              # Invalid Command Opcode
    ("ret = 16390", False),         # 0x4006 Internal Error: asked again at the next step
    ("ret = -5", False),            # an errno (EIO), not a status
    ("NVMe status: Invalid Field in Command: ... (0x4002)", True),
    ("nvme did not finish within 60 s", False)])
def test_a_refusal_by_name_or_by_number(text, refused):
    assert media_writes.is_refusal(text) is refused
