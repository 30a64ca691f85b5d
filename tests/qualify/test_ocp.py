"""`python -m pts qualify RUN --ocp 2.7`: verdicts on the OCP Datacenter NVMe SSD
requirements (pts.stored.ocp_verdicts), on synthetic run folders
(tests/support/synthetic/runfactory) whose device_counters records carry what real drives
printed (tests/data/recorded: the FADU DELTA U.2's and the KIOXIA CD8's smart-log and OCP
C0h, read through the suite's own pts.device.media_writes with nvme-cli answering from those
files), and on the reference run. Each check is seen passing and failing here."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from pts.cli.main import main
from pts.config import ocp_log_c0
from pts.config import ocp_requirements as table
from pts.device import media_writes
from pts.stored import host_judge
from pts.stored import ocp_every_id as every
from pts.stored import ocp_verdicts as ocp
from pts.stored.data import load_run
from pts.stored.run_facts import run_facts
from pts.tools import nvme_facts
from pts.tools.ocp_log_decode import from_nvme_cli_json
from tests.support import ocp_spec_ids
from tests.support.helpers import DATA, RECORDED, REPO, RecordedRunner, Reply
from tests.support.synthetic.drive_logs import growing, recorded_counters
from tests.support.synthetic.runfactory import build_run

REFERENCE = REPO / "tests" / "data" / "reference-run"
QEMU10 = DATA / "qemu-10"


def verdicts(path) -> dict[str, ocp.OcpVerdict]:
    return {v.requirement.id: v for v in ocp.judge_all(load_run(path), "2.7")}


def nvme_run(tmp_path, counters: dict, name: str = "run", **options):
    return verdicts(build_run(tmp_path, name, counters=counters,
                              counters_source="smart-log", **options))


@pytest.fixture
def fadu(monkeypatch, tmp_path):
    return recorded_counters(monkeypatch, tmp_path, "fadu-delta-u2")


@pytest.fixture
def cd8(monkeypatch, tmp_path):
    return recorded_counters(monkeypatch, tmp_path, "kioxia-cd8")


def test_the_c0h_page_is_recorded_whole(fadu, cd8):
    assert fadu[media_writes.OCP_C0]["version"] == 2 and cd8[media_writes.OCP_C0]["version"] == 3
    assert cd8[media_writes.OCP_C0]["fields"]["major_version"] == 2
    assert "bad_system_nand_blocks_raw" in cd8[media_writes.OCP_C0]["all_ones"]
    assert cd8[media_writes.OCP_C0]["source"] == "bytes"
    assert cd8[media_writes.OCP_C0]["cross_check"] == []      # nvme-cli's JSON agrees
    json.dumps(fadu)        # a record's counters are JSON


def test_c0h_fields_version_guid_and_dssd_version_of_the_real_drives(tmp_path, fadu, cd8):
    f = nvme_run(tmp_path, growing(fadu), "fadu")
    k = nvme_run(tmp_path, growing(cd8), "cd8")
    # SMART-1: both give Physical Media Units Written, rising with the writes
    for v in (f, k):
        assert v["SMART-1"].verdict == ocp.PASS
    assert "physical_media_units_written = 1,011,179,618,304" in f["SMART-1"].evidence[0]
    assert "at iops test start" in f["SMART-1"].evidence[0]
    # SMART-27: log page version 6 in 2.7; the FADU's page is version 2, the CD8's 3
    assert (f["SMART-27"].verdict, f["SMART-27"].reason) == (ocp.FAIL,
                                                             "log page version 2, not 6")
    assert k["SMART-27"].reason == "log page version 3, not 6"
    # SMART-28: both carry the OCP GUID
    assert f["SMART-28"].verdict == k["SMART-28"].verdict == ocp.PASS
    # SMART-13: the v2 page has no DSSD version; the CD8 declares 2.0.0
    assert f["SMART-13"].verdict == ocp.FAIL and "gives no DSSD" in f["SMART-13"].reason
    assert k["SMART-13"].verdict == ocp.FAIL
    assert k["SMART-13"].reason == "declares DSSD 2.0.0 (errata 0), not 2.7"
    # SMART-4: the FADU gives its bad system NAND blocks; the CD8's are all ones, which the
    # text defines (Bad User NAND Blocks then counts every block): met, not "not supported"
    assert f["SMART-4"].verdict == ocp.PASS
    assert "bad_system_nand_blocks_raw = 0" in f["SMART-4"].evidence[0]
    assert k["SMART-4"].verdict == ocp.PASS
    assert k["SMART-4"].reason.startswith("all ones: Bad User NAND Blocks (SMART-3) counts")
    assert "bad_system_nand_blocks_raw: all ones;" in k["SMART-4"].evidence[0]
    # the same all ones in another field are still not given
    assert k["SMART-3"].verdict == ocp.PASS
    # SMART-20, -29, -31: fields from log page version 3 (OCP 2.0 r21): on the CD8's page
    # (zeros: counts the drive gives), not on the FADU's version 2 page
    for rid in ("SMART-20", "SMART-29", "SMART-31"):
        assert k[rid].verdict == ocp.PASS, (rid, k[rid].reason)
        assert f[rid].verdict == ocp.FAIL and "not in log page version 2" in f[rid].reason
    assert "pcie_link_retraining_count = 0" in k["SMART-29"].evidence[0]
    # v2.7's own fields (SMART-30, -32..-52), judged from the bytes: a version 2 or 3 page
    # does not carry them (the drive implements an older text); reserved bytes: not checked
    for v, version in ((f, 2), (k, 3)):
        for n in (30, *range(32, 53)):
            assert v[f"SMART-{n}"].verdict == ocp.FAIL, n
            assert f"not in log page version {version}" in v[f"SMART-{n}"].reason
    assert "(read as bytes)" in k["SMART-46"].evidence[0]
    assert f["SMART-16"].verdict == ocp.NOT_CHECKED


def test_ocp_2_0_on_the_cd8_fails_nothing_it_checks(tmp_path, cd8, capsys):
    """`qualify --ocp 2.0` on the KIOXIA CD8's version 3 page (the version OCP 2.0 asks
    for): every C0h field of version 3 is given, and SMART-4's all ones are the value the
    text defines (Bad User NAND Blocks counts every block): 30 PASS, 0 FAIL of the 82
    tabulated requirements; of the text's 773 IDs the other 743 NOT APPLICABLE (obsolete)
    or NOT CHECKED; exit 0."""
    path = build_run(tmp_path, counters=growing(cd8), counters_source="smart-log")
    assert main(["qualify", str(path), "--ocp", "2.0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if line.startswith("FAIL ")] == []
    assert any(re.match(r"PASS +SMART-4 Bad System NAND Blocks: all ones: ", line)
               for line in out)
    assert out[-1].startswith("OCP DC NVMe SSD 2.0: 30 PASS, 0 FAIL, 23 NOT APPLICABLE, "
                              "720 NOT CHECKED of 773 requirement IDs in 97 groups")


def test_the_media_counter_must_not_fall(tmp_path, fadu):
    steps = growing(fadu)
    steps["after round 2"][media_writes.OCP_C0]["fields"]["physical_media_units_written"] = 5
    v = nvme_run(tmp_path, steps)["SMART-1"]
    assert v.verdict == ocp.FAIL and "physical_media_units_written decreased" in v.reason
    assert "-> 5 at iops after round 2" in v.reason


def test_nuse_after_a_format(tmp_path, cd8):
    ok = nvme_run(tmp_path, growing(cd8), "zero")["NUSE-1"]
    assert ok.verdict == ocp.PASS and "nuse = 0" in ok.evidence[0]
    assert any("Total NUSE" in r for r in ok.readings)
    bad = nvme_run(tmp_path, growing(cd8, nuse_after_purge=1234), "kept")["NUSE-1"]
    assert bad.verdict == ocp.FAIL and "NUSE 1,234 blocks after a Format SES=1" in bad.reason
    sanitized = nvme_run(tmp_path, growing(cd8), "sanitize",
                         purge_command=["nvme", "sanitize", "/dev/nvme9", "--sanact=2"])
    assert sanitized["NUSE-1"].verdict == ocp.NOT_CHECKED
    assert "no Format SES=1" in sanitized["NUSE-1"].reason


@pytest.mark.parametrize("command, seconds, rid, verdict", [
    # the factory's drive: 960,197,124,096 bytes -> CTO-8 limit 9.6 s; a Format's recorded time
    # is up to 1 s over the drive's, a sanitize's up to 5 s (poll)
    (["nvme", "format", "/dev/nvme9n1", "--ses=1"], 9.0, "CTO-8", ocp.PASS),
    (["nvme", "format", "/dev/nvme9n1", "--ses=1"], 10.3, "CTO-8", ocp.NOT_CHECKED),
    (["nvme", "format", "/dev/nvme9n1", "--ses=1"], 12.5, "CTO-8", ocp.FAIL),
    (["nvme", "sanitize", "/dev/nvme9", "--sanact=2"], 14.0, "CTO-8", ocp.NOT_CHECKED),
    (["nvme", "sanitize", "/dev/nvme9", "--sanact=2"], 15.0, "CTO-8", ocp.FAIL),
    (["nvme", "sanitize", "/dev/nvme9", "--sanact=4"], 8.0, "CTO-7", ocp.PASS),
    (["nvme", "sanitize", "/dev/nvme9", "--sanact=4"], 15.5, "CTO-7", ocp.FAIL),
    (["nvme", "format", "/dev/nvme9n1", "--ses=2", "--lbaf=0"], 4.0, "CTO-2", ocp.PASS),
    (["nvme", "format", "/dev/nvme9n1", "--ses=2", "--lbaf=0"], 11.5, "CTO-11", ocp.FAIL),
])
def test_purge_times(tmp_path, command, seconds, rid, verdict):
    v = verdicts(build_run(tmp_path, purge_command=command, purge_seconds=seconds))[rid]
    assert v.verdict == verdict, v
    assert f"took {seconds:.1f} s: {verdict}" in v.evidence[0]


def test_purge_times_name_what_did_not_run_and_the_readings(tmp_path):
    v = verdicts(build_run(tmp_path, purge_seconds=9.0))
    assert v["CTO-7"].verdict == ocp.NOT_CHECKED
    assert v["CTO-7"].reason.startswith("no Sanitize crypto erase ran in this run (purges: iops")
    assert v["CTO-8"].evidence[-1] == ("limit 10 s/TB x 0.960 TB = 9.6 s; a recorded time is "
                                       "up to 1 s (format) over the drive's: over the limit "
                                       "by less is NOT CHECKED")
    assert [r.split(":")[0] for r in v["CTO-8"].readings] == ["reading"]   # TB; no sanitize


def test_percent_used_and_counters_over_the_purge(tmp_path, cd8):
    good = nvme_run(tmp_path, growing(cd8), "good")
    assert good["STD-LOG-3"].verdict == ocp.PASS
    assert good["STD-LOG-23"].verdict == ocp.PASS
    assert "C0h physical_media_units_written" in good["STD-LOG-23"].evidence[0]
    assert good["STD-LOG-2"].verdict == ocp.PASS
    steps = growing(cd8)
    steps["after round 2"]["percent_used"] = 0
    steps["after purge"]["data_units_written"] = 7
    bad = nvme_run(tmp_path, steps, "bad")
    assert bad["STD-LOG-3"].verdict == ocp.FAIL
    assert bad["STD-LOG-3"].reason == ("Percentage Used decreased: 1 at iops after round 1 -> "
                                       "0 at iops after round 2")
    assert bad["STD-LOG-23"].verdict == ocp.FAIL
    assert "02h data_units_written 1,832,600,650 -> 7" in bad["STD-LOG-23"].reason


def test_a_drive_refusing_the_smart_log(tmp_path):
    run = build_run(tmp_path, counters={}, counters_source="smart-log")
    # records whose counters could not be read: the drive's refusal at every step
    with (run / "ledger.jsonl").open("a") as fh:
        for when in ("after round 1", "test end"):
            fh.write(json.dumps({"type": "device_counters", "time": 1.8e9, "test": "iops",
                                 "when": when, "round": None, "source": "smart-log",
                                 "counters": None, "error": "NVMe status: Invalid Log Page: "
                                 "The log page indicated is invalid(0x4109)"}) + "\n")
    v = verdicts(run)["STD-LOG-2"]
    assert v.verdict == ocp.FAIL and v.reason == "the drive refused log 02h at every step"


def test_no_nvme_counters_is_not_checked_with_the_reason(tmp_path):
    """The emulated SSD's counters (the emulator's FTL) are no NVMe logs."""
    run = build_run(tmp_path, emulated=True, counters={"after purge": {"host_writes": 1,
                                                                       "page_size": 4096}})
    v = verdicts(run)
    for rid in ("SMART-1", "SMART-27", "STD-LOG-2", "STD-LOG-3", "STD-LOG-23", "NUSE-1"):
        assert v[rid].verdict == ocp.NOT_CHECKED, rid
    assert "the run recorded no NVMe SMART / Health counters" in v["SMART-1"].reason
    assert "emulated SSD" in v["SMART-1"].reason


def test_the_reference_run(capsys):
    """Its counters are the emulator's: only the purge times are judged: 7 Formats SES=1 of
    12.5 s on 7.68 TB, limit 76.8 s."""
    assert main(["qualify", str(REFERENCE), "--ocp", "2.7"]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = [line for line in out if line.split()[0] in ("PASS", "FAIL", "NOT")]
    assert len(rows) == len(table.all_ids("2.7")) == 1717
    assert [r for r in rows if r.startswith("PASS")][0].startswith("PASS           CTO-8 ")
    assert "limit 10 s/TB x 7.682 TB = 76.8 s;" in rows[[r.split()[1] for r in rows].index(
        "CTO-8")]
    assert out[-1].startswith("OCP DC NVMe SSD 2.7: 1 PASS, 0 FAIL, 59 NOT APPLICABLE, 1657 "
                              "NOT CHECKED of 1717 requirement IDs in 172 groups")
    assert "form factor not known" in out[-1]


@pytest.mark.parametrize("version", ["2.0", "2.7"])
def test_the_table_holds_every_requirement_the_spec_text_gives(version):
    """Against the IDs read from the specification's text (tests/support/ocp_spec_ids.py),
    not the table's own rows: a row dropped from the table, or one the text lacks, fails."""
    tabulated = [r.id for r in table.requirements(version)]
    assert len(tabulated) == len(set(tabulated))
    assert set(tabulated) == set(ocp_spec_ids.ids(version)), \
        (sorted(set(ocp_spec_ids.ids(version)) - set(tabulated)),
         sorted(set(tabulated) - set(ocp_spec_ids.ids(version))))


