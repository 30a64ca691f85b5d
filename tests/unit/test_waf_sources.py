"""The WAF from each media source a test's records carry (pts.stored.waf.from_records): a
drive with both NVMe logs (Endurance Group Information, log 09h: Media Units Written in 10^9
bytes; OCP SMART extended, log C0h: Physical Media Units Written in bytes) has its media
writes from 09h and the C0h page beside them (`ocp_c0`). Both WAFs come from the same
records, steps and host bytes; the headline is the finest-resolution source with a value;
the counters page has a line for each, the export a `sources` list.

The first case is QEMU 10.0.2's controller in a subsystem, as recorded in tests/data/qemu-10
(its README): read through the suite's own pts.device.media_writes with nvme-cli answering
from those files, after 1,600 and 2,624 MiB written (fio wrote the last 1 GiB in between)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pts.device import media_writes
from pts.export import json_doc
from pts.report.pages.counters import waf_block
from pts.results import records
from pts.results.ledger import Ledger
from pts.stored import waf
from pts.stored.data import load_run
from pts.tools import nvme, nvme_ocp
from tests.support.helpers import DATA, RecordedRunner, Reply
from tests.support.synthetic.drive_logs import c0h_bytes
from tests.support.synthetic.runfactory import RunFolder, run_json

QEMU10 = DATA / "qemu-10"
GB, SMART_UNIT = 1_000_000_000, 512_000
GIB = 1 << 30
DEV = "/dev/nvme9n1"


def qemu10_steps(monkeypatch, tmp_path) -> list[records.Record]:
    """Two steps of QEMU 10's drive as pts.device.media_writes records them (log 09h gives
    the media writes, C0h is kept beside), and fio's 1 GiB between them."""
    RecordedRunner({("nvme", "id-ns"): [Reply(out="nvme-id-ns.json")],
                    ("nvme", "endurance-log"): [Reply(out=f"nvme-endurance-log_after-{m}MiB.json")
                                                for m in (1600, 2624)],
                    ("nvme", "get-log"): [  # its C0h bytes: the JSON's page encoded
                        Reply(raw=c0h_bytes(f"nvme-ocp-smart-add-log_after-{m}MiB.json", QEMU10))
                        for m in (1600, 2624)],
                    ("nvme", "ocp", "smart-add-log"): [
                        Reply(out=f"nvme-ocp-smart-add-log_after-{m}MiB.json")
                        for m in (1600, 2624)],
                    ("nvme", "ocp", "latency-monitor-log"): [Reply(
                        rc=1, err="nvme-ocp-latency-monitor-log_refused.stderr.txt")]},
                   data=QEMU10).install(monkeypatch)
    log = tmp_path / "commands.log"
    first, second = (media_writes.nvme_counters(DEV, log) for _ in range(2))
    return [records.DeviceCounters(test="iops", when="after purge", round=None,
                                   source="smart-log", counters=first),
            point(1, GIB),
            records.DeviceCounters(test="iops", when="test end", round=None,
                                   source="smart-log", counters=second)]


def point(rnd, written):
    return records.Point(test="iops", round=rnd, index=0, rw_mix="0/100", read_pct=0,
                         block_size=1 << 20, na=False, measured={"write_bytes": written})


def test_qemu10_log_09h_too_coarse_c0h_gives_the_headline(monkeypatch, tmp_path):
    """QEMU's 09h counter stays 1 unit from 1,600 to 2,624 MiB (0 units moved: under 100 of
    10^9 bytes, not given); C0h moved 2,751,463,424 - 1,677,721,600 = 1,073,741,824 bytes,
    fio wrote 1,073,741,824: WAF 1.0 exactly, the headline."""
    steps = qemu10_steps(monkeypatch, tmp_path)
    assert steps[0].counters["media_source"] == media_writes.ENDURANCE
    found = waf.from_records(steps, Path("."))
    assert (found.source, found.unit, found.value) == (media_writes.OCP, 1, 1.0)
    assert (found.test.media_bytes, found.test.host_bytes) == (GIB, GIB)
    assert found.test.host_source == waf.HOST_FIO
    (log09,) = found.others
    assert (log09.source, log09.unit, log09.value) == (media_writes.ENDURANCE, GB, None)
    assert log09.test.media_bytes == 0 and log09.test.host_bytes == GIB    # same host bytes
    assert log09.note.startswith("not given: 1.07 GB of host writes and 0 GB of media writes")
    assert "the media counter at 1 GB resolution: under 100 units" in log09.note
    assert (log09.test.start, log09.test.end) == (found.test.start, found.test.end)
    # the counters page: both lines, each naming its log and its resolution
    lines = [f.text for f in waf_block(found)]
    assert lines[0].startswith("WAF 1.00 over the test (after purge to test end): media "
                               "writes 1.074 GB (ocp smart-add-log: Physical Media Units "
                               "Written, 1 B resolution) / host writes 1.074 GB (the suite's "
                               "fio (ledger)).")
    assert lines[-1] == (f"WAF from nvme endurance-log: Media Units Written, 1 GB resolution: "
                         f"{log09.note}.")
    # the export: the headline's keys as before, and both sources
    doc = found.as_dict()
    assert (doc["value"], doc["source"], doc["media_bytes"]) == (1.0, media_writes.OCP, GIB)
    assert [(s["source"], s["unit"], s["value"], s["headline"]) for s in doc["sources"]] == [
        (media_writes.OCP, 1, 1.0, True), (media_writes.ENDURANCE, GB, None, False)]
    assert doc["sources"][1]["note"] == log09.note


