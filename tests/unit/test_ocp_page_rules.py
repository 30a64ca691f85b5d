"""The OCP vendor log pages C1h, C3h, C4h and C5h read as bytes at a test's start
(pts.tools.ocp_page_facts) and their v2.7 rows judged (pts.stored.ocp_page_rules): on QEMU 10's
recorded refusals (tests/data/qemu-10: "Invalid Field in Command (0x4002)", exit status 1, for
every OCP page but C0h; the recorded controller of tests/support/qemu10_drive) and on
CONSTRUCTED pages, built here with the product's encoder (pts.tools.ocp_log_decode.encode) from
values chosen to meet the text, then changed one field or byte at a time to break one row each.
No drive gave these constructed pages: QEMU answers none of them.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from pts.config import ocp_log_pages as P
from pts.stored import host_judge, host_rules
from pts.stored.host_rules import FAIL, NOT_APPLICABLE, NOT_CHECKED, PASS
from pts.stored.ocp_page_rules import CUSTOM
from pts.tools import ocp_page_facts
from pts.tools.commands import CommandResult
from pts.tools.ocp_log_decode import encode
from tests.support.qemu10_drive import Drive, recorded_facts

REFUSAL = "Get Log Page {}: Invalid Field in Command (0x4002), exit 1"
GROUPS = ("EREC-", "LMDATA-", "DCLP-", "DSSDPSD-", "URLP-")
C6H = ("HWCLOG-", "HWCOMP-", "COMPD-", "CITYPE-")   # C6h: test_ocp_component_rules
CONDITIONAL = ("LMLOG-15", "LMLOG-16", "LMLOG-17", "LMLOG-18")


def page_ids() -> list[str]:
    """The IDs the page rules judge (ocp_page_rules' and its helpers' registrations)."""
    return sorted(rid for (ver, rid), (_, fn) in host_rules.RULES.items()
                  if ver == "2.7" and fn.__module__ == "pts.stored.ocp_page_checks"
                  and not rid.startswith(C6H))


@pytest.fixture(scope="module")
def qemu(tmp_path_factory) -> dict:
    return recorded_facts(tmp_path_factory.mktemp("qemu"))


def verdicts(facts: dict) -> dict:
    return {v.req_id: v for v in host_judge.judge(facts) if v.req_id in set(page_ids())}


def test_the_rows_are_the_pages_ids_with_the_texts_lines():
    ids = page_ids()
    assert [i for i in ids if not i.startswith(GROUPS)] == sorted(
        ["LMLOG-11", "LMLOG-12", "LMLOG-13", *CONDITIONAL])
    # every EREC-, LMDATA-, DCLP-, DSSDPSD- and URLP- ID of the v2.7 text, none left out
    from pts.config.ocp_all_ids import all_ids
    text = sorted(e.id for e in all_ids("2.7") if e.id.startswith(GROUPS) and
                  e.group in ("EREC", "LMDATA", "DCLP", "DSSDPSD", "URLP"))
    assert [i for i in ids if i.startswith(GROUPS)] == text and len(ids) == 84
    assert host_rules.RULES[("2.7", "LMDATA-35")][0] == 3057
    assert host_rules.RULES[("2.7", "URLP-6")][0] == 3390


def test_qemu_10s_refusals_fail_every_row_with_the_drives_words(qemu):
    """QEMU 10 refuses C1h, C3h, C4h, C5h: each row a FAIL citing the refusal, the conditional
    LMLOG-15..18 NOT CHECKED (LMDATA-1 bit 3 unknown). The bytes asked are in the facts."""
    pages = qemu["ocp_pages"]
    assert pages["C3h"] == {
        "command": "nvme get-log /dev/nvme0 --log-id=0xc3 --log-len=512 --raw-binary",
        "exit": 1, "refused": "Invalid Field in Command (0x4002)",
        "said": (Path(__file__).parents[1] / "data/qemu-10/nvme-get-log-c3h_refused.stderr.txt")
        .read_text().strip()}
    # C6h-CAh: test_ocp_component_rules, test_ocp_header_facts
    assert sorted(pages) == ["C1h", "C3h", "C4h", "C5h", "C6h", "C7h", "C9h", "CAh"]
    assert qemu["logs"]["C1h"]["refused"].endswith("(0x4002)")
    got = verdicts(qemu)
    fails = {i: v for i, v in got.items() if v.verdict == FAIL}
    assert sorted(set(got) - set(fails)) == list(CONDITIONAL) and len(fails) == 80
    assert got["LMLOG-12"].why == REFUSAL.format("C3h") + ": no LMLOG-12's field"
    assert got["EREC-11"].why.startswith(REFUSAL.format("C1h"))
    assert got["URLP-3"].evidence[0].value == "Invalid Field in Command (0x4002), exit 1"
    assert got["LMLOG-15"].verdict == NOT_CHECKED and got["LMLOG-15"].why == \
        REFUSAL.format("C3h") + ": what the row depends on is not known"


def test_a_run_recorded_before_the_pages_judges_erec_as_before(qemu):
    """No facts["ocp_pages"] (a run of the last stop): the EREC rows still read logs["C1h"]."""
    old = {k: v for k, v in qemu.items() if k != "ocp_pages"}
    got = verdicts(old)
    assert got["EREC-1"].why == ("Error Recovery log C1h refused as not supported: no Error "
                                 "Reset Wait Time (log C1h bytes 1:0)")
    assert got["LMDATA-1"].why == "not read in this run: ocp_pages"


# --- constructed pages ------------------------------------------------------------------

C1 = {"error_reset_wait_time": 1000, "error_reset_action": 0x01,
      "device_recovery_action_1": 0x01, "device_capabilities": 0x1, "error_count": 2,
      "previous_error_ids": [7, 5, 0, 0], "vendor_specific_command_timeout": 10,
      "device_recovery_action_2_timeout": 30}
C3 = {"feature_status": 0x07, "active_bucket_timer": 3, "active_bucket_timer_threshold": 0x7E0,
      "active_threshold_a": 0x05, "active_threshold_b": 0x13, "active_threshold_c": 0x1E,
      "active_threshold_d": 0x2E, "active_latency_configuration": 0x0FFF,
      "active_bucket_counter_0": {"read": 9, "write": 4, "deallocate": 1},
      "debug_counter_trigger_source": 0x0004}
C4 = {"pcie_ports": 1, "write_zeroes_support": 0x8001,       # QEMU's ONCS 0x75d: bit 3 set
      "dataset_management_support": 0x8003, "minimum_valid_dssd_power_state": 25,
      "dssd_power_state_descriptors": [0] * 25 + [0x80] * 103,   # 25-127 W: NVMe state 0
      "fips_140_validation": 0}
C5 = {"unsupported_count": 2, "unsupported_requirements": ["PWR-1", "STD-LOG-7"] + [""] * 251}
GOOD = {0xC1: (C1, 3), 0xC3: (C3, 5), 0xC4: (C4, 2), 0xC5: (C5, 1)}


def constructed(qemu: dict, changes: dict | None = None) -> dict:
    """QEMU's facts with each page answered by a constructed page (`changes`: log -> a
    function of (values, bytearray) returning the bytes to give)."""
    facts = copy.deepcopy(qemu)
    for log, (values, version) in GOOD.items():
        vals = copy.deepcopy(values)
        change = (changes or {}).get(log)
        raw = bytearray(encode(P.PAGES[log], vals, version))
        if change is not None:
            raw = change(vals, raw)
        fact = {"command": f"nvme get-log ... --log-id=0x{log:02x}", "exit": 0,
                "file": f"log-{log:02x}h.bin"}
        fact.update(ocp_page_facts.page_fact(P.PAGES[log], bytes(raw)))
        facts["ocp_pages"][f"{log:02X}h"] = fact
    return facts


def test_constructed_pages_meeting_the_text_pass_every_row(qemu):
    got = verdicts(constructed(qemu))
    assert {i: v.verdict for i, v in got.items() if v.verdict != PASS} == dict.fromkeys(
        CONDITIONAL, NOT_APPLICABLE)
    assert got["LMLOG-11"].why.startswith("Active Thresholds A-D [5, 19, 30, 46] (5 ms units): "
                                          "A < B < C < D")
    assert got["DSSDPSD-3"].evidence[-1].value == [(0, 25.0)]
    assert got["EREC-16"].why.startswith("error_count given (page version 3)")
    assert got["EREC-12"].evidence[0].value == P.C1.guid


def _byte(at: int, value: int = 1):
    def change(vals, raw):
        raw[at] = value
        return raw
    return change


def _version(v: int):
    def change(vals, raw):
        page = next(p for p in P.PAGES.values() if len(raw) in p.sizes.values()
                    and raw[p.guid_at:p.guid_at + 16] == int(p.guid, 16).to_bytes(16, "little"))
        raw[page.version_at:page.version_at + 2] = v.to_bytes(2, "little")
        return raw
    return change


def _set(log: int, **kw):
    def change(vals, raw):
        vals.update(kw)
        return bytearray(encode(P.PAGES[log], vals, GOOD[log][1]))
    return change


BREAKS = {   # row -> (log, change): the one thing wrong, the row FAILs
    "EREC-2": (0xC1, _set(0xC1, error_reset_action=0x41)),
    "EREC-3": (0xC1, _set(0xC1, device_recovery_action_1=0x03)),
    "EREC-5": (0xC1, _set(0xC1, device_capabilities=0x5)),
    "EREC-6": (0xC1, _set(0xC1, vendor_specific_recovery_opcode=0xC0)),
    "EREC-7": (0xC1, _byte(18)),
    "EREC-8": (0xC1, _set(0xC1, vendor_specific_command_cdw12=1)),
    "EREC-10": (0xC1, _byte(100)),
    "EREC-11": (0xC1, _version(2)),
    "EREC-12": (0xC1, _byte(500, 0xEE)),
    "EREC-14": (0xC1, _set(0xC1, device_recovery_action_2=0x80)),
    "LMDATA-1": (0xC3, _set(0xC3, feature_status=0x17)),
    "LMDATA-2": (0xC3, _byte(1)),
    "LMDATA-12": (0xC3, _byte(33)),                 # bucket 0's reserved bytes 35:32
    "LMDATA-9": (0xC3, _set(0xC3, active_latency_configuration=0x1FFF)),
    "LMDATA-32": (0xC3, _set(0xC3, debug_counter_trigger_source=0x0005)),
    "LMDATA-33": (0xC3, _set(0xC3, debug_log_stamp_units=0x02)),
    "LMDATA-35": (0xC3, _version(6)),
    "LMDATA-38": (0xC3, _byte(600)),
    "LMLOG-11": (0xC3, _set(0xC3, active_threshold_c=0x13)),
    "DCLP-1": (0xC4, _set(0xC4, pcie_ports=0)),
    "DCLP-2": (0xC4, _set(0xC4, oob_management_support=0x0008)),
    "DCLP-3": (0xC4, _set(0xC4, write_zeroes_support=0x8000)),     # Identify says supported
    "DCLP-4": (0xC4, _set(0xC4, sanitize_support=0x0002)),         # SANICAP 0: no crypto erase
    "DCLP-6": (0xC4, _set(0xC4, write_uncorrectable_support=0x0004)),
    "DCLP-7": (0xC4, _set(0xC4, fused_operation_support=0x0001)),  # FUSES 0
    "DCLP-8": (0xC4, _set(0xC4, minimum_valid_dssd_power_state=0)),
    "DCLP-9": (0xC4, _byte(16)),
    "DCLP-10": (0xC4, _byte(2000)),
    "DCLP-13": (0xC4, _set(0xC4, fips_140_validation=0x0005)),
    "DSSDPSD-1": (0xC4, _byte(16 + 24, 0x80)),      # DSSD state 24 valid below the minimum
    "DSSDPSD-2": (0xC4, _byte(16 + 30, 0xA0)),
    "DSSDPSD-3": (0xC4, _byte(16 + 30, 0x81)),      # NVMe state 1: QEMU has state 0 only
    "URLP-1": (0xC5, _set(0xC5, unsupported_count=3)),
    "URLP-2": (0xC5, _byte(5)),
    "URLP-3": (0xC5, _set(0xC5, unsupported_requirements=["STD-LOG-7", "PWR-1"] + [""] * 251)),
    "URLP-4": (0xC5, _byte(4070)),
    "URLP-5": (0xC5, _version(2)),
    "URLP-6": (0xC5, _byte(4090)),
}


@pytest.mark.parametrize("rid", sorted(BREAKS))
def test_each_row_fails_on_a_page_broken_for_it(qemu, rid):
    log, change = BREAKS[rid]
    got = verdicts(constructed(qemu, {log: change}))
    assert got[rid].verdict == FAIL, (rid, got[rid].why)
    assert got[rid].evidence and got[rid].why


def test_a_page_of_another_guid_fails_its_rows_with_the_decoders_words(qemu):
    got = verdicts(constructed(qemu, {0xC3: _byte(500, 0xEE)}))
    assert got["LMDATA-36"].why == ("Log Page GUID 0x85d45e58d4e643709c6c84ee8cc07a92 "
                                    "(0x85d45e58d4e643709c6c84d08cc07a92 asked)")
    assert got["LMDATA-3"].why.startswith("log C3h answered bytes that are not the Latency "
                                          "Monitor page (log C3h: GUID")
    assert got["LMDATA-35"].verdict == PASS           # its version is still 5
    old = verdicts(constructed(qemu, {0xC1: _version(2)}))
    assert old["EREC-16"].why == "log page version 2 does not carry error_count"
    assert old["EREC-10"].why == "log page version 2 does not have these bytes"  # 2.0: 493:31


def test_the_telemetry_format_bit_makes_lmlog_15_to_18_apply(qemu):
    got = verdicts(constructed(qemu, {0xC3: _set(0xC3, feature_status=0x0F)}))
    assert {got[i].verdict for i in CONDITIONAL} == {NOT_CHECKED}
    assert "Latency Monitor Debug Telemetry log (CAh)" in got["LMLOG-16"].why


def test_every_custom_row_is_broken_once_above():
    """Each row with a rule of its own (ocp_page_rules.CUSTOM) has a break in BREAKS, but for
    LMLOG-12/13 (the page answered: broken by the refusal) and the conditional rows."""
    left = set(CUSTOM) - set(BREAKS) - {"LMLOG-12", "LMLOG-13", *CONDITIONAL}
    assert left == {"DCLP-5", "EREC-9"}, left      # the same checks as DCLP-3/-4 and EREC-8


# --- the reader ------------------------------------------------------------------------


def test_read_pages_reads_each_page_once_and_c3h_whole(tmp_path):
    """A stand-in for nvme-cli answering C3h with a constructed version 5 page (read at 512
    bytes, then again at 4096 as its version says), C5h with a constructed page, and the rest
    as QEMU 10 does (refused)."""
    c3 = encode(P.C3, C3, 5)
    c5 = encode(P.C5, C5, 1)

    class Stand(Drive):
        def __call__(self, argv, *, stdout_path=None, **kw):
            log = self._arg(argv, "--log-id")
            if log in ("0xc3", "0xc5"):
                self.calls.append(list(argv))
                data = c3 if log == "0xc3" else c5
                stdout_path.write_bytes(data[:int(self._arg(argv, "--log-len"))])
                return CommandResult(tuple(argv), 0, "", "", 0.1)
            return super().__call__(argv, stdout_path=stdout_path, **kw)

    from pts.tools.nvme_facts import Facts
    run, facts = Stand(), Facts()
    ocp_page_facts.read_pages("/dev/nvme0", tmp_path, facts, run=run)
    lens = [(c[3], c[4]) for c in run.calls]
    assert lens == [("--log-id=0xc1", "--log-len=512"), ("--log-id=0xc3", "--log-len=512"),
                    ("--log-id=0xc3", "--log-len=4096"), ("--log-id=0xc4", "--log-len=4096"),
                    ("--log-id=0xc5", "--log-len=4096")]
    got = facts.values["ocp_pages"]
    assert (tmp_path / "log-c3h.bin").read_bytes() == c3
    assert got["C3h"]["decoded"]["fields"]["active_threshold_d"] == 0x2E
    assert (got["C3h"]["version"], got["C3h"]["bytes"], got["C3h"]["error"]) == (5, 4096, None)
    assert got["C3h"]["reserved"]["reserved_512"] == 0
    assert got["C4h"]["refused"] == "Invalid Field in Command (0x4002)"
    assert facts.values["logs"]["C1h"]["refused"].startswith(
        "nvme get-log /dev/nvme0 --log-id=0xc1 --log-len=512 --raw-binary: exit status 1: ")
    assert facts.refused == {}


def test_status_text():
    said = (Path(__file__).parents[1] / "data/qemu-10/nvme-get-log-c3h_refused.stderr.txt")
    assert ocp_page_facts.status_text(said.read_text()) == "Invalid Field in Command (0x4002)"
    assert ocp_page_facts.status_text("get-log: timed out\n") == "get-log: timed out"