def test_every_requirement_of_the_table_is_listed_never_left_out(tmp_path, fadu, capsys):
    path = build_run(tmp_path, counters=growing(fadu),
                     counters_source="smart-log")
    assert main(["qualify", str(path), "--ocp", "2.7"]) == 1          # FAILs: exit 1
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines()
            if line.split()[:1] in (["PASS"], ["FAIL"], ["NOT"])]     # NOT CHECKED: 2 words
    listed = [w[2] if w[0] == "NOT" else w[1] for w in rows]
    assert sorted(listed) == sorted(e.id for e in table.all_ids("2.7"))  # each ID once
    assert set(ocp_spec_ids.ids("2.7")) <= set(listed)     # the table's, read from the text
    for req in table.requirements("2.7"):
        assert f" {req.id} {req.subject}:" in out and f"[line {req.line}]" in out
    # grouped by the text's groups, each with its counts, which add up to its lines
    heads = [line for line in out.splitlines() if line.startswith("== ")]
    assert len(heads) == 172 and heads[0].startswith("== NVMe (NVMe base specification")
    assert sum(sum(int(n) for n in re.findall(r"(\d+) [A-Z]", h.split("): ")[1]))
               for h in heads) == 1717
    for v in ocp.judge_all(load_run(path), "2.7"):
        assert v.reason, v.requirement.id        # every row says why
    assert table.requirements("2.7")[0].key == ("2.7", "SMART-1")
    with pytest.raises(table.UnknownVersion, match="no OCP .* table for version '2.5'"):
        table.requirements("2.5")


