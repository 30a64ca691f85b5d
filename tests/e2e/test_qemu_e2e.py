"""End to end on an emulated NVMe drive: one boot of a QEMU (TCG) guest (tests/support/guest) runs
the suite as users run it, `pytest pts/suite/test_iops.py --device /dev/nvme0n1 --destructive`,
against QEMU 10's NVMe controller (`ocp=on`, in an NVMe subsystem: tests/support/guest/qemu.py),
and these tests check what it recorded and reported.

In the one boot: raw nvme-cli admin commands (kept for reference), a known write of 10^9
bytes to the drive's second namespace (log 09h's unit, below), a --dry-run with --purge auto
(plans NVMe Format SES=1 because SANICAP is 0), a run with --purge sanitize (must stop before
writing anything: QEMU has no sanitize, 10.0 neither), and the real IOPS run with --purge auto
(Format SES=1, write cache set through Features 06h, at every step the smart-log, the
Endurance Group log 09h and the OCP C0h log through Debian's nvme-cli 2.3), after the
over-temperature threshold was set below the drive's temperature: a real critical warning
from the controller at every step, so the run is a device-health failure with its spec
outcome kept (one run for what were two: a healthy run and a short hot one). After it the
guest's nvme-cli prints the C0h page (decoded and as bytes), log 09h and the SMART log, which
the tests read themselves to hold the product's figures and OCP verdicts against.
What QEMU 10's controller lacks (Sanitize, telemetry, the latency monitor C3h) and how its log
09h counts: docs/development.md, "The QEMU test guest".
The guest chroots into the host's / (read-only) and runs the project's venv.
The namespace is backed by the emulated SSD (pts.emulate): QEMU opens the FTL model's image
file on its FUSE mount, so the drive has a fresh-out-of-box state and the purge is seen
arriving at the model (the Format's deallocation of the whole namespace as TRIM).

The boot is shared with test_qemu_sata_sas.py (tests/support/qemu_guest.py, fixture `guest` in
conftest.py). Run alone: python -m pytest tests -m qemu -v (about 5 minutes under TCG; the
first run also fetches Debian's kernel package).
"""

from __future__ import annotations

import collections
import json
import re
import subprocess
import tempfile
from pathlib import Path

import pytest

from pts.device import media_writes
from pts.export.json_doc import waf_doc
from pts.results import records
from pts.results.ledger import read_ledger, read_records
from pts.stored import host_facts, host_judge, ocp_every_id, ocp_verdicts, waf
from pts.stored.data import load_run
from pts.stored.run_facts import run_facts
from pts.tools import nvme, nvme_ocp
from tests.support.guest import c0h
from tests.support.helpers import pdf_text
from tests.support.ptsrun import expected_outcomes, spec_rule
from tests.support.qemu10_drive import recorded_facts
from tests.support.qemu_guest import DISK_BYTES, KNOWN_BYTES, SERIAL

pytestmark = [pytest.mark.qemu, pytest.mark.slow,
              pytest.mark.needs("root", "qemu-system-x86_64", "busybox", "cpio", "depmod",
                                "pdftotext", "/dev/fuse", "mfusepy")]

def test_guest_ran_its_script_without_nvme_timeouts(guest):
    assert guest.result.returncode == 0, guest.result.log_text
    log = guest.result.kernel_log()        # GuestError when the guest wrote no dmesg.txt
    assert "timeout" not in log.lower(), log


def test_guest_cpu_gives_numpy_its_baseline_and_no_avx2(guest):
    """The guest's named CPU model (not `-cpu max`): numpy's x86-64-v2 baseline is there, and
    AVX2 is not, so numpy never dispatches the AVX2 sort whose masked gathers QEMU 7.2's TCG
    emulates wrongly (tests/support/guest/qemu.py, CPU_MODEL)."""
    assert guest.rc("cpu-features") == 0, guest.text("cpu-features")
    features = json.loads((guest.out / "cpu-features.out").read_text())
    assert features["X86_V2"] is True
    assert features["AVX2"] is False and features["AVX"] is False


def test_qemu_has_no_sanitize(guest):
    """QEMU 10.0's controller still has no Sanitize (SANICAP 0, the command's opcode refused)."""
    assert json.loads(guest.text("id-ctrl"))["sanicap"] == 0
    assert guest.rc("sanitize-raw") != 0
    assert "Invalid Command Opcode" in guest.text("sanitize-raw")


