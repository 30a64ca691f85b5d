"""GETF-1, GETF-5, NVMe-AD-31/32 and DSSDPSG-2 judged from the reads the suite already makes at
a test's start (pts.stored.dssd_feature_rules): the DSSD features C2h-CBh by Get Features
(pts.tools.dssd_features), Identify Controller's ONCS and power state descriptors, Get
Features 02h and log C4h's DSSD Power State Descriptors (pts.tools.ocp_page_facts).

On QEMU 10's recorded controller (tests/support/qemu10_drive: every DSSD feature and log C4h
refused with "Invalid Field in Command (0x4002)"; one power state, 25 W, in use) and on
CONSTRUCTED answers, labelled: Get Features lines in nvme-cli 2.3's form with the values the
v2.7 text allows, and a C4h page built with the product's encoder
(pts.tools.ocp_log_decode.encode). No drive gave the constructed answers: QEMU answers none.
"""

from __future__ import annotations

import copy

import pytest

from pts.config import ocp_log_pages as P
from pts.stored import dssd_feature_rules as rules
from pts.stored.host_judge import RULES, judge
from pts.stored.host_rules import FAIL, NOT_CHECKED, PASS
from pts.tools import ocp_page_facts
from pts.tools.commands import CommandResult
from pts.tools.dssd_features import read_dssd_features
from pts.tools.nvme_facts import Facts
from pts.tools.ocp_log_decode import encode
from tests.support.qemu10_drive import DSSD_NOT_RECORDED, recorded_facts

MINE = ("GETF-1", "GETF-5", "NVMe-AD-31", "NVMe-AD-32", "DSSDPSG-2")
# constructed: Dword 0 by feature and SEL as the text allows; capabilities (SEL 011b) per
# GETF-5 and 4.15.2: CHANG 1b, NSSPEC 0b, SVBL 1b but for C3h and C9h
CAPS = {fid: 0b100 if fid in ("C3h", "C9h") else 0b101 for fid in rules.NAMES}
GOOD = {fid: {0: 0, 1: 0, 3: CAPS[fid]} for fid in rules.NAMES}
GOOD["C2h"].update({0: 0b010, 1: 0b001})
GOOD["C9h"].update({0: 0b01, 1: 0b01})              # Error Reporting on, Media Ready off
GOOD["C7h"].update({0: 25, 1: 25})                  # QEMU's one power state: 25 W
TIMEOUT = "nvme get-feature ...: exit status 1: timed out"                 # constructed
WORDS = {0: "Current value", 1: "Default value", 3: "Supported capabilities value"}


def get_features(values):
    """commands.run answering `nvme get-feature` from `values` (fid -> SEL -> Dword 0; None:
    refused with QEMU's recorded words; a str: that said, exit 1)."""
    def run(argv, **kwargs):
        fid = argv[3].split("=")[1][2:].upper() + "h"
        value = values[fid].get(int(argv[4].split("=")[1]))
        if value is None or isinstance(value, str):
            return CommandResult(tuple(argv), 1, "", value or DSSD_NOT_RECORDED, 0.1)
        sel = int(argv[4].split("=")[1])
        return CommandResult(tuple(argv), 0, f"get-feature:0x{fid[:2].lower()} (Unknown), "
                             f"{WORDS[sel]}:{value:08x}\n", "", 0.1)
    return run


def c4h(valid_from: int = 1, invalid: tuple[int, ...] = ()) -> dict:
    """A CONSTRUCTED log C4h fact: DSSD Power States valid_from..127 valid but `invalid`."""
    desc = [0] + [0x80 if n >= valid_from and n not in invalid else 0 for n in range(1, 128)]
    raw = encode(P.C4, {"pcie_ports": 1, "minimum_valid_dssd_power_state": valid_from,
                        "dssd_power_state_descriptors": desc}, 2)
    fact = {"command": "nvme get-log /dev/nvme0 --log-id=0xc4 --log-len=4096 --raw-binary",
            "exit": 0, "file": "log-c4h.bin"}
    fact.update(ocp_page_facts.page_fact(P.C4, raw))
    return fact