def test_bad_input(tmp_path, capsys):
    assert main(["qualify", str(REFERENCE)]) == 2
    assert "give --datasheet FILE.toml, --ocp VERSION or both" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["qualify", str(REFERENCE), "--ocp", "2.5"])
    assert exc.value.code == 2 and "invalid choice: '2.5'" in capsys.readouterr().err


def test_a_c0h_page_of_another_guid(tmp_path, fadu):
    """A C0h page with another GUID (a vendor's own C0h layout, e.g. FEMU's statistics page,
    which clashes with OCP's) is not the OCP page: SMART-28 FAILs naming both GUIDs."""
    steps = growing(fadu)
    for c in steps.values():
        c[media_writes.OCP_C0]["guid"] = "0x0123456789abcdef0123456789abcdef"
    v = nvme_run(tmp_path, steps)["SMART-28"]
    assert v.verdict == ocp.FAIL
    assert v.reason == ("log page GUID 0x0123456789abcdef0123456789abcdef, not "
                        "0xafd514c97c6f4f9ca4f2bfea2810afc5")


def test_a_run_recorded_before_the_c0h_page_was_kept(tmp_path, cd8):
    """Its C0h rows are NOT CHECKED saying why, not judged from an absent page."""
    steps = growing(cd8)
    for c in steps.values():
        del c[media_writes.OCP_C0]
    v = nvme_run(tmp_path, steps)
    assert v["SMART-27"].verdict == v["SMART-1"].verdict == ocp.NOT_CHECKED
    assert v["SMART-27"].reason == ("the run read C0h for its media writes but kept only them "
                                    "(recorded before the C0h page was kept whole)")
    assert v["STD-LOG-3"].verdict == ocp.PASS          # log 02h is still judged