def test_dry_run_plans_format_because_sanicap_is_zero(guest):
    out = guest.text("dry-run")
    assert guest.rc("dry-run") == 0, out[-3000:]
    assert ("purge: NVMe Format SES=1 (user data erase) [auto: SANICAP = 0 (no Sanitize), so "
            "Format NVM]: nvme format /dev/nvme0n1 --ses=1 --lbaf=0 --force") in out
    assert "nvme set-feature /dev/nvme0 --feature-id=6 --value=0" in out   # Enterprise: WCD


def test_purge_sanitize_fails_closed_before_writing(guest):
    out = guest.text("sanitize")
    assert guest.rc("sanitize") == 1, out[-3000:]
    (outcome,) = guest.junit("sanitize")["test_iops"]
    assert outcome[0] == "error"          # the measurement stopped: an ERROR, not a spec FAIL
    assert ("--purge sanitize: /dev/nvme0n1 supports no NVMe Sanitize action (Identify "
            "Controller SANICAP = 0x0). Nothing was erased") in out
    runs = list((guest.out.parent / "refused").glob("*/*"))
    records, _ = read_ledger(runs[0] / "ledger.jsonl")
    types = [r.data["type"] for r in records]
    assert "wipc" not in types and "point" not in types
    (purge,) = [r.data for r in records if r.data["type"] == "purge"]
    assert not purge["ok"] and purge["steps"] == [] and "SANICAP = 0x0" in purge["error"]
    assert [r.data["status"] for r in records if r.data["type"] == "test_end"] == ["error"]


def test_iops_run_identity(guest):
    """The run's outcome: a device-health failure (the critical warning, below) that keeps
    the spec outcome its recorded rounds give (recomputed here from its round records with
    the spec's steady-state rule: rounds, steady round, window, and whether steady state was
    reached), an item FAILURE, exit status 1; then the drive as the run identified it."""
    out = guest.text("suite")
    print(f"\nsuite in guest: {guest.seconds('suite'):.1f} s, rc {guest.rc('suite')}")
    folder = guest.run_folder()
    recs = [r.data for r in read_ledger(folder / "ledger.jsonl")[0]]
    expected = expected_outcomes(recs, spec_rule(folder))["iops"]
    (end,) = [r for r in recs if r["type"] == "test_end"]
    assert (end["status"], end["rounds"], end["steady_round"], end["window"]) == \
        (records.HEALTH_FAILURE, expected.rounds, expected.steady_round, expected.window), end
    spec_outcome = end["message"].split(". Spec outcome: ", 1)[1]
    assert spec_outcome.startswith("steady state NOT reached") == (not expected.passed), end
    assert guest.rc("suite") == 1, out[-4000:]
    ((tag, message),) = guest.junit("suite")["test_iops"]
    assert tag == "failure" and f"Spec outcome: {spec_outcome}" in message, out[-4000:]
    assert f"Spec outcome: {spec_outcome}" in pdf_text(guest.report(folder))
    device = json.loads((guest.run_folder() / "run.json").read_text())["device"]
    assert (device["model"], device["serial"], device["identity_source"]) == \
        ("QEMU NVMe Ctrl", SERIAL, "nvme id-ctrl")
    assert device["capacity_bytes"] == DISK_BYTES and device["transport"] == "nvme"


def test_iops_run_measured_its_host_ceiling_on_null_blk_and_removed_it(guest):
    """Issue 33 §1 on a kernel with null_blk (the guest loads it with nr_devices=0 and mounts
    configfs): the suite run with --host-ceiling auto made its RAM device through
    /sys/kernel/config/nullb, sized to the guest's memory, ran the IOPS test's heaviest
    points on it before the purge (each figure fio's own), and left nothing behind."""
    (c,) = guest.ledger("host_ceiling")
    assert c["error"] is None and c["device"] == "null_blk", c
    assert c["seconds"] == 1
    assert [(p["label"], p["block_size"]) for p in c["points"]] == [
        ("RND 4KiB 0/100", 4096), ("RND 64KiB 0/100", 65536)]
    for p in c["points"]:
        job = json.loads((guest.run_folder() / p["raw"]).read_text())["jobs"][0]
        assert job["job options"]["bs"] == str(p["block_size"])
        assert job["job options"]["rw"] == p["rw"]
        assert p["iops"] > 0
        assert p["iops"] == pytest.approx(job["read"]["iops"] + job["write"]["iops"], rel=1e-9)
        assert p["mbps"] == pytest.approx(
            (job["read"]["bw_bytes"] + job["write"]["bw_bytes"]) / 1e6, rel=1e-9)
    made = re.search(r"host ceiling: null_blk (/dev/\S+) \(([\d,]+) MiB", guest.text("suite"))
    assert made, guest.text("suite")[-4000:]
    print(f"\nhost ceiling in guest: {made.group(0)}; {c['points']}")
    # the device is gone after the run: no configfs folder, no /dev/nullbN
    assert (guest.out / "nullb-after").read_text().split() == []


