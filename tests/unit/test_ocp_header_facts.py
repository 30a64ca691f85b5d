"""The headers of the OCP log pages C7h, C9h and CAh read at a test's start
(pts.tools.ocp_header_facts): on QEMU 10's recorded controller (tests/support/qemu10_drive:
C9h's support read refused as recorded, tests/data/qemu-10/fdp/log-c9h_support.bin.stderr.txt;
C7h and CAh answered with the refusal QEMU 10 gives every OCP page but C0h, README there: not
recorded for these two identifiers) and on CONSTRUCTED pages built here with the product's
encoder (pts.tools.ocp_log_decode.encode), which no drive gave.
"""

from __future__ import annotations

from pts.config.ocp_log_headers import C7, C9
from pts.tools.commands import CommandResult
from pts.tools.nvme_facts import Facts
from pts.tools.ocp_header_facts import read_headers
from pts.tools.ocp_log_decode import encode
from tests.support.qemu10_drive import Drive, recorded_facts


def test_qemu_10_refuses_them_and_c9h_is_read_once(tmp_path):
    drive = Drive()
    from pts.tools import host_read
    facts = host_read.read_all("/dev/nvme0", "/dev/nvme0n1", tmp_path, "0", run=drive).values
    pages = facts["ocp_pages"]
    for name in ("C7h", "C9h", "CAh"):
        assert pages[name]["refused"] == "Invalid Field in Command (0x4002)", pages[name]
    assert pages["C7h"]["command"].endswith("--log-id=0xc7 --log-len=512 --raw-binary")
    assert sum("--log-id=0xc9" in c for c in drive.calls) == 1       # the support read only
    assert sum("--log-id=0xca" in c for c in drive.calls) == 1
    assert recorded_facts(tmp_path / "again")["ocp_pages"]["C9h"] == pages["C9h"]


class Pages:
    """commands.run answering Get Log Page C7h and CAh with constructed bytes."""

    def __init__(self, answers: dict):
        self.answers = answers

    def __call__(self, argv, *, stdout_path=None, **kw):
        data = self.answers[argv[3]]
        stdout_path.write_bytes(data)
        return CommandResult(tuple(argv), 0, "", "", 0.1)


def test_constructed_headers_are_decoded(tmp_path):
    c7 = bytearray(encode(C7, {}, 3))
    c7[460] = 1                                        # a reserved byte of TCGL-20 set
    c9 = encode(C9, {"string_log_page_size": 0x400,
                     "statistics_identifier_string_table_start": 0x6C}, 1)
    ca = bytearray(512)
    ca[0], ca[380] = 0xCA, 0x01
    (tmp_path / "log-c9h_support.bin").write_bytes(c9)
    facts = Facts()
    facts.values["logs"] = {"C9h": {"bytes": 512, "file": "log-c9h_support.bin"}}
    read_headers("/dev/nvme0", tmp_path, facts, run=Pages(
        {"--log-id=0xc7": bytes(c7), "--log-id=0xca": bytes(ca)}))
    p = facts.values["ocp_pages"]
    assert (p["C7h"]["version"], p["C7h"]["guid"]) == (3, C7.guid)
    assert p["C7h"]["reserved"] == {"reserved_1": 0, "reserved_450": 1}
    assert p["C9h"]["version"] == 1 and p["C9h"]["guid"] == C9.guid
    assert p["C9h"]["decoded"]["fields"]["statistics_identifier_string_table_start"] == 0x6C
    assert p["C9h"]["decoded"]["fields"]["string_log_page_size"] == 0x400
    assert (p["CAh"]["lid"], p["CAh"]["scope"]) == (0xCA, 0x01)
    wrong = bytearray(c9)
    wrong[20] ^= 0xFF                                  # another GUID
    (tmp_path / "log-c9h_support.bin").write_bytes(bytes(wrong))
    read_headers("/dev/nvme0", tmp_path, facts, run=Pages(
        {"--log-id=0xc7": bytes(c7), "--log-id=0xca": bytes(ca)}))
    assert "not the Telemetry String log's" in facts.values["ocp_pages"]["C9h"]["error"]