def test_v20_and_v27_keyed_by_version_and_id():
    """Read side by side in both texts (pts/config/ocp_v20.py, ocp_v27.py): the C0h fields
    that ../shared/reference/real-drives.md lists as renumbered (v2.0 SMART-22 Unaligned I/O,
    -24 NUSE, -25 PLP Start Count, -26 Endurance Estimate) stand under the same IDs in the
    v2.0 r21 text as in v2.7 (pages 20-21: SMART-21, -23, -24, -25); what differs between the
    versions is the same ID naming another requirement or value, and a requirement moved."""
    def of(version: str, rid: str) -> table.OcpRequirement:
        return table.TABLE[(version, rid)]

    assert len(table.requirements("2.0")) == 82 and len(table.requirements("2.7")) == 135
    for field, rid in (("unaligned_io", "SMART-21"), ("nuse", "SMART-23"),
                       ("plp_start_count", "SMART-24"), ("endurance_estimate", "SMART-25")):
        for version in ("2.0", "2.7"):
            assert [r.id for r in table.requirements(version) if field in r.fields] == [rid]
    assert of("2.0", "SMART-24").subject == of("2.7", "SMART-24").subject == "PLP Start Count"
    assert of("2.0", "SMART-23").where == "OCP DC NVMe SSD 2.0 SMART-23, page 20"
    assert of("2.7", "SMART-23").where == "OCP DC NVMe SSD 2.7 SMART-23, line 1529"
    # the same ID, another requirement: v2.0's CTO-2 exempts Format from CTO-1's 10 s,
    # v2.7's times a crypto-erase Format; SMART-30 reserved in v2.0, a field in v2.7
    assert of("2.0", "CTO-2").check is None and of("2.7", "CTO-2").check == table.PURGE_TIME
    assert of("2.0", "SMART-30").subject == "reserved bytes 135:131"
    assert of("2.7", "SMART-30").subject == "Proactive Bad Die Retirement"
    # the same field, another value: Log Page Version 0003h / 0006h, DSSD 2.0 / 2.7
    assert table.C0_LOG_VERSION["2.0"][0] == 3 and table.C0_LOG_VERSION["2.7"][0] == 6
    assert table.DSSD_VERSION["2.0"][0]["minor_version"] == 0
    # moved: v2.0's SLOG-10 (02h / C0h data kept) is obsolete in v2.7, "see STD-LOG-23"
    assert of("2.0", "SLOG-10").subject.startswith("02h / C0h data older than 10 min kept")
    assert of("2.7", "SLOG-10").subject == "obsolete (see STD-LOG-23)"
    # no purge time in v2.0's table; ID groups v2.0 does not have are absent, not borrowed
    assert not [r for r in table.requirements("2.0") if r.check == table.PURGE_TIME]
    assert ("2.0", "CTO-8") not in table.TABLE and ("2.0", "STD-LOG-23") not in table.TABLE


