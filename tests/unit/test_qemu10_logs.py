"""The suite's NVMe parsers and media-write reading on what QEMU 10.0.2's emulated controller
printed through Debian's nvme-cli 2.3 (tests/data/qemu-10, recorded in the project's guest):
C0h in bytes, log 09h in units of 10^9 bytes that QEMU stops at 1."""

from __future__ import annotations

from pathlib import Path

from pts.device import media_writes
from pts.tools import nvme, nvme_ocp
from tests.support.helpers import DATA, RecordedRunner, Reply
from tests.support.synthetic.drive_logs import c0h_bytes

Q10 = DATA / "qemu-10"
MIB = 1 << 20


def c0(name: str) -> nvme_ocp.OcpC0:
    return nvme_ocp.parse_ocp_c0((Q10 / f"nvme-ocp-smart-add-log_{name}.json").read_text())


def media_units(name: str) -> int:
    return nvme.parse_endurance_log((Q10 / f"nvme-endurance-log_{name}.json").read_text())[1]


def test_c0h_counts_the_bytes_written_exactly():
    """Version 5 with the OCP GUID; Physical Media Units Written = the bytes written (64 MiB
    by dd + 1.5 GiB by fio, then + 1 GiB): a WAF of exactly 1 at 1-byte resolution."""
    pages = [c0(n) for n in ("0", "after-1600MiB", "after-2624MiB")]
    assert {p.version for p in pages} == {5}
    assert {p.guid for p in pages} == {nvme_ocp.OCP_C0_GUID}
    assert [p.fields["physical_media_units_written"] for p in pages] == [
        0, 1600 * MIB, 2624 * MIB]


def test_log_09h_stops_at_one_unit():
    """Media Units Written (10^9 bytes): 0 after 64 MiB, 1 after 1,600 MiB (1.68 GB) and
    still 1 after 2,624 MiB (2.75 GB), where 2 is due: QEMU 10.0 rounds the count of
    10^9 bytes up to units of 10^9 again. No WAF from it on QEMU (docs/development.md)."""
    assert [media_units(n) for n in ("after-64MiB", "after-1600MiB", "after-2624MiB")] == \
        [0, 1, 1]
    assert 2624 * MIB // nvme.ENDURANCE_UNIT_BYTES == 2


def test_one_step_reads_09h_and_c0h_and_the_refused_c3h(monkeypatch, tmp_path):
    runner = RecordedRunner({("nvme", "id-ns"): [Reply(out="nvme-id-ns.json")],
                             ("nvme", "endurance-log"): [Reply(
                                 out="nvme-endurance-log_after-1600MiB.json")],
                             ("nvme", "get-log"): [Reply(raw=c0h_bytes(
                                 "nvme-ocp-smart-add-log_after-1600MiB.json", Q10))],
                             ("nvme", "ocp", "smart-add-log"): [Reply(
                                 out="nvme-ocp-smart-add-log_after-1600MiB.json")],
                             ("nvme", "ocp"): [Reply(
                                 rc=1, err="nvme-ocp-latency-monitor-log_refused.stderr.txt")]},
                            data=Q10).install(monkeypatch)
    found = media_writes.nvme_counters("/dev/nvme0n1", Path(tmp_path / "c.log"))
    assert (found["media_bytes"], found["media_source"]) == (10**9, media_writes.ENDURANCE)
    assert found[media_writes.OCP_C0]["version"] == 5
    assert found[media_writes.OCP_C0]["source"] == "bytes"
    assert found[media_writes.OCP_C0]["cross_check"] == []
    assert found[media_writes.OCP_C0]["file"] == "ocp-logs/c0h-0000.bin"
    assert (tmp_path / "ocp-logs" / "c0h-0000.bin").stat().st_size == 512
    assert found[media_writes.OCP_C0]["fields"]["physical_media_units_written"] == 1600 * MIB
    assert found[media_writes.LATENCY_MONITOR] is None
    assert ("nvme", "ocp", "latency-monitor-log") in [c[:3] for c in runner.calls]
