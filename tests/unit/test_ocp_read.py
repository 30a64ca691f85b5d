"""OCP log pages read as bytes (pts.tools.ocp_log_read) and decoded (pts.tools.ocp_log_decode),
on what QEMU 10's OCP controller really sent (tests/data/qemu-10/README.md, "OCP log pages as
bytes"): its C0h page as `nvme get-log --raw-binary` wrote it, beside nvme-cli 2.3's JSON of
the same page read a moment before, and its refusal of C3h.

`nvme` itself is not run here (no NVMe drive on the test host; the QEMU guest is the place
for that): a stand-in for pts.tools.commands.run answers each get-log with those recorded
outputs, writing the bytes where the real one would (the file named by stdout_path).
"""

from __future__ import annotations

import json

import pytest

from pts.config import ocp_log_c0, ocp_log_pages
from pts.tools import ocp_log_read
from pts.tools.commands import CommandResult
from pts.tools.nvme_json import NvmeError
from pts.tools.ocp_log_decode import as_record, cross_check, decode, from_nvme_cli_json, json_key
from tests.support.helpers import DATA

QEMU10 = DATA / "qemu-10"
MOMENTS = {"0": (0, 12800), "after-64MiB": (67108864, 16790016)}   # PMUW, PMUR bytes
REFUSED = (QEMU10 / "nvme-get-log-c3h_refused.stderr.txt").read_text()


def raw(moment: str) -> bytes:
    return (QEMU10 / f"nvme-get-log-c0h_raw_{moment}.bin").read_bytes()


@pytest.mark.parametrize("moment", MOMENTS)
def test_qemu_c0h_bytes_decode_to_what_nvme_cli_printed(moment):
    """Every field nvme-cli 2.3 printed equals the one decoded from the bytes; the fields
    of a version 5 page that 2.3 does not print (Power State Change Count, SMART-31, and the
    2.5 / 2.6 ones) are given by the bytes, and only version 6's are not given."""
    doc = json.loads((QEMU10 / f"nvme-ocp-smart-add-log_raw-pair_{moment}.json").read_text())
    page = decode(ocp_log_c0.PAGE, raw(moment))
    version, guid, printed = from_nvme_cli_json(ocp_log_c0.PAGE, doc)
    assert (page.version, page.guid, page.spec) == (version, guid, "2.6") == (5, guid, "2.6")
    assert len(printed) == 32           # its 34 keys less the version and GUID
    for field, value in printed.items():
        assert page.fields[field] == value, field
    pmuw, pmur = MOMENTS[moment]
    assert (page.fields["physical_media_units_written"],
            page.fields["physical_media_units_read"]) == (pmuw, pmur)
    assert json_key(ocp_log_c0.PAGE.field("power_state_change_count"), doc) is None
    assert page.fields["power_state_change_count"] == 0            # SMART-31, from the bytes
    given = [f.name for f in ocp_log_c0.PAGE.fields if page.fields.get(f.name) is not None]
    assert len(given) == 55 and set(page.not_given) == {
        "proactive_bad_die_retirement", "form_factor", "dies_in_use_bad_nand_blocks_raw",
        "dies_in_use_bad_nand_blocks_normalized"}
    assert page.all_ones == ()


class Answers:
    """Stands in for commands.run: each get-log answered from a recorded output (its
    bytes to stdout_path, or its stderr and exit status). Every argv kept in `calls`."""

    def __init__(self, replies: dict[int, list[tuple[bytes, str, int]]]):
        self.replies, self.calls = replies, []

    def __call__(self, argv, *, log_file=None, timeout=None, stdout_path=None, check=True):
        self.calls.append(tuple(argv))
        log_id = int(argv[3].split("=")[1], 16)
        data, stderr, rc = self.replies[log_id].pop(0)
        stdout_path.write_bytes(data)
        return CommandResult(tuple(argv), rc, "", stderr, 0.1)


def test_read_log_reads_decodes_and_keeps_the_bytes(tmp_path):
    answers = Answers({0xC0: [(raw("after-64MiB"), "", 0)]})
    out = tmp_path / "c0h.bin"
    page = ocp_log_read.read_log("/dev/nvme0", ocp_log_c0.PAGE, out, run=answers)
    assert answers.calls == [("nvme", "get-log", "/dev/nvme0", "--log-id=0xc0",
                              "--log-len=512", "--raw-binary")]
    assert page.fields["physical_media_units_written"] == 67108864
    assert out.read_bytes() == raw("after-64MiB")        # the evidence kept in the run


def test_a_refused_log_is_not_supported(tmp_path):
    answers = Answers({0xC3: [(b"", REFUSED, 1)]})
    with pytest.raises(ocp_log_read.OcpLogNotSupported,
                       match=r"log C3h: /dev/nvme0 does not support it .*0x4002"):
        ocp_log_read.read_log("/dev/nvme0", ocp_log_pages.C3, tmp_path / "c3h.bin",
                              run=answers)
    # another failure is not taken for a refusal
    answers = Answers({0xC3: [(b"", "NVMe status: Internal Error(0x6)", 1)]})
    with pytest.raises(NvmeError, match="exited with status 1") as err:
        ocp_log_read.read_log("/dev/nvme0", ocp_log_pages.C3, tmp_path / "c3h.bin",
                              run=answers)
    assert not isinstance(err.value, ocp_log_read.OcpLogNotSupported)