def test_the_kioxia_cd8_declares_v20(tmp_path, cd8, fadu, capsys):
    """The CD8's C0h page is log page version 3 and declares DSSD 2.0.0.0: what v2.0 asks
    (SMART-27 0003h, SMART-13 2.0.0.0), not v2.7; the FADU's version 2 page meets neither."""
    path = build_run(tmp_path, "cd8", counters=growing(cd8), counters_source="smart-log")
    v20 = {v.requirement.id: v for v in ocp.judge_all(load_run(path), "2.0")}
    v27 = verdicts(path)
    assert (v20["SMART-27"].verdict, v20["SMART-27"].reason) == (ocp.PASS, "log page version 3")
    assert v20["SMART-27"].evidence[1] == "required: 3 (SMART-27, page 21: shall be 0003h)"
    assert v27["SMART-27"].reason == "log page version 3, not 6"
    assert (v20["SMART-13"].verdict, v20["SMART-13"].reason) == (ocp.PASS, "declares DSSD 2.0")
    assert v27["SMART-13"].verdict == ocp.FAIL
    assert v20["SMART-28"].verdict == v20["NUSE-1"].verdict == v20["STD-LOG-3"].verdict == \
        ocp.PASS
    assert any("page 9" in r for r in v20["NUSE-1"].readings)
    # v2.0 sets a Format no time: the 12.5 s Format that FAILs v2.7's CTO-8 is not judged
    assert v27["CTO-8"].verdict == ocp.FAIL
    assert v20["CTO-1"].verdict == v20["CTO-2"].verdict == ocp.NOT_CHECKED
    assert "a Format is exempt (CTO-2)" in v20["CTO-1"].reason
    f = nvme_run(tmp_path, growing(fadu), "fadu")
    fadu20 = {v.requirement.id: v for v in ocp.judge_all(load_run(tmp_path / "fadu"), "2.0")}
    assert fadu20["SMART-27"].reason == "log page version 2, not 3" and f["SMART-27"].reason \
        == "log page version 2, not 6"
    # the command line: every v2.0 row, each with its page
    assert main(["qualify", str(path), "--ocp", "2.0"]) == 0       # nothing checked FAILs
    out = capsys.readouterr().out
    for req in table.requirements("2.0"):
        assert f" {req.id} {req.subject}:" in out and f"[page {req.line}]" in out
    assert out.splitlines()[-1].startswith("OCP DC NVMe SSD 2.0: ")
    assert " of 773 requirement IDs" in out.splitlines()[-1]


def test_all_ones_meet_a_row_only_where_the_text_defines_them(tmp_path, fadu):
    """Capacitor Health FFFFh is what the text says a drive without power loss protection
    reports (SMART-19): PASS, said so. The same all ones in XOR Recovery Count, which the text
    gives no such meaning: not given, FAIL."""
    steps = growing(fadu)
    for step in steps.values():
        page = step[media_writes.OCP_C0]
        for name in ("capacitor_health", "xor_recovery_count"):
            page["all_ones"] = [*page["all_ones"], name]
    v = nvme_run(tmp_path, steps)
    assert v["SMART-19"].verdict == ocp.PASS
    assert v["SMART-19"].reason.startswith("all ones (FFFFh): the drive has no power loss")
    assert "capacitor_health: all ones" in v["SMART-19"].evidence[0]
    assert v["SMART-5"].verdict == ocp.FAIL
    assert "xor_recovery_count: all ones (not supported)" in v["SMART-5"].reason