def smart_step(when, rnd, host_units, endurance_units, c0_bytes):
    """An NVMe drive with both logs: SMART host units, log 09h media units, C0h bytes (the
    page as media_writes.c0_summary keeps it; None: C0h not read at this step)."""
    page = None if c0_bytes is None else {"version": 5, "guid": nvme_ocp.OCP_C0_GUID,
                                          "fields": {"physical_media_units_written": c0_bytes},
                                          "not_supported": [], "not_in_version": []}
    counters = {"host_writes": host_units, "page_size": SMART_UNIT,
                **media_writes.keys(endurance_units * GB, media_writes.ENDURANCE,
                                    unit=nvme.ENDURANCE_UNIT_BYTES),
                media_writes.OCP_C0: page}
    return records.DeviceCounters(test="iops", when=when, round=rnd, source="smart-log",
                                  counters=counters)


def test_both_fine_gives_two_values_and_the_finer_is_the_headline():
    """09h moved 200 units (200 GB), C0h 200,512,000,000 bytes, the SMART host counter
    312,500 units (160 GB): 1.25 from 09h, 1.2532 from C0h; the headline is C0h's."""
    found = waf.from_records([smart_step("after purge", None, 0, 0, 0),
                              smart_step("test end", None, 312_500, 200, 200_512_000_000)],
                             Path("."))
    assert found.source == media_writes.OCP
    assert found.value == pytest.approx(200_512_000_000 / 160e9)
    (log09,) = found.others
    assert log09.value == pytest.approx(1.25) and log09.note == ""
    assert found.test.host_source == log09.test.host_source == waf.HOST_DRIVE
    assert found.test.host_bytes == log09.test.host_bytes == 160 * GB
    lines = [f.text for f in waf_block(found)]
    assert lines[0].startswith("WAF 1.25 over the test")
    assert "(ocp smart-add-log: Physical Media Units Written, 1 B resolution)" in lines[0]
    assert lines[-1].startswith("WAF from nvme endurance-log: Media Units Written, 1 GB "
                                "resolution: 1.25 over the test (after purge to test end): "
                                "media writes 200.0 GB / host writes 160.0 GB (the drive's "
                                "host-write counter).")
    assert [s["value"] for s in found.as_dict()["sources"]] == [found.value, log09.value]


def test_c0h_only_is_one_source():
    """A drive without an Endurance Group: the media keys come from C0h itself, its page is
    beside them, and there is one source, not the same counter twice."""
    def step(when, host, c0):
        c = smart_step(when, None, host, 0, c0).counters
        c |= media_writes.keys(c0, media_writes.OCP)
        return records.DeviceCounters(test="iops", when=when, round=None, source="smart-log",
                                      counters=c)
    found = waf.from_records([step("after purge", 0, 0), step("test end", 312_500, 180 * GB)],
                             Path("."))
    assert (found.source, found.others) == (media_writes.OCP, ())
    assert found.value == pytest.approx(180 / 160)
    assert len(found.as_dict()["sources"]) == 1
    assert [f.text for f in waf_block(found)][0].startswith(
        "WAF 1.12 over the test (after purge to test end): media writes 180.0 GB (ocp "
        "smart-add-log: Physical Media Units Written) / host")


def test_09h_only_is_unchanged():
    """Records without a C0h page (a run recorded before it was kept, or a drive without
    C0h): log 09h alone, the page's line as before (no resolution in the source's name)."""
    found = waf.from_records([smart_step("after purge", None, 1_000, 40, None),
                              smart_step("test end", None, 1_000 + 5_860, 43, None)],
                             Path("."))
    assert (found.source, found.value, found.others) == (media_writes.ENDURANCE, None, ())
    (shown,) = waf_block(found)
    assert shown.text == f"WAF: {found.note} ({media_writes.ENDURANCE})."


def test_c0h_not_read_at_a_middle_step(tmp_path):
    """C0h's read failed after round 1 (ocp_c0 None there) and 09h was read: the C0h WAF still
    spans after purge to test end, over the same host bytes as 09h's, and names the step it
    lacks; its round 2 interval starts at the last C0h reading (after purge). The export
    (pts.export.json_doc.waf_doc, from a ledger) carries both sources."""
    steps = [smart_step("after purge", None, 0, 0, 0),
             smart_step("after round 1", 1, 156_250, 100, None),
             smart_step("after round 2", 2, 312_500, 200, 240 * GB),
             smart_step("test end", None, 312_500, 200, 240 * GB)]
    found = waf.from_records(steps, Path("."))
    assert found.source == media_writes.OCP and found.value == pytest.approx(1.5)
    assert found.unread == ("after round 1: not read at this step: no C0h page recorded at "
                            "this step",)
    assert [(r.round, r.start, r.value) for r in found.per_round] == [(2, "after purge", 1.5)]
    (log09,) = found.others
    assert log09.value == pytest.approx(1.25) and log09.unread == ()
    assert [(r.round, r.value) for r in log09.per_round] == [(1, 1.25), (2, 1.25)]
    assert "Not read at" not in " ".join(f.text for f in waf_block(found)[-1:])
    assert "Media-write counter not read at: after round 1: not read at this step" in \
        " ".join(f.text for f in waf_block(found))
    folder = RunFolder(tmp_path / "run", run_json()).path
    ledger = Ledger(folder / "ledger.jsonl")
    for rec in steps:
        ledger.append(rec)
    ledger.close()
    run = load_run(folder)
    doc = json_doc.waf_doc(run, run.tests[0])
    assert doc["waf"]["value"] == pytest.approx(1.5)
    assert [(s["source"], round(s["value"], 4)) for s in doc["waf"]["sources"]] == [
        (media_writes.OCP, 1.5), (media_writes.ENDURANCE, 1.25)]