def test_iops_run_captured_the_pci_function(guest):
    """The guest's /dev/nvme0n1 sits under a real (emulated) PCI function: the platform
    block names it and its interrupt vectors; the link values are those sysfs shows (null
    on a conventional PCI bus)."""
    plat = json.loads((guest.run_folder() / "run.json").read_text())["platform"]
    assert re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]",
                        plat["pcie_link"]["pci_function"]), plat
    assert plat["irq_affinity"], plat
    assert isinstance(plat["warnings"], list)


def test_iops_run_recorded_the_host_facts_and_an_fdp_waf_of_one_every_round(guest):
    """Issue 49 §3 on the live controller (ocp=on, in a subsystem with FDP: reclaim units of
    1 TiB, tests/support/guest/qemu.py SUBSYSTEM): at test start the run read every host
    fact (pts.conditioning.host_facts_step), bytes kept in the run folder; judged by the host
    rules they give, rule by rule, the verdicts of the recorded probe's answers
    (tests/data/qemu-10/fdp through the same reader: 51 PASS, 48 FAIL, 3 NOT APPLICABLE, 6 NOT
    CHECKED of the 108 rules of 2026-11-29 05:00 UTC), none NOT CHECKED for a fact not read;
    log 22h was read at every step after it, and each round's FDP WAF (media over host bytes
    written in the round) is exactly 1.000, its host bytes exactly what the round's fio
    wrote."""
    folder = guest.run_folder()
    view = load_run(folder)
    (rec,) = view.records_of(records.NvmeFacts)
    assert host_facts.facts(view) == rec
    assert (rec.test, rec.moment, rec.error, rec.folder) == \
        ("iops", "test start", None, "host-facts/iops"), rec
    assert (folder / rec.folder / rec.files["id_ctrl"]).stat().st_size == 4096
    assert rec.facts["id_ctrl"]["ctratt"] >> 19 & 1 and rec.facts["id_ns"]["endgid"] == 1
    ran = {"run": run_facts(view)}        # the run's own (META-PERF): the same for both
    live = {v.req_id: v for v in host_judge.judge(rec.facts | ran, "2.7")}
    print(f"\nhost rules on the live controller: "
          f"{dict(collections.Counter(v.verdict for v in live.values()))}")
    assert sorted(live) == host_judge.ids("2.7") and rec.refused == {}, rec.refused
    assert not [i for i, v in live.items() if "not read" in v.why]
    with tempfile.TemporaryDirectory() as tmp:
        recorded = {v.req_id: v for v in host_judge.judge(recorded_facts(Path(tmp)) | ran,
                                                          "2.7")}
    assert {i: v.verdict for i, v in live.items()} == \
        {i: v.verdict for i, v in recorded.items()}, {
            i: (v.verdict, v.why, recorded[i].verdict, recorded[i].why)
            for i, v in live.items() if v.verdict != recorded[i].verdict}
    stats = view.records_of(records.FdpStatistics)
    whens = [s.when for s in stats]
    rounds = [r["round"] for r in guest.ledger("round")]
    assert whens == ["test start", "after purge", "after WIPC"] + [
        f"after round {n}" for n in rounds] + ["test end"], whens
    assert all(s.error is None and s.endgid == 1 for s in stats)
    found = host_facts.fdp_rounds(view)
    print(f"FDP WAF per round: {[(r['round'], r['waf'], r['host_bytes']) for r in found]}")
    assert [r["round"] for r in found] == rounds
    for row in found:
        wrote = sum(p["write_bytes"] for p in guest.ledger("point")
                    if p["round"] == row["round"])
        assert row["host_bytes"] == wrote > 0, row
        assert row["waf"] == 1.0 and row["media_bytes"] == row["host_bytes"], row