def test_all_ones_in_a_small_counter_may_be_saturation_and_are_not_judged(tmp_path, fadu):
    """SLOG-2: a counter that exceeds its field reads all F's. The 1-byte count of thermal
    throttling events at FFh is a saturated counter or an unsupported field, which the page
    cannot tell apart: NOT CHECKED, said so; the throttling status beside it is read."""
    assert nvme_run(tmp_path, growing(fadu), "given")["SMART-12"].verdict == ocp.PASS
    steps = growing(fadu)
    for step in steps.values():
        page = step[media_writes.OCP_C0]
        page["all_ones"] = [*page["all_ones"], "thermal_throttling_events"]
    v = nvme_run(tmp_path, steps)["SMART-12"]
    assert v.verdict == ocp.NOT_CHECKED
    assert v.reason.startswith("thermal_throttling_events: all ones, which is either a "
                               "saturated counter (SLOG-2")
    assert "current_throttling_status = " in v.evidence[0]


def _printed_as(doc: dict, style: str) -> dict:
    """A drive's recorded C0h JSON as another nvme-cli would print it: "2.3" (Debian 12's:
    only the keys its OCP plugin prints, those of tests/data/nvme-cli-2.16's 2.3 page of
    QEMU; no Power State Change Count), "v2" (a newer nvme-cli's --output-format-version 2
    keys, pts.config.ocp_log_c0's style-2 names)."""
    fields = {f.name: f for f in ocp_log_c0.PAGE.fields}
    _, _, values = from_nvme_cli_json(ocp_log_c0.PAGE, doc)
    head = {k: v for k, v in doc.items() if k.lower().startswith("log page")}
    if style == "2.3":
        printed = json.loads((DATA / "nvme-cli-2.16" / "nvme-ocp-smart-add-log_nvme-2.3_0.json")
                             .read_text())
        keep = {k for k in printed}
        return head | {k: v for k, v in doc.items() if k in keep}
    return head | {fields[n].keys[1]: v for n, v in values.items() if fields[n].keys[1]}


@pytest.mark.parametrize("drive", ["fadu-delta-u2", "kioxia-cd8"])
def test_the_same_verdicts_from_bytes_and_from_each_nvme_cli_layout(monkeypatch, tmp_path,
                                                                     drive):
    """Issue 49: the C0h page read as bytes gives the verdicts; nvme-cli's JSON alone (when
    the bytes cannot be read) gives the same ones, in the recorded (newer nvme-cli, style 1)
    layout, style 2 and nvme-cli 2.3's, except that a field that nvme-cli did not print is
    NOT CHECKED, 'nvme-cli X does not print <field>; read the page as bytes', never FAILed
    (the SMART-31 defect: 2.3 has no Power State Change Count)."""
    def judged(counters, name):
        path = build_run(tmp_path, name, counters=growing(counters),
                         counters_source="smart-log")
        meta = json.loads((path / "run.json").read_text())   # as run.json names the tool
        meta["tools"]["nvme-cli"] = "nvme version 2.3"
        (path / "run.json").write_text(json.dumps(meta))
        return {v.requirement.key: v for version in table.VERSIONS
                for v in ocp.judge_all(load_run(path), version)}

    from_bytes = judged(recorded_counters(monkeypatch, tmp_path, drive), "bytes")
    doc = json.loads((RECORDED / f"nvme-ocp-smart-add-log_{drive}.json").read_text())
    unprinted = {}
    for style in ("recorded", "v2", "2.3"):
        text = json.dumps(doc if style == "recorded" else _printed_as(doc, style))
        counters = recorded_counters(monkeypatch, tmp_path, drive, bytes_read=False,
                                     json_text=text)
        assert counters[media_writes.OCP_C0]["source"] == "nvme-cli JSON"
        found = judged(counters, style)
        differ = {key: (from_bytes[key].verdict, v.verdict, v.reason)
                  for key, v in found.items() if v.verdict != from_bytes[key].verdict}
        for key, (_, verdict, reason) in differ.items():
            assert verdict == ocp.NOT_CHECKED and reason.startswith(
                "nvme-cli 2.3 does not print ") and reason.endswith("; read the page as "
                                                                    "bytes"), (key, reason)
        unprinted[style] = set(differ)
        if drive == "kioxia-cd8" and style == "2.3":    # a version 3 page: SMART-31 its field
            for version in table.VERSIONS:
                assert differ[(version, "SMART-31")][:2] == (ocp.PASS, ocp.NOT_CHECKED)
            assert "power_state_change_count" in found[("2.0", "SMART-31")].reason
        assert not [v for v in found.values() if v.verdict == ocp.FAIL
                    and "not printed" in v.reason]
    # the recorded pages' nvme-cli printed no 2.5-2.7 field (SMART-30, -32..-52, v2.7 only):
    # from the bytes they FAIL (a version 2 / 3 page lacks them), from its JSON NOT CHECKED
    assert unprinted["recorded"] == unprinted["v2"] == {
        ("2.7", f"SMART-{n}") for n in (30, *range(32, 53))}
    assert unprinted["2.3"] >= unprinted["recorded"]