@pytest.fixture(scope="module")
def qemu(tmp_path_factory) -> dict:
    return recorded_facts(tmp_path_factory.mktemp("qemu10"))


def constructed(qemu, change=None, *, states=None, in_use=0, c4=None) -> dict:
    """QEMU's facts with the DSSD features answered as GOOD changed by `change`, the power
    states `states` (watts of each; QEMU's one 25 W state when None), state `in_use` and
    log C4h `c4` (QEMU's refusal when None)."""
    facts = copy.deepcopy(qemu)
    values = {fid: dict(sels) for fid, sels in GOOD.items()}
    for fid, sels in (change or {}).items():
        values[fid].update(sels)
    got = Facts()
    read_dssd_features("/dev/nvme0", got, run=get_features(values))
    facts["dssd_features"] = got.values["dssd_features"]
    if states is not None:
        psd = facts["id_ctrl"]["psds"][0]
        facts["id_ctrl"]["psds"] = [dict(psd, state=i, watts=w, mp=round(w * 100))
                                    for i, w in enumerate(states)]
    facts["feature_02h"] = in_use
    if c4 is not None:
        facts["ocp_pages"]["C4h"] = c4
    return facts


def verdicts(facts: dict) -> dict:
    return {v.req_id: v for v in judge(facts) if v.req_id in MINE}


def test_the_rules_are_this_modules_with_the_texts_lines():
    assert {r: (RULES[("2.7", r)][0], RULES[("2.7", r)][1].__module__) for r in MINE} == {
        "GETF-1": (7334, rules.__name__), "GETF-5": (7355, rules.__name__),
        "NVMe-AD-31": (450, rules.__name__), "NVMe-AD-32": (453, rules.__name__),
        "DSSDPSG-2": (8495, rules.__name__)}


def test_qemu_10_refuses_every_dssd_feature(qemu):
    got = verdicts(qemu)
    assert {r: v.verdict for r, v in got.items()} == dict.fromkeys(MINE, FAIL)
    assert got["GETF-1"].why.startswith("refused as not supported: C2h SEL 000b, C3h SEL 000b")
    assert got["GETF-1"].evidence[0].value == "0x75d"            # ONCS bit 4 set
    assert got["GETF-5"].why.count("refused as not supported: no capabilities") == 10
    assert got["NVMe-AD-31"].evidence[0].source == "nvme get-feature --feature-id=0xc9 --sel=0"
    assert "(0x4002)" in got["DSSDPSG-2"].evidence[0].value


def test_answers_as_the_text_asks(qemu):
    got = verdicts(constructed(qemu))
    assert {r: v.verdict for r, v in got.items()} == {**dict.fromkeys(MINE, PASS),
                                                      "GETF-1": NOT_CHECKED}
    assert "SEL 010b (saved) is not sent by the suite" in got["GETF-1"].why
    assert got["GETF-5"].why.endswith("not judged: C0h (Event Injection), which the suite "
                                      "does not ask")
    assert got["NVMe-AD-31"].why == ("Error Reporting AEN Enabled (bit 0): default value's "
                                     "bits 0:0 0x1 (the text allows 0x1)")
    # C4h refused (QEMU): the states as the text numbers them, said
    assert got["DSSDPSG-2"].why.startswith("C7h reports DSSD Power State 25; NVMe power state "
                                           "0 (25.0 W) in use: the lowest")
    assert "Get Log Page C4h: Invalid Field in Command (0x4002)" in got["DSSDPSG-2"].why
    # the guest test takes "not read" in a reason for a fact the run missed: none here
    assert not [r for r, v in got.items() if "not read" in v.why]


