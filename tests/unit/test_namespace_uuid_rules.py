"""The OCP namespace management and UUID rows judged read-only (pts.stored.namespace_uuid_rules)
from what pts.tools.uuid_facts reads at a test's start: on QEMU 10's recorded controller
(tests/support/qemu10_drive: its Identify Controller has CTRATT 0x88010, bits 7 and 9
cleared, so neither the UUID List nor the Namespace Granularity List is asked of it; its
recorded log 05h has USS cleared for every opcode; OACS 0x12a, bit 3 set) and on CONSTRUCTED
answers built here (a UUID List holding the DSSD UUID, a granularity list, log 05h with USS
set), which no drive gave: QEMU was not asked them (the live guest asks neither either, for
the same CTRATT bits).
"""

from __future__ import annotations

import uuid

import pytest

from pts.stored import host_judge
from pts.stored.host_rules import FAIL, NOT_CHECKED, PASS
from pts.stored.namespace_uuid_rules import DSSD_UUID
from pts.tools.commands import CommandResult
from pts.tools.nvme_facts import Facts
from pts.tools.uuid_facts import read_uuid_facts
from tests.support.qemu10_drive import recorded_facts

REFUSED = b"refused"       # facts_of: the stand-in refuses that Identify
IDS = ("NSM-1", "NSM-6", "UUID-1", "UUID-2", "UUID-4")


def judged(facts: dict) -> dict:
    return {v.req_id: v for v in host_judge.judge(facts) if v.req_id in IDS}


def test_qemu_10s_recorded_controller(tmp_path):
    facts = recorded_facts(tmp_path)
    assert facts["uuid_list"] == {"not_read": "CTRATT bit 9 (UUID List) cleared"}
    assert facts["ns_granularity"] == {"not_read": "CTRATT bit 7 (Namespace Granularity) "
                                                   "cleared"}
    assert facts["uuid_selection"] == {"admin": [], "file": "log-05h.bin"}
    v = judged(facts)
    assert {k: x.verdict for k, x in v.items()} == {
        "NSM-1": PASS, "NSM-6": FAIL, "UUID-1": FAIL, "UUID-2": FAIL, "UUID-4": FAIL}
    assert "USS cleared for opcode 09h, 0Ah" in v["UUID-2"].why
    assert "CTRATT bit 9 cleared" in v["UUID-1"].why


def uuid_list(*entries: tuple[int, str]) -> bytes:
    data = bytearray(4096)
    for i, (assoc, u) in enumerate(entries):
        at = 32 + 32 * i
        data[at] = assoc
        data[at + 16:at + 32] = uuid.UUID(u).bytes
    return bytes(data)


class Ctrl:
    """commands.run answering Identify CNS 17h and 16h with constructed bytes (None: refused
    as QEMU refuses what it does not emulate, "Invalid Field in Command")."""

    def __init__(self, cns17: bytes | None, cns16: bytes | None):
        self.answers, self.calls = {"0x17": cns17, "0x16": cns16}, []

    def __call__(self, argv, *, stdout_path=None, **kw):
        self.calls.append(list(argv))
        assert argv[1] == "admin-passthru" and "--opcode=0x06" in argv, argv
        data = self.answers[argv[4].split("=")[1]]
        if data is None:
            return CommandResult(tuple(argv), 1, "", "NVMe status: Invalid Field in Command: "
                                 "A reserved coded value (0x4002)", 0.1)
        stdout_path.write_bytes(data)
        return CommandResult(tuple(argv), 0, "", "", 0.1)


def facts_of(tmp_path, *, ctratt=0x280, oacs=0x8, uss=(0x02, 0x09, 0x0A), cns17=None,
             cns16=None) -> dict:
    effects = bytearray(4096)
    for op in range(256):
        effects[op * 4:op * 4 + 4] = (1 | (1 << 19 if op in uss else 0)).to_bytes(4, "little")
    (tmp_path / "log-05h.bin").write_bytes(effects)
    facts = Facts()
    facts.values["id_ctrl"] = {"ctratt": ctratt, "oacs": oacs}
    facts.files["effects"] = "log-05h.bin"
    good16 = bytearray(4096)
    good16[31] = 1                                   # NUMD 1: two descriptors
    run = Ctrl(uuid_list((0, "8e1a2a5c-0000-4000-8000-000000000001"), (0, DSSD_UUID))
               if cns17 is None else None if cns17 == REFUSED else cns17,
               bytes(good16) if cns16 is None else None if cns16 == REFUSED else cns16)
    read_uuid_facts("/dev/nvme0", tmp_path, facts, run=run)
    return facts.values


def test_a_constructed_drive_meeting_the_text(tmp_path):
    f = facts_of(tmp_path)
    assert f["uuid_list"]["entries"][1] == {"index": 2, "association": 0, "uuid": DSSD_UUID}
    assert f["ns_granularity"]["descriptors"] == 2
    v = judged(f)
    assert {k: x.verdict for k, x in v.items()} == dict.fromkeys(IDS, PASS)
    assert "index 2" in v["UUID-1"].why


BREAKS = [
    ("OACS bit 3 cleared", {"oacs": 0x2}, "NSM-1", "OACS bit 3 cleared"),
    ("CTRATT bit 7 cleared", {"ctratt": 0x200}, "NSM-6", "CTRATT bit 7 cleared"),
    ("CNS 16h refused", {"cns16": REFUSED}, "NSM-6", "refused"),
    ("CTRATT bit 9 cleared", {"ctratt": 0x80}, "UUID-1", "CTRATT bit 9 cleared"),
    ("CNS 17h refused", {"cns17": REFUSED}, "UUID-1", "refused"),
    ("no DSSD UUID", {"cns17": uuid_list((0, "8e1a2a5c-0000-4000-8000-000000000001"))},
     "UUID-1", "not among"),
    ("association 01b", {"cns17": uuid_list((1, DSSD_UUID))}, "UUID-1", "01b"),
    ("Get Features without USS", {"uss": (0x02, 0x09)}, "UUID-2", "0Ah"),
    ("Get Log Page without USS", {"uss": (0x09, 0x0A)}, "UUID-4", "02h"),
]


@pytest.mark.parametrize("what, change, rid, word", BREAKS, ids=[b[0] for b in BREAKS])
def test_one_thing_broken_fails_its_row(tmp_path, what, change, rid, word):
    rows = judged(facts_of(tmp_path, **change))
    assert rows[rid].verdict == FAIL and word in rows[rid].why, rows[rid]


def test_a_run_recorded_before_the_uuid_list_keeps_the_earlier_rule():
    v = judged({"id_ctrl": {"ctratt": 0x200, "oacs": 0x8}})
    assert v["UUID-1"].verdict == NOT_CHECKED and "CNS 17h" in v["UUID-1"].why
    assert v["UUID-2"].verdict == NOT_CHECKED and "uuid_selection" in v["UUID-2"].why