def qemu_counters(monkeypatch, tmp_path) -> dict:
    """QEMU 10's C0h page as its controller sent it, read through media_writes."""
    RecordedRunner({("nvme", "id-ns"): [Reply(out="../qemu-7.2/nvme-id-ns.json")],
                    ("nvme", "get-log"): [Reply(out="nvme-get-log-c0h_raw_0.bin")],
                    ("nvme", "ocp", "smart-add-log"): [Reply(
                        out="nvme-ocp-smart-add-log_raw-pair_0.json")],
                    ("nvme", "ocp", "latency-monitor-log"): [Reply(
                        rc=1, err="nvme-ocp-latency-monitor-log_refused.stderr.txt")]},
                   data=QEMU10).install(monkeypatch)
    first = media_writes.nvme_counters("/dev/nvme9n1", tmp_path / "q.log")
    return first | {"host_writes": 0, "page_size": 512_000, "data_units_written": 0,
                    "percent_used": 0}


def test_qemu_10s_c0h_bytes_judge_smart_30_to_52(monkeypatch, tmp_path):
    """QEMU 10's C0h page as its controller sent it (tests/data/qemu-10: log page version 5,
    nvme-cli 2.3 beside it): SMART-31 (Power State Change Count, which 2.3 does not print)
    PASS from the bytes; v2.7's version 5 fields (SMART-32..-39, -41..-51) given, PASS; its
    version 6 ones (SMART-30, -40, -52) FAIL, not in version 5; nvme-cli's JSON agrees."""
    first = qemu_counters(monkeypatch, tmp_path)
    page = first[media_writes.OCP_C0]
    assert (page["source"], page["version"], page["cross_check"]) == ("bytes", 5, [])
    v = nvme_run(tmp_path, growing(first), "qemu")
    assert v["SMART-31"].verdict == ocp.PASS
    assert "power_state_change_count = 0" in v["SMART-31"].evidence[0]
    for n in (*range(32, 40), *range(41, 52)):
        assert v[f"SMART-{n}"].verdict == ocp.PASS, (n, v[f"SMART-{n}"].reason)
    for n in (30, 40, 52):
        assert v[f"SMART-{n}"].verdict == ocp.FAIL
        assert "not in log page version 5" in v[f"SMART-{n}"].reason
    assert "dssd_firmware_build_label = ''" in v["SMART-51"].evidence[0]


def qemu_facts() -> dict:
    """Some of the facts a run reads (pts.tools.nvme_facts' decoders on QEMU 10's recorded
    answers, tests/data/qemu-10/fdp): Identify, power state feature, log 05h, FDP logs."""
    fdp = QEMU10 / "fdp"
    return {"id_ctrl": nvme_facts.id_ctrl((fdp / "nvme-id-ctrl.bin").read_bytes()),
            "id_ns": nvme_facts.id_ns((fdp / "nvme-id-ns.bin").read_bytes()),
            "effects": nvme_facts.effects((fdp / "log-05h_0.bin").read_bytes()),
            "feature_02h": nvme_facts.feature_value(
                (fdp / "feature-02h_current.txt").read_text()),
            "feature_02h_capabilities": nvme_facts.feature_value(
                (fdp / "feature-02h_capabilities.txt").read_text()),
            "fdp_configs": nvme_facts.fdp_configs((fdp / "log-20h_0.bin").read_bytes()),
            "fdp_host_events": nvme_facts.fdp_events(
                (fdp / "log-23h-lsp1-host-events_after-1MiB-phndl1-update.bin").read_bytes())}