def test_iops_run_purged_with_format_ses1_and_verified(guest):
    (purge,) = guest.ledger("purge")
    assert purge["method"] == "NVMe Format SES=1 (user data erase)" and purge["ok"]
    assert not purge["deviation"]
    assert purge["command"] == ["nvme", "format", "/dev/nvme0n1", "--ses=1", "--lbaf=0",
                                "--force", f"--timeout={4 * 3600 * 1000}"]
    assert "16 marker blocks written at sampled offsets before the purge were gone after it" \
        in purge["verification"]


def test_iops_run_set_the_write_cache(guest):
    caches = guest.ledger("write_cache")
    assert [c["when"] for c in caches] == ["before WIPC", "before test loop"]
    for c in caches:
        assert (c["required"], c["actual"], c["settable"], c["how"]) == \
            ("WCD", "disabled", True, "NVMe Set/Get Features 06h")


def test_iops_run_captured_smart_log(guest):
    smart = [r for r in guest.ledger("device_counters") if r["source"] == "smart-log"]
    whens = [r["when"] for r in smart]
    assert whens[:3] == ["test start", "after purge", "after WIPC"] and whens[-1] == "test end"
    written = [r["counters"]["data_units_written"] for r in smart]
    wipc = guest.ledger("wipc")[0]["bytes_written"]
    # WIPC wrote 2 x the capacity: the drive's own counter saw it (data units of 512,000 bytes)
    assert (written[2] - written[1]) * 512_000 >= wipc * 0.99
    assert written == sorted(written)
    # the over-temperature threshold was set below the drive's temperature before the run
    assert [r["counters"]["critical_warning"] for r in smart] == [0x02] * len(smart)
    # Media writes (issue 39 §2): QEMU 10's namespace is in Endurance Group 1 (a subsystem),
    # so log 09h gives them, in units of 10^9 bytes; C0h (ocp=on) is read beside it at every
    # step; the latency monitor (C3h) QEMU refuses (Invalid Field), at every step.
    for r in smart:
        c = r["counters"]
        assert (c["media_source"], c["media_unit"]) == (media_writes.ENDURANCE,
                                                        nvme.ENDURANCE_UNIT_BYTES), c
        assert c["latency_monitor"] is None, c
        assert c[media_writes.OCP_C0] is not None, c


def smart_counters(guest) -> list[records.DeviceCounters]:
    """The suite run's smart-log records (ledger order), typed."""
    found, _ = read_records(guest.run_folder() / "ledger.jsonl")
    return [r for r in found if isinstance(r, records.DeviceCounters) and r.test == "iops"
            and r.source == "smart-log"]


def test_c0h_read_at_every_step_with_its_version(guest):
    """`nvme ocp smart-add-log` at every step: QEMU 10 emulates log page version 5 with the
    OCP GUID, and fills Physical Media Units Written (bytes), rising with the writes."""
    smart = smart_counters(guest)
    pages = [r.counters[media_writes.OCP_C0] for r in smart]
    assert [p["version"] for p in pages] == [5] * len(smart)
    assert {p["guid"] for p in pages} == {nvme_ocp.OCP_C0_GUID}
    written = [p["fields"]["physical_media_units_written"] for p in pages]
    assert written == sorted(written) and written[-1] > written[0]


def test_waf_from_c0h_is_one_and_media_writes_match_fio(guest):
    """QEMU counts the host's writes as its media writes (hw/nvme: the block layer's written
    bytes), so the run's WAF from C0h is 1.00: the product's own figure (pts.stored.waf over
    the run's records, C0h's Physical Media Units Written at 1-byte resolution), which is the
    headline the report and the export give; and its difference over the run (after purge to
    test end) is what fio wrote, within 1 %."""
    run = load_run(guest.run_folder())
    (test,) = [t for t in run.tests if t.name == "iops"]
    found = waf.of_test(run, test)
    t = found.test
    print(f"\nC0h WAF {found.value}: media {t.media_bytes:,} B, drive host {t.drive_host_bytes:,}"
          f" B, fio {t.fio_bytes:,} B ({t.start} to {t.end})")
    assert (found.source, found.unit) == (media_writes.OCP, 1), found
    assert (t.start, t.end) == ("after purge", "test end")
    assert found.value == pytest.approx(1.0, abs=0.01), found
    assert t.fio_bytes and abs(t.media_bytes - t.fio_bytes) <= 0.01 * t.fio_bytes, t
    doc = waf_doc(run, test)["waf"]
    assert (doc["value"], doc["source"]) == (found.value, media_writes.OCP)
    assert [s["source"] for s in doc["sources"]] == [media_writes.OCP, media_writes.ENDURANCE]


