"""The DSSD features C2h-CBh read with Get Features (pts.tools.dssd_features) and judged
(pts.stored.dssd_feature_rules): on what QEMU 10's controller answers (tests/data/qemu-10/fdp:
C8h and C9h refused as recorded; the other DSSD features answered by the stand-in with that
recorded refusal, labelled in tests/support/qemu10_drive.py), and on constructed Get answers
(labelled "constructed": nvme-cli 2.3's get-feature lines in the recorded 02h's form, with the
values the v2.7 text allows), then each kind of check broken once by one constructed value."""

from __future__ import annotations

import pytest

from pts.config.ocp_all_ids import all_ids, resolve
from pts.stored import dssd_feature_rules as rules
from pts.stored.host_judge import RULES, ids, judge
from pts.stored.host_rules import FAIL, NOT_APPLICABLE, NOT_CHECKED, PASS
from pts.tools.commands import CommandResult
from pts.tools.dssd_features import FIDS, read_dssd_features
from pts.tools.nvme_facts import Facts
from tests.support.qemu10_drive import DSSD_NOT_RECORDED, FDP, Drive, recorded_facts

MINE = [r[0] for r in rules.GET] + [r[0] for r in rules.SAVE]
ASKED = ("DSSDPSG-1",)        # an answer leaves it NOT CHECKED (DSSDPSG-2: test_dssd_general_rules)
NOT_SAVEABLE = ("CPCIE-10", "SDAEC-10")            # C3h, C9h: Save not supported
WORDS = {0: "Current value", 1: "Default value", 3: "Supported capabilities value"}
# constructed: each feature's Dword 0 by SEL, as the text allows (capabilities: GETF-5's
# Changeable bit and the Saveable bit of 4.15.2's table)
GOOD = {"C2h": {0: 0b010, 1: 0b001, 3: 0b101}, "C3h": {0: 0, 1: 0, 3: 0b100},
        "C4h": {0: 0b001, 1: 0b000, 3: 0b101}, "C5h": {0: 0, 1: 0, 3: 0b101},
        "C6h": {0: 0x0030, 1: 0x000F, 3: 0b101}, "C7h": {0: 25, 1: 25, 3: 0b101},
        "C8h": {0: 1, 1: 0, 3: 0b101}, "C9h": {0: 0b01, 1: 0b01, 3: 0b100},
        "CAh": {0: 0x0064, 1: 0x000A, 3: 0b101}, "CBh": {0: 0x0044, 1: 0x0044, 3: 0b101}}


class Answers:
    """commands.run for `nvme get-feature` on a constructed drive: `values` fid -> SEL ->
    Dword 0 (an absent SEL or fid: refused with QEMU's recorded words)."""

    def __init__(self, values):
        self.values, self.calls = values, []

    def __call__(self, argv, **kwargs):
        self.calls.append(argv)
        fid = argv[3].split("=")[1][2:].upper() + "h"
        sel = int(argv[4].split("=")[1])
        value = self.values.get(fid, {}).get(sel)
        if value is None:
            return CommandResult(tuple(argv), 1, "", DSSD_NOT_RECORDED, 0.1)
        text = f"get-feature:0x{fid[:2].lower()} (Unknown), {WORDS[sel]}:{value:08x}\n"
        return CommandResult(tuple(argv), 0, text, "", 0.1)


def constructed(change=None) -> dict:
    """The facts the product's reader makes of GOOD with `change` (fid -> SEL -> value)."""
    values = {fid: dict(sels) for fid, sels in GOOD.items()}
    for fid, sels in (change or {}).items():
        values[fid].update(sels)
    facts = Facts()
    read_dssd_features("/dev/nvme0", facts, run=Answers(values))
    return facts.values


def verdicts(facts: dict) -> dict:
    return {v.req_id: v for v in judge(facts) if v.req_id in MINE}


@pytest.fixture(scope="module")
def qemu(tmp_path_factory) -> dict:
    return recorded_facts(tmp_path_factory.mktemp("qemu10"))


def test_every_rule_is_registered_once_under_a_v27_id():
    v27 = {e.id for e in all_ids("2.7")}
    assert len(MINE) == len(set(MINE)) == 29 and set(MINE) <= set(ids()) and set(MINE) <= v27
    # no other rule module holds one of them (a later registration would replace the rule)
    assert {RULES[("2.7", r)][1].__module__ for r in MINE} == {rules.__name__}