def test_every_id_on_qemu_10s_recorded_answers(monkeypatch, tmp_path, capsys):
    """A run whose ledger holds QEMU 10's C0h page (bytes) and the facts its controller
    answered (tests/data/qemu-10/fdp, as pts.tools.nvme_facts decodes them: the nvme_facts
    record): every ID of v2.7, the tabulated ones by the table, those a host rule judges by
    pts.stored.host_judge from the record (PWR-1 PASS, NVMe-AD-2 FAIL, FDPDP-1 NOT
    APPLICABLE, ...); without the record those are NOT CHECKED saying so. Counts per verdict
    written out in the report of issue 49's integration."""
    path = build_run(tmp_path, "qemu", counters=growing(qemu_counters(monkeypatch, tmp_path)),
                     counters_source="smart-log")
    bare = every.judge_every(load_run(path), "2.7")
    assert bare.verdicts[[v.id for v in bare.verdicts].index("PWR-1")].reason == every.NO_FACTS
    with (path / "ledger.jsonl").open("a") as fh:
        fh.write(json.dumps({"type": "nvme_facts", "time": 1.8e9, "test": None,
                             "moment": "test start", "files": {}, "refused": {},
                             "facts": nvme_facts.json_safe(qemu_facts())}) + "\n")
    found = every.judge_every(load_run(path), "2.7")
    by_id = {v.id: v for v in found.verdicts}
    expected = host_judge.judge(qemu_facts() | {"run": run_facts(load_run(path))}, "2.7")
    assert len(expected) > 100 and len([h for h in expected if h.verdict != ocp.NOT_CHECKED
                                        ]) > 40
    for h in expected:
        mine = by_id[h.req_id]
        if mine.by == "host rule":
            assert (mine.verdict, mine.reason) == (h.verdict, h.why + " (facts read at test "
                                                   "start)"), h.req_id
        else:       # a tabulated ID the table judges (PASS / FAIL) keeps the table's verdict
            assert mine.by == "table" and mine.verdict in (ocp.PASS, ocp.FAIL), h.req_id
            assert h.verdict != ocp.FAIL or mine.verdict == ocp.FAIL, h.req_id
    assert (by_id["PWR-1"].verdict, by_id["NVMe-AD-2"].verdict, by_id["FDPDP-1"].verdict) == \
        (ocp.PASS, ocp.FAIL, "NOT APPLICABLE")
    assert by_id["STD-LOG-7"].by == "host rule"      # the table did not read it; a rule does
    assert by_id["SMART-31"].verdict == ocp.PASS and by_id["SMART-31"].by == "table"
    assert sum(found.counts.values()) == len(found.verdicts) == 1717
    assert main(["qualify", str(path), "--ocp", "2.7"]) == 1        # FAILs: exit 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith(f"OCP DC NVMe SSD 2.7: {found.counts_text} of 1717 ")


def test_a_host_rules_fail_overrides_the_tables_pass(monkeypatch, tmp_path):
    """An ID both the table and a host rule judge: the table's PASS stands beside a rule's
    PASS or NOT CHECKED, a rule's FAIL is the ID's (SMART-31: the table reads the count on
    C0h, the power rule sees it fall during the rounds), and the table's own FAIL stands."""
    path = build_run(tmp_path, "qemu", counters=growing(qemu_counters(monkeypatch, tmp_path)),
                     counters_source="smart-log")
    with (path / "ledger.jsonl").open("a") as fh:
        fh.write(json.dumps({"type": "nvme_facts", "time": 1.8e9, "test": None,
                             "moment": "test start", "files": {}, "refused": {},
                             "facts": nvme_facts.json_safe(qemu_facts())}) + "\n")
    run = load_run(path)
    table_says = {v.requirement.id: v.verdict for v in ocp.judge_all(run, "2.7")}
    assert table_says["SMART-31"] == ocp.PASS
    real = host_judge.judge

    def with_rule(verdict):
        def judge(facts, version="2.7"):
            rule = host_judge.Verdict("2.7", "SMART-31", verdict, f"the rule says {verdict}",
                                      1556)
            return [v for v in real(facts, version) if v.req_id != "SMART-31"] + [rule]
        monkeypatch.setattr(host_judge, "judge", judge)
        found = {v.id: v for v in every.judge_every(load_run(path), "2.7").verdicts}
        return found["SMART-31"].verdict, found["SMART-31"].by
    assert with_rule(ocp.FAIL) == (ocp.FAIL, "host rule")
    assert with_rule(ocp.PASS) == (ocp.PASS, "table")
    assert with_rule(ocp.NOT_CHECKED) == (ocp.PASS, "table")


def test_the_index_keeps_the_counts_and_history_shows_them(monkeypatch, tmp_path, capsys):
    """`pts index` keeps each run's OCP counts (the newest text's, as qualify --ocp gives
    them; none for a run not on an NVMe drive) and `pts history` shows them per run."""
    reports = tmp_path / "reports"
    cd8 = build_run(reports, "cd8", counters=growing(recorded_counters(monkeypatch, tmp_path,
                                                                       "kioxia-cd8")),
                    counters_source="smart-log")
    build_run(reports, "emulated", emulated=True)
    assert main(["index", str(reports)]) == 0
    capsys.readouterr()
    with sqlite3.connect(reports / "index.sqlite") as conn:
        rows = dict(((Path(f).name, (v, p, f_, na, nc)) for f, v, p, f_, na, nc in conn.execute(
            "SELECT folder, ocp_version, ocp_pass, ocp_fail, ocp_not_applicable, "
            "ocp_not_checked FROM runs")))
    counts = every.judge_every(load_run(cd8), "2.7").counts
    assert rows == {"cd8": ("2.7", *counts.values()), "emulated": (None,) * 5}
    model = load_run(cd8).device.model
    assert main(["history", model, "--index", str(reports)]) == 0
    shown = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert "OCP 2.7: 29 PASS, 25 FAIL, 59 NOT APPLICABLE, 1604 NOT CHECKED" in shown