def test_log_09h_unit_told_apart_by_a_known_write(guest):
    """Log 09h's unit (10^9 bytes), told apart by a known amount, not by what a run happens to
    write: before any run the guest wrote KNOWN_BYTES (10^9) to the drive's second namespace
    (same Endurance Group) with dd, and its nvme-cli printed logs 09h and C0h before and
    after. C0h (bytes) rose by exactly KNOWN_BYTES and 09h's Media Units Written went from 0
    to 1: one unit is 10^9 bytes, as the NVMe Base Specification has it. From then on QEMU's
    09h stays 1 (it never passes 1: docs/development.md), so every 09h reading of the run must
    be recorded as 1 x 10^9 media bytes: a unit of 512,000 (the SMART log's data unit) would
    give 512,000, one of a byte 1, and a reading dropped 0. And the run's last step agrees
    with what nvme-cli printed after it."""
    assert guest.rc("known-write") == 0, guest.text("known-write")
    assert guest.text("nsid").split() == ["1", "2"]        # /dev/nvme0n2 is namespace 2
    before, known, after = (json.loads(guest.text(n)) for n in ("09h-before", "09h-known",
                                                                "09h-after"))
    c0_before, c0_known = (c0h.printed(json.loads(guest.text(n)), "Physical media units written")
                           for n in ("c0h-before", "c0h-known"))
    assert c0_known - c0_before == KNOWN_BYTES, (c0_before, c0_known)
    assert c0_before < KNOWN_BYTES <= c0_known
    assert (int(before["media_units_written"]), int(known["media_units_written"])) == (0, 1)
    units = int(after["media_units_written"])
    assert units == 1, after
    smart = [r for r in guest.ledger("device_counters") if r["source"] == "smart-log"]
    assert len(smart) >= 9
    recorded = [(r["when"], r["counters"]["media_bytes"]) for r in smart]
    assert recorded == [(r["when"], units * 10**9) for r in smart], recorded
    assert {r["counters"]["media_unit"] for r in smart} == {10**9}


def test_waf_from_log_09h_is_not_given_at_its_resolution(guest):
    """Log 09h counts in 10^9 bytes: over the run it stays at 1 (the known write made it 1
    before the run, and QEMU 10.0's counter never passes 1: docs/development.md), so the
    product's WAF from 09h (beside the C0h headline, same steps and host bytes) is not given
    and the report's counters page says why with the resolution; its difference (0) agrees
    with the host's writes (a 64 MiB drive: well under one unit) within one unit."""
    run = load_run(guest.run_folder())
    (test,) = [t for t in run.tests if t.name == "iops"]
    found = waf.of_test(run, test)
    (log09,) = [w for w in found.sources if w.source == media_writes.ENDURANCE]
    t = log09.test
    assert log09 is not found and log09.value is None and log09.unit == nvme.ENDURANCE_UNIT_BYTES
    assert log09.note.startswith("not given: ") and "1 GB resolution" in log09.note, log09.note
    assert (t.start, t.end) == (found.test.start, found.test.end)
    assert t.host_bytes == found.test.host_bytes
    assert abs(t.media_bytes - t.host_bytes) < nvme.ENDURANCE_UNIT_BYTES, t
    text = subprocess.run(["pdftotext", str(guest.report(guest.run_folder())), "-"],
                          check=True, capture_output=True, text=True).stdout
    flat = " ".join(text.split())
    assert f"WAF from {log09.label()}: {log09.note}." in flat, log09.note
    (exported,) = [s for s in waf_doc(run, test)["waf"]["sources"]
                   if s["source"] == media_writes.ENDURANCE]
    assert (exported["value"], exported["note"]) == (None, log09.note)


