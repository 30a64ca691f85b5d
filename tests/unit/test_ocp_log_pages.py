"""The OCP log pages besides C0h (pts.config.ocp_log_pages: C1h, C2h, C3h, C4h, C5h) decoded
from bytes laid out here by hand from the spec's tables (byte addresses quoted beside each),
not by the module's own encoder; and each table checked for gaps and overlaps against the
page sizes the spec states, and against nvme-cli's structs (plugins/ocp/ocp-nvme.h @e117ee68,
the offsets in its comments)."""

from __future__ import annotations

import pytest

from pts.config import ocp_log_c0, ocp_log_pages
from pts.config.ocp_log_layout import STRUCT, LogPage
from pts.tools.ocp_log_decode import OcpLogError, decode

PAGES = (*ocp_log_pages.PAGES.values(), ocp_log_c0.PAGE)


def blank(page: LogPage, version: int) -> bytearray:
    """A page of `version` with nothing but its version and GUID (spec's byte addresses)."""
    out = bytearray(page.sizes[version])
    out[page.version_at:page.version_at + 2] = version.to_bytes(2, "little")
    out[page.guid_at:page.guid_at + 16] = int(page.guid, 16).to_bytes(16, "little")
    return out


def tile(spans, size, what):
    edge = 0
    for start, end, name in sorted(spans):
        assert start == edge, (what, name, start, edge)
        edge = end
    assert edge == size, (what, edge, size)


@pytest.mark.parametrize("page", ocp_log_pages.PAGES.values(), ids=lambda p: f"{p.log_id:X}h")
def test_each_version_tiles_its_page(page):
    """Every byte of each version's page is in exactly one field (reserved included), and
    the page ends where the spec says (512 or 4096 bytes); a STRUCT's entry tiles its size."""
    for version, size in page.sizes.items():
        spans = [(f.offset, f.end, f.name) for f in page.fields if version in f.versions]
        spans += [(page.version_at, page.version_at + 2, "version"),
                  (page.guid_at, page.guid_at + 16, "GUID")]
        tile(spans, size, (page.name, version))
        for f in page.fields:
            if f.kind == STRUCT:
                tile([(e.offset, e.end, e.name) for e in f.entry], f.size, f.name)


def test_offsets_agree_with_nvme_cli_structs():
    c1, c3, c4, c5 = (ocp_log_pages.PAGES[i] for i in (0xC1, 0xC3, 0xC4, 0xC5))
    at = {  # (log, field): nvme-cli's offset comment (or its struct's running offset)
        (0xC1, "device_capabilities"): 0x0C, (0xC1, "vendor_specific_command_cdw12"): 0x14,
        (0xC1, "vendor_specific_command_timeout"): 0x1C, (0xC1, "error_count"): 0x1F,
        (0xC1, "previous_error_ids"): 0x20,
        (0xC3, "active_latency_minimum_window"): 0x0C, (0xC3, "active_bucket_counter_0"): 0x20,
        (0xC3, "active_latency_timestamp"): 0x60, (0xC3, "active_measured_latency"): 0xC0,
        (0xC3, "active_latency_stamp_units"): 0xD8, (0xC3, "static_bucket_counter_0"): 0xF0,
        (0xC3, "static_latency_timestamp"): 0x130, (0xC3, "static_measured_latency"): 0x190,
        (0xC3, "static_latency_stamp_units"): 0x1A8, (0xC3, "debug_log_size"): 0x1B4,
        (0xC3, "debug_log_trigger_enable"): 0x1C0, (0xC3, "debug_log_pointer"): 0x1CC,
        (0xC3, "debug_log_stamp_units"): 0x1D0,
        (0xC4, "minimum_valid_dssd_power_state"): 14, (0xC4, "dssd_power_state_descriptors"): 16,
        (0xC5, "unsupported_requirements"): 16,
    }
    for (log_id, name), offset in at.items():
        assert ocp_log_pages.PAGES[log_id].field(name).offset == offset, (log_id, name)
    assert (c3.version_at, c3.guid_at, c1.version_at) == (0x1EE, 0x1F0, 0x1EE)
    assert (c4.version_at, c5.version_at, c5.field("unsupported_requirements").count) == \
        (4078, 4078, 253)


def test_c5h_lists_the_ids_the_drive_does_not_meet():
    """URLP-1 count at 1:0, the list from byte 16 in 16-byte zero-padded ASCII entries."""
    c5 = ocp_log_pages.C5
    raw = blank(c5, 1)
    raw[0:2] = (2).to_bytes(2, "little")
    raw[16:25] = b"NVMe-AD-5"
    raw[32:40] = b"SMART-31"
    page = decode(c5, bytes(raw))
    assert ocp_log_pages.unsupported_ids(page.fields) == ["NVMe-AD-5", "SMART-31"]
    assert (page.spec, page.fields["unsupported_count"]) == ("2.0, 2.7", 2)


