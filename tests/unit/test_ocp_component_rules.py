"""The OCP Hardware Component log page (C6h) read as bytes at a test's start
(pts.tools.ocp_component_facts) and its v2.7 rows judged (pts.stored.ocp_component_rules): on
QEMU 10's recorded refusal (tests/data/qemu-10: "Invalid Field in Command (0x4002)", exit 1,
its answer to every OCP page but C0h; tests/support/qemu10_drive) and on CONSTRUCTED pages,
built here with the product's encoder (pts.tools.ocp_components.encode) from descriptors
chosen to meet the text, then changed one thing at a time to break one kind of rule each. No
drive gave these constructed pages: QEMU answers no C6h.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pts.config.ocp_all_ids import all_ids
from pts.stored import host_judge
from pts.stored.host_rules import FAIL, NOT_APPLICABLE, NOT_CHECKED, PASS
from pts.tools import ocp_components
from pts.tools.commands import CommandResult
from pts.tools.nvme_facts import Facts
from pts.tools.ocp_component_facts import read_components
from tests.support.qemu10_drive import recorded_facts

GROUPS = ("HWCLOG", "HWCOMP", "COMPD", "CITYPE")
IDS = sorted(e.id for e in all_ids("2.7") if e.group in GROUPS)
VENDOR_ONLY = ("HWCOMP-1", "HWCOMP-2")          # the vendor's knowledge: NOT CHECKED
ABSENT = ("CITYPE-8", "CITYPE-9")               # no resistor, no case in the good page


def hw(code: int, **kw) -> dict:
    return {"component_identifier": code, "manufacture": 0x2C, "revision": 3,
            "manufacture_code": 0x1234, "date_lot_code": b"2426LOT7", **kw}


def info(code: int, value: bytes) -> dict:
    return {"component_identifier": code, "additional_information": value}


GOOD = [hw(1), hw(2), hw(2), hw(3), hw(4), hw(5), hw(6), info(9, b"S5XYNA0R123456"),
        info(0xA, b"Deutschland"), info(0xB, b"REV-B2"), info(0xC, b"03142025"),
        hw(0x8001, additional_information=b"vendor")]


class C6Drive:
    """commands.run answering Get Log Page C6h with `data` cut or zero-padded to --log-len (a
    constructed page), counting the reads."""

    def __init__(self, data: bytes):
        self.data, self.calls = data, []

    def __call__(self, argv, *, stdout_path=None, **kw):
        self.calls.append(list(argv))
        assert argv[:2] == ["nvme", "get-log"] and "--log-id=0xc6" in argv, argv
        n = int(next(a for a in argv if a.startswith("--log-len="))[10:])
        stdout_path.write_bytes(self.data[:n].ljust(n, b"\0"))
        return CommandResult(tuple(argv), 0, "", "", 0.1)


def facts_of(data: bytes, folder: Path) -> dict:
    folder.mkdir(exist_ok=True)
    facts = Facts()
    read_components("/dev/nvme0", folder, facts, run=C6Drive(data))
    return facts.values


def judged(facts: dict) -> dict:
    return {v.req_id: v for v in host_judge.judge(facts) if v.req_id in IDS}


def test_the_rows_are_every_c6h_id_of_the_text():
    assert len(IDS) == 38 and set(IDS) <= set(host_judge.ids("2.7"))


def test_qemu_10s_refusal_fails_every_row_with_its_words(tmp_path):
    v = judged(recorded_facts(tmp_path))
    assert len(v) == 38
    for rid, x in v.items():
        assert x.verdict == FAIL, (rid, x)
        assert x.why.startswith("Get Log Page C6h: Invalid Field in Command (0x4002), exit 1")
        assert x.evidence[0].source == ("nvme get-log /dev/nvme0 --log-id=0xc6 --log-len=64 "
                                        "--raw-binary")


def test_the_reader_reads_the_header_then_the_whole_page(tmp_path):
    data = ocp_components.encode(GOOD)
    drive = C6Drive(data)
    facts = Facts()
    read_components("/dev/nvme0", tmp_path, facts, run=drive)
    fact = facts.values["ocp_pages"]["C6h"]
    assert [c[4] for c in drive.calls] == ["--log-len=64", f"--log-len={len(data)}"]
    assert (tmp_path / "log-c6h.bin").read_bytes() == data
    assert fact["version"] == 2 and fact["log_size"] == len(data) and not fact["walk_problem"]
    assert [d["component_identifier"] for d in fact["components"]] == [
        c["component_identifier"] for c in GOOD]
    assert fact["components"][7]["additional_information"] == b"S5XYNA0R123456\0\0".hex()
    assert fact["components"][0]["date_lot_code"] == b"2426LOT7".hex()


def test_a_constructed_page_meeting_the_text_passes_every_row(tmp_path):
    v = judged(facts_of(ocp_components.encode(GOOD), tmp_path))
    for rid, x in v.items():
        want = NOT_CHECKED if rid in VENDOR_ONLY else NOT_APPLICABLE if rid in ABSENT \
            else PASS
        assert x.verdict == want, (rid, x)


def _page(components=GOOD, *, size=None, version=2, guid=None, poke=()):
    data = bytearray(ocp_components.encode(components, size=size, version=version))
    if guid is not None:
        data[16] ^= 1
    for at, value in poke:
        data[at] = value
    return bytes(data)


BREAKS = [
    # (what is broken, the page, the rows that must FAIL now, a word of the why)
    ("version 1", _page(version=1), ["HWCLOG-1"], "Log Page Version 1"),
    ("another GUID", _page(guid=True), ["HWCLOG-3", "HWCOMP-3", "CITYPE-2"], "GUID"),
    ("reserved byte 5", _page(poke=((5, 1),)), ["HWCLOG-2"], "non-zero"),
    ("reserved byte 50", _page(poke=((50, 1),)), ["HWCLOG-5"], "non-zero"),
    ("log size not Dwords", _page(size=len(_page()) - 2),
     ["HWCLOG-4", "HWCLOG-6", "HWCOMP-7", "HWCOMP-8"], "Dwords"),
    ("log size past the bytes", _page(size=len(_page()) + 4),
     ["HWCLOG-6", "HWCOMP-8", "HWCOMP-9", "COMPD-1", "COMPD-7", "CITYPE-14"], "too few"),
    ("a descriptor past the log size", _page(size=len(_page()) - 4),
     ["HWCOMP-8", "HWCOMP-3", "COMPD-8"], "past the log's last byte"),
    ("zero Dwords between descriptors", _page([*GOOD[:3], {"component_identifier": 0},
                                               *GOOD[3:]]),
     ["HWCOMP-9", "CITYPE-1", "COMPD-3"], "0000h"),
    ("no DRAM", _page([c for c in GOOD if c["component_identifier"] != 3]),
     ["HWCOMP-3", "CITYPE-4"], "DRAM"),
    ("no serial number", _page([c for c in GOOD if c["component_identifier"] != 9]),
     ["HWCOMP-4", "CITYPE-10"], "no descriptor of 0009h"),
    ("country with a revision", _page([*GOOD[:8], {**info(0xA, b"DE"), "revision": 1},
                                       *GOOD[9:]]),
     ["HWCOMP-5", "CITYPE-11"], "not 0h: revision"),
    ("country not UTF-8", _page([*GOOD[:8], info(0xA, b"\xff\xfe"), *GOOD[9:]]),
     ["CITYPE-11"], "not UTF-8"),
    ("revision empty", _page([*GOOD[:9], info(0xB, b""), *GOOD[10:]]),
     ["HWCOMP-6", "CITYPE-12"], "empty"),
    ("born on 2025-14-03", _page([*GOOD[:10], info(0xC, b"14032025"), *GOOD[11:]]),
     ["CITYPE-15"], "MMDDYYYY"),
    ("a reserved identifier 000Dh", _page([*GOOD, hw(0xD)]), ["CITYPE-13", "COMPD-3"],
     "000Dh"),
]


@pytest.mark.parametrize("what, data, rows, word", BREAKS, ids=[b[0] for b in BREAKS])
def test_one_thing_broken_fails_its_rows(tmp_path, what, data, rows, word):
    v = judged(facts_of(data, tmp_path))
    for rid in rows:
        assert v[rid].verdict == FAIL, (what, rid, v[rid])
    assert any(word in v[r].why for r in rows), [v[r].why for r in rows]
    good = judged(facts_of(_page(), tmp_path / "good"))
    assert all(good[r].verdict == PASS for r in rows)


def test_a_read_failing_otherwise_is_not_checked():
    facts = {"ocp_pages": {"C6h": {"command": "nvme get-log ...", "exit": 2,
                                   "error": "timed out"}}}
    v = judged(facts)
    assert {x.verdict for x in v.values()} == {NOT_CHECKED}