def test_ocp_verdicts_hold_against_the_page_nvme_cli_read(guest):
    """The product's OCP v2.7 verdicts on the C0h requirements, held against facts it did not
    make: the C0h page as the guest's nvme-cli read it after the run (its bytes, and its
    decoded print), decoded here with the byte ranges of the spec's table
    (tests/support/guest/c0h.py), and each requirement's rule applied here: a field the page
    holds is given (PASS), the log page version must be 6 (QEMU 10 emulates 5: FAIL), the
    GUID the spec's (PASS), the DSSD version 2.7.0.0 (QEMU leaves it 0: FAIL). nvme-cli's
    print agrees with the bytes field by field; the run's last C0h record (no I/O since) holds
    the page's media counters; the reserved bytes are zero. SMART-31 (Power State Change
    Count, bytes 207:200): the page holds it and nvme-cli 2.3 does not print it; the product
    reads the page's bytes (issue 49 §1: a field nvme-cli did not print is not a field the
    drive lacks), so the rule's PASS applies. STD-LOG-2: nvme-cli read the SMART log (02h)."""
    page = (guest.out / "c0h-raw.out").read_bytes()
    assert guest.rc("c0h-raw") == 0 and len(page) == 512, guest.text("c0h-raw")[:300]
    doc = json.loads(guest.text("c0h-after"))
    for rid, (_, spans, keys) in c0h.FIELDS.items():
        for span, key in zip(spans, keys, strict=False):
            assert c0h.printed(doc, key) == c0h.value(page, span), (rid, key, span)
    assert c0h.printed(doc, "Log page version") == c0h.value(page, c0h.VERSION[0])
    assert c0h.printed(doc, "Log page GUID") == c0h.value(page, c0h.GUID[0])
    for name, (span, _) in c0h.DSSD.items():
        assert c0h.printed(doc, name) == c0h.value(page, span), name
    assert all(c0h.value(page, span) == 0 for span in c0h.RESERVED.values())
    last = [r for r in guest.ledger("device_counters") if r["source"] == "smart-log"][-1]
    assert last["when"] == "test end"
    for key, span in (("physical_media_units_written", (15, 0)),
                      ("physical_media_units_read", (31, 16))):
        assert last["counters"][media_writes.OCP_C0]["fields"][key] == c0h.value(page, span)

    expected = c0h.expected_verdicts(page)
    assert expected["SMART-31"][0] == "PASS"        # judged from the bytes (docstring)
    assert not c0h.FIELDS["SMART-31"][2] and "Power State Change Count" not in doc
    assert guest.rc("smart-after") == 0 and "data_units_written" in json.loads(
        guest.text("smart-after"))
    expected["STD-LOG-2"] = ("PASS", "nvme-cli read log 02h")
    found = {v.requirement.id: v for v in ocp_verdicts.summary(load_run(guest.run_folder()))
             .verdicts if v.requirement.version == "2.7"}
    assert set(expected) <= set(found), sorted(set(expected) - set(found))
    got = {rid: found[rid].verdict for rid in expected}
    assert got == {rid: verdict for rid, (verdict, _) in expected.items()}, \
        {rid: (got[rid], expected[rid], found[rid].reason) for rid in expected
         if got[rid] != expected[rid][0]}
    print(f"\nOCP v2.7 C0h verdicts held against the page: {len(expected)} requirements, "
          f"{sorted(rid for rid, (v, _) in expected.items() if v == 'FAIL')} FAIL")


def test_ocp_requirements_page_on_the_guest_run(guest):
    """The report's "OCP requirements" pages on the guest's NVMe run: their verdict line is
    the one pts.stored.ocp_every_id gives from the run's stored data (every ID of the v2.7
    text: the table's rows on its C0h bytes and SMART data, the host rules on the facts read
    at test start), and the C0h log page version the run read (5) is in the evidence shown.
    The run declared its form factor (--form-factor U.2/U.3: QEMU models none, the operator
    declares it): the other form factors' IDs are NOT APPLICABLE, the page says "declared".
    Issue 49's acceptance: at least 350 IDs judged (PASS, FAIL or NOT APPLICABLE)."""
    run = load_run(guest.run_folder())
    found = ocp_every_id.summary(run)
    assert found is not None and found.facts_at == "test start"
    assert (found.form_factor, found.form_factor_from) == ("U.2/U.3", "--form-factor")
    judged = found.of(ocp_verdicts.PASS, ocp_verdicts.FAIL, "NOT APPLICABLE")
    print(f"\nOCP v2.7 on the guest run: {found.counts_text}; judged {len(judged)}")
    e1s = next(v for v in found.verdicts if v.id == "FFE1S-1")
    assert (e1s.verdict, e1s.reason) == ("NOT APPLICABLE", "applies only to E1.S drives; this "
                                         "drive is U.2/U.3 (declared with --form-factor)")
    text = subprocess.run(["pdftotext", str(guest.report(guest.run_folder())), "-"],
                          check=True, capture_output=True, text=True).stdout
    flat = " ".join(text.split())
    line = f"{found.counts_text} of the {len(found.verdicts)} requirement IDs"
    print(f"\nOCP page on the guest run: {line}")
    assert line in flat
    assert len(found.of(ocp_verdicts.PASS)) > 50, found.counts   # C0h, SMART and host facts
    assert "C0h log page version 5" in flat
    assert "form factor U.2/U.3, declared with --form-factor" in flat
    assert len(judged) >= 350, found.counts