def test_c3h_buckets_nest_as_the_spec_orders_them():
    """Bucket 0's read counter is bytes 47:44; the time stamps run bucket 3 first: bucket
    3's deallocate at 103:96, bucket 0's read at 191:184 (v2.7 lines 2419-2470)."""
    c3 = ocp_log_pages.C3
    raw = blank(c3, 5)
    raw[44:48] = (7).to_bytes(4, "little")
    raw[36:40] = (5).to_bytes(4, "little")             # bucket 0 deallocate
    raw[96:104] = (0x33).to_bytes(8, "little")
    raw[184:192] = (0x1234).to_bytes(8, "little")
    raw[214:216] = (9).to_bytes(2, "little")           # measured latency, bucket 0 read
    raw[6:10] = bytes([1, 2, 3, 4])                    # thresholds A-D, in 5 ms
    page = decode(c3, bytes(raw))
    assert page.fields["active_bucket_counter_0"] == {"deallocate": 5, "write": 0, "read": 7}
    assert page.fields["active_latency_timestamp"][0]["deallocate"] == 0x33
    assert page.fields["active_latency_timestamp"][3]["read"] == 0x1234
    assert page.fields["active_measured_latency"][3] == {"deallocate": 0, "write": 0,
                                                         "read": 9}
    assert [page.fields[f"active_threshold_{x}"] for x in "abcd"] == [1, 2, 3, 4]
    assert (page.spec, page.fields["debug_log_size"]) == ("2.7", bytes(12))
    # version 1 (2.0): 512 bytes, no debug log size (reserved 447:426 then)
    old = decode(c3, bytes(blank(c3, 1)))
    assert old.fields["debug_log_size"] is None and old.spec == "2.0"
    with pytest.raises(OcpLogError, match="--log-len=4096"):
        decode(c3, bytes(raw[:512]))


def test_version_gates_c1h_and_c4h():
    c1, c4 = ocp_log_pages.C1, ocp_log_pages.C4
    raw = blank(c1, 3)
    raw[31] = 4                                        # EREC-16 Error Count, 2.7
    raw[32:40] = (0xAB).to_bytes(8, "little")          # EREC-17, Error ID N-1
    new = decode(c1, bytes(raw))
    assert (new.fields["error_count"], new.fields["previous_error_ids"][0]) == (4, 0xAB)
    raw[494:496] = (2).to_bytes(2, "little")           # the same bytes as a 2.0 page
    old = decode(c1, bytes(raw))
    assert old.fields["error_count"] is None and "previous_error_ids" in old.not_given
    caps = blank(c4, 2)
    caps[144:146] = (4).to_bytes(2, "little")          # DCLP-13: full FIPS 140 validation
    caps[17] = 0x80 | 3                                # DSSD power state 1: valid, NVMe PS 3
    page = decode(c4, bytes(caps))
    assert page.fields["fips_140_validation"] == 4
    assert page.fields["dssd_power_state_descriptors"][1] == 0x83
    assert decode(c4, bytes(blank(c4, 1))).fields["fips_140_validation"] is None


def test_c2h_entries_are_nested():
    """C2h (2.0): entries of 64 bytes from byte 8; in an entry, the previous firmware at
    37:30 and the new at 45:38 (ASCII), the commit action at 47."""
    c2 = ocp_log_pages.C2
    raw = blank(c2, 1)
    raw[0], raw[4] = 0xC2, 1
    entry = 8 + 64
    raw[entry + 30:entry + 38] = b"1.0.0   "
    raw[entry + 38:entry + 46] = b"1.1.0   "
    raw[entry + 47] = 3
    page = decode(c2, bytes(raw))
    second = page.fields["entries"][1]
    assert (second["previous_firmware"], second["new_firmware"], second["commit_action"]) \
        == ("1.0.0   ", "1.1.0   ", 3)
    assert len(page.fields["entries"]) == 20 and page.fields["log_identifier"] == 0xC2


@pytest.mark.parametrize("page", PAGES, ids=lambda p: f"{p.log_id:X}h")
def test_another_logs_bytes_are_refused(page):
    """Each page's GUID is its own: bytes of another OCP log are not read as this one."""
    other = next(p for p in PAGES if p.guid != page.guid)
    raw = bytearray(max(page.sizes.values()))
    raw[page.guid_at:page.guid_at + 16] = int(other.guid, 16).to_bytes(16, "little")
    with pytest.raises(OcpLogError, match=f"GUID {other.guid}"):
        decode(page, bytes(raw))