def test_qemu_10_refuses_every_dssd_feature(qemu):
    got = verdicts(qemu)
    want = {r: NOT_APPLICABLE if r in NOT_SAVEABLE else FAIL for r in MINE}
    assert {r: v.verdict for r, v in got.items()} == want
    recorded = (FDP / "feature-c9h_current.txt.stderr.txt").read_text().strip()
    assert recorded.endswith("(0x4002)") and recorded in got["GDAEC-2"].evidence[0].value
    assert got["GDAEC-2"].evidence[0].source == "nvme get-feature --feature-id=0xc9 --sel=0"
    assert got["GROWTM-1"].why.startswith("PLP Failure Mode feature (C2h) refused as not "
                                          "supported (GETF-2)")
    # a refused current value: the other SELs are not asked
    assert qemu["dssd_features"]["C2h"] == {"refused": (
        "nvme get-feature /dev/nvme0 --feature-id=0xc2 --sel=0: exit status 1: "
        + DSSD_NOT_RECORDED.strip())}


def test_the_reader_asks_only_get_features_and_stops_at_a_refusal():
    drive = Drive()
    read_dssd_features("/dev/nvme0", Facts(), run=drive)
    assert [c[3:] for c in drive.calls] == [[f"--feature-id=0x{f:02x}", "--sel=0"]
                                            for f in FIDS]
    answers = Answers({"C2h": {0: 1, 3: 5}})       # constructed: C2h's default refused
    facts = Facts()
    read_dssd_features("/dev/nvme0", facts, run=answers)
    assert len(answers.calls) == 3 + len(FIDS) - 1
    c2 = facts.values["dssd_features"]["C2h"]
    assert c2["current"] == 1 and c2["capabilities"] == 5 and "0x4002" in c2["default"]["refused"]


def test_answers_as_the_text_asks_pass():
    got = verdicts(constructed())
    assert {r: v.verdict for r, v in got.items()} == {
        r: NOT_CHECKED if r in ASKED else PASS for r in MINE}
    assert got["GROWTM-2"].why == ("current value's bits 2:0 0x2 (the text allows 0x1, 0x2, "
                                   "0x3); default value's bits 2:0 0x1 (the text allows 0x1)")
    assert got["GIDLE-2"].why.endswith("not judged: whether the default is the minimum value "
                                       "the device supports is not known to a host")
    assert got["DSSDPSG-1"].why.startswith("answered (bits 6:0: current 0x19, default 0x19)")


@pytest.mark.parametrize("change, broken", [
    ({"C2h": {0: 0b1010}}, ["GROWTM-1"]),                   # reserved bit 3 set (current)
    ({"C8h": {1: 0x100}}, ["TEL-CFG-GF-2"]),                # reserved bit 8 set (default)
    ({"C3h": {1: 1}}, ["GPCIE-1"]),                         # Dword 0 not zero
    ({"C5h": {0: 0x80000000}}, ["LMGF-1"]),
    ({"C2h": {0: 0b000}}, ["GROWTM-2"]),                    # current 000b: reserved
    ({"C2h": {1: 0b011}}, ["GROWTM-2"]),                    # default not ROM
    ({"C6h": {1: 0x0010}}, ["GPLPI-2"]),                    # default neither 0 nor 15 min
    ({"C9h": {1: 0b10}}, ["GDAEC-2", "GDAEC-3"]),           # the AEN defaults swapped
    ({"C4h": {0: 0b011}}, ["G1667-2"]),
    ({"CAh": {3: 0b100}}, ["SIDLE-10"]),                    # saveable, SVBL 0
    ({"C9h": {3: 0b101}}, ["SDAEC-10"]),                    # not saveable, SVBL 1
])
def test_each_kind_of_check_fails_on_the_one_value_broken(change, broken):
    got = verdicts(constructed(change))
    assert sorted(r for r, v in got.items() if v.verdict == FAIL) == sorted(broken)


def test_a_sel_not_answered_or_another_refusal_is_not_checked():
    got = verdicts(constructed({"CBh": {1: None}}))        # constructed: default refused
    assert got["MPCSG-2"].verdict == NOT_CHECKED and "001b (default) not answered" in \
        got["MPCSG-2"].why
    facts = constructed()
    facts["dssd_features"]["C2h"] = {"refused": "nvme get-feature ...: exit status 1: "
                                     "Inappropriate ioctl for device"}   # constructed
    got = verdicts(facts)
    assert got["GROWTM-1"].verdict == NOT_CHECKED and "failed otherwise" in got["GROWTM-1"].why
    del facts["dssd_features"]                              # a run that did not read them
    assert {v.verdict for v in verdicts(facts).values()} == {NOT_CHECKED}


def test_the_set_ids_say_the_suite_sends_no_set_features():
    v27 = {e.id: e for e in all_ids("2.7")}
    for rid in ("SROWTM-13", "CPCIE-1", "SDSSDPS-2", "TEL-CFG-SF-3", "SDAEC-14", "MPCS-12",
                "DSSDPSS-1"):
        cls, why = resolve(v27[rid], None)
        assert cls == NOT_CHECKED and "sends no Set Features" in why, rid
    assert "sends no Set Features" not in resolve(v27["DP-CFG-6"], None)[1]