@pytest.mark.parametrize("change, broken", [
    ({"C6h": {1: None}}, ["GETF-1"]),                        # a default refused
    ({"C2h": {3: 0b001}}, ["GETF-5"]),                       # CHANG 0b
    ({"C4h": {3: 0b111}}, ["GETF-5"]),                       # NSSPEC 1b
    ({"CAh": {3: 0b1101}}, ["GETF-5"]),                      # reserved bit 3
    ({"C5h": {3: 0b100}}, ["GETF-5"]),                       # C5h saveable, SVBL 0b
    ({"C3h": {3: 0b101}}, ["CPCIE-10", "GETF-5"]),           # C3h not saveable, SVBL 1b
    ({"C9h": {1: 0b10}}, ["GDAEC-2", "GDAEC-3", "NVMe-AD-31", "NVMe-AD-32"]),
    ({"C9h": {1: 0b00}}, ["GDAEC-2", "NVMe-AD-31"]),
    ({"C9h": {1: 0b11}}, ["GDAEC-3", "NVMe-AD-32"]),
    ({"C7h": {0: 24}}, ["DSSDPSG-2"]),                       # below the 25 W in use
])
def test_each_broken_answer_fails_only_its_ids(qemu, change, broken):
    got = judge(constructed(qemu, change))
    failed = sorted(v.req_id for v in got if v.verdict == FAIL
                    and v.req_id in MINE + tuple(r[0] for r in rules.GET + rules.SAVE))
    assert failed == sorted(broken)


def test_getf_1_without_the_select_field_or_with_another_failure(qemu):
    facts = constructed(qemu)
    facts["id_ctrl"]["oncs"] &= ~0x10                        # constructed: ONCS bit 4 clear
    assert verdicts(facts)["GETF-1"].verdict == FAIL
    got = verdicts(constructed(qemu, {"CBh": {3: TIMEOUT}}))
    assert (got["GETF-1"].verdict, got["GETF-5"].verdict) == (NOT_CHECKED, NOT_CHECKED)
    assert "CBh SEL 011b (capabilities)" in got["GETF-1"].why


def test_ad_31_32_on_a_run_recorded_before_the_defaults_were_read(qemu):
    facts = constructed(qemu)
    del facts["dssd_features"]
    facts["features"]["C9h"] = {"capabilities": 4}           # constructed: answered
    got = verdicts(facts)
    assert got["NVMe-AD-32"].verdict == NOT_CHECKED and "Media Ready AEN Enabled 0b" in \
        got["NVMe-AD-32"].why
    assert got["GETF-5"].why == "not read in this run: dssd_features"
    before = {k: v for k, v in qemu.items() if k != "dssd_features"}    # QEMU: C9h refused
    assert verdicts(before)["NVMe-AD-31"].verdict == FAIL


@pytest.mark.parametrize("states, in_use, reported, c4, verdict", [
    # constructed: NVMe states 25, 18, 12 W; DSSD states 12-127 valid (C4h)
    ((25, 18, 12), 1, 18, c4h(12), PASS),          # the lowest at or above 18 W
    ((25, 18, 12), 1, 20, c4h(12), NOT_CHECKED),   # a Set of 20 runs state 1: DSSDPSG-1?
    ((25, 18, 12), 1, 25, c4h(12), FAIL),          # a Set of 25 runs state 0, not 1
    ((25, 18, 12), 1, 17, c4h(12), FAIL),          # below 18 W
    ((25, 18, 12), 1, 19, c4h(12, (18,)), PASS),   # C4h: 18 not valid, so 19 the lowest
    ((25, 18, 12), 1, 18, c4h(12, (18,)), NOT_CHECKED),  # ... 18 >= the minimum: Settable
    ((25, 17.5, 12), 1, 18, None, PASS),           # C4h refused: 18, the text's numbering
    ((25, 18, 12), 1, 18, c4h(30), FAIL),          # 18 below C4h's minimum (30): no Set
    ((25, 18, 12), 1, 26, c4h(30, tuple(range(30, 128))), NOT_CHECKED),  # none valid >= 18
])
def test_dssdpsg_2_against_the_nvme_state_in_use_and_c4h(qemu, states, in_use, reported, c4,
                                                         verdict):
    facts = constructed(qemu, {"C7h": {0: reported}}, states=states, in_use=in_use, c4=c4)
    got = verdicts(facts)["DSSDPSG-2"]
    assert got.verdict == verdict, got.why
    if c4 is not None and reported >= states[in_use]:       # C4h is asked only then
        assert got.evidence[-1].where == "log C4h bytes 143:17 (DCLP-9), bit 7 (valid) of each"