def test_purge_reached_the_emulated_ssd(guest):
    """The Format (SES=1) deallocated the namespace: the FTL model saw it as TRIM, and the
    WIPC + rounds that followed were real writes to the model."""
    assert guest.ftl_after["trims"] > guest.ftl_before["trims"]
    assert guest.ftl_after["formats"] > guest.ftl_before["formats"]   # back to FOB
    written = guest.ftl_after["host_writes"] - guest.ftl_before["host_writes"]
    wipc = guest.ledger("wipc")[0]["bytes_written"]
    assert written * guest.ftl_after["page_size"] >= wipc


def test_critical_warning_makes_a_device_health_failure(guest):
    """The over-temperature threshold set below the drive's temperature before the run: the
    controller's critical warning bit 1 at every step the run read (nvme-cli's own read after
    it says 2 as well), so the test FAILs (not an ERROR) as a device-health failure, and the
    report says so."""
    assert guest.rc("hot-threshold") == 0, guest.text("hot-threshold")
    assert json.loads(guest.text("smart-after"))["critical_warning"] == 0x02
    out = guest.text("suite")
    steps = len([r for r in guest.ledger("device_counters") if r["source"] == "smart-log"])
    (outcome,) = guest.junit("suite")["test_iops"]
    assert outcome[0] == "failure", out[-3000:]        # the test FAILs, it is not an ERROR
    assert "DEVICE HEALTH FAILURE (not a spec result): critical warning 0x02 (temperature " \
           f"threshold) at {steps} of {steps} steps, first at test start" in outcome[1]
    (end,) = guest.ledger("test_end")
    assert end["status"] == "device_health_failure" and "Spec outcome: " in end["message"]
    text = pdf_text(guest.report(guest.run_folder()))
    assert "DEVICE HEALTH FAILURE" in text and "NOT A COMPLIANT RUN" in text


def test_no_report_in_the_guest_and_rendered_from_its_files(guest):
    """--no-report: no run in the guest rendered a report, each said how to make it, and
    python -m pts report makes it from the run folder the guest left (here, on the host:
    Guest.report makes the IOPS run's report the tests read so, once)."""
    assert guest.guest_pdfs == ()
    folder = guest.run_folder()
    said = ("PTS report: not rendered (--no-report); make it with: python -m pts report "
            f"/tmp/share/{folder.relative_to(guest.out.parent).as_posix()}")   # the guest's path
    assert said in guest.text("suite"), guest.text("suite")[-2000:]
    if folder not in guest.made:        # a reused boot (PTS_TEST_GUEST=reuse) rendered it
        (folder / "report.pdf").unlink(missing_ok=True)
    pdf = guest.report(folder)
    made = guest.made[folder]
    assert made.returncode == 0 and made.stdout.strip() == str(pdf), made
    assert pdf.stat().st_size > 0 and pdf.read_bytes()[:5] == b"%PDF-"


def test_report_header(guest):
    pdf = guest.report(guest.run_folder())
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True,
                          capture_output=True, text=True).stdout
    assert "QEMU NVMe Ctrl" in text and SERIAL in text
    assert "NVMe Format SES=1 (user data erase)" in text
    assert "Device health (NVMe SMART / Health Information log)" in text
    print("\nreport header excerpt:\n" + "\n".join(text.splitlines()[:30]))
    print(f"\nQEMU e2e wall time (boot to poweroff, incl. all runs): {guest.wall_seconds:.0f} s")