def test_a_short_read_is_named(tmp_path):
    """nvme-cli giving fewer bytes than asked (QEMU's first 256, recorded with
    --log-len=256, answering a 512-byte read: a constructed pairing)."""
    answers = Answers({0xC0: [(raw("0")[:256], "", 0)]})
    with pytest.raises(NvmeError, match="gave 256 of 512 bytes"):
        ocp_log_read.read_log("/dev/nvme0", ocp_log_c0.PAGE, tmp_path / "c0h.bin",
                              run=answers)


def test_a_page_larger_in_its_version_is_read_again_whole(tmp_path):
    """C3h: 512 bytes up to version 4, 4096 from version 5 (v2.7): read at 512, its version
    seen, read again at 4096. (QEMU has no C3h: the bytes are laid out from the table.)"""
    c3 = ocp_log_pages.C3
    page = bytearray(4096)
    page[494:496] = (5).to_bytes(2, "little")
    page[496:512] = int(c3.guid, 16).to_bytes(16, "little")
    page[44:48] = (3).to_bytes(4, "little")
    answers = Answers({0xC3: [(bytes(page[:512]), "", 0), (bytes(page), "", 0)]})
    got = ocp_log_read.read_log("/dev/nvme0", c3, tmp_path / "c3h.bin", run=answers)
    assert [c[4] for c in answers.calls] == ["--log-len=512", "--log-len=4096"]
    assert got.fields["active_bucket_counter_0"]["read"] == 3 and got.version == 5


def test_cross_check_names_what_differs():
    """The bytes and nvme-cli's JSON of the same moment agree; of two moments (QEMU's page
    before and after 64 MiB written), the media units differ and are named."""
    same = json.loads((QEMU10 / "nvme-ocp-smart-add-log_raw-pair_0.json").read_text())
    later = json.loads((QEMU10 / "nvme-ocp-smart-add-log_raw-pair_after-64MiB.json")
                       .read_text())
    page = decode(ocp_log_c0.PAGE, raw("0"))
    assert cross_check(ocp_log_c0.PAGE, page, same) == []
    assert cross_check(ocp_log_c0.PAGE, page, later) == [
        "physical_media_units_written: bytes 0, nvme-cli 67108864",
        "physical_media_units_read: bytes 12800, nvme-cli 16790016"]
    record = as_record(page)
    assert json.loads(json.dumps(record)) == record
    assert record["fields"]["power_state_change_count"] == 0 and record["spec"] == "2.6"


@pytest.mark.parametrize("style", ["v1", "v2", "nvme-2.3"])
def test_both_key_styles_agree_with_the_bytes_of_a_fresh_controller(style):
    """nvme-cli 2.16's two key styles and 2.3's (tests/data/nvme-cli-2.16, another boot of
    the same guest) printed QEMU's page of a fresh controller: nothing written, the boot's
    own reads 12,800 bytes. This boot's bytes of that state (the same QEMU, drive options and
    guest) agree with every field each printed, 2.16's version 4 and 5 fields included; the
    page after 64 MiB written differs in its media units written alone."""
    page = decode(ocp_log_c0.PAGE, raw("0"))
    fresh, written = (json.loads((DATA / "nvme-cli-2.16" /
                                  f"nvme-ocp-smart-add-log_{style}_{m}.json").read_text())
                      for m in ("0", "after-64MiB"))
    assert len(from_nvme_cli_json(ocp_log_c0.PAGE, fresh)[2]) == \
        {"v1": 55, "v2": 55, "nvme-2.3": 32}[style]
    assert cross_check(ocp_log_c0.PAGE, page, fresh) == []
    assert cross_check(ocp_log_c0.PAGE, page, written) == [
        "physical_media_units_written: bytes 0, nvme-cli 67108864"]


def test_the_guid_is_compared_as_nvme_cli_prints_it():
    """nvme-cli prints a GUID as "0x%llx%llx" (ocp-print-json.c): the high and low 64 bits
    without their leading zeros. The OCP C0h GUID has none to drop; another page's GUID
    read from the JSON is named."""
    page = decode(ocp_log_c0.PAGE, raw("0"))
    doc = json.loads((QEMU10 / "nvme-ocp-smart-add-log_raw-pair_0.json").read_text())
    assert doc["Log page GUID"] == page.guid == ocp_log_c0.GUID
    doc["Log page GUID"] = ocp_log_pages.C3.guid
    assert cross_check(ocp_log_c0.PAGE, page, doc) == [
        f"log page GUID: bytes {page.guid}, nvme-cli {ocp_log_pages.C3.guid}"]
