"""The OCP C0h log decoded from its bytes (pts.tools.ocp_log_decode, the table in
pts.config.ocp_log_c0) against what nvme-cli printed: every recorded C0h page (real drives:
tests/data/recorded, nvme-cli >= 2.10, style 1; QEMU 10's: tests/data/qemu-10, Debian's
nvme-cli 2.3; tests/data/nvme-cli-2.16: 2.16's two key styles and 2.3 on one controller) is
turned into the bytes the drive sent (encode) and read back: each field nvme-cli printed
equals the decoded one, and what the page's version does not carry is not given.

The bytes here are constructed from recorded JSON, not read from a drive: nvme-cli read the
drive's bytes and printed them; encode puts each printed value back at the table's offset.
"""

from __future__ import annotations

import json

import pytest

from pts.config import ocp_log_c0
from pts.config.ocp_log_layout import RESERVED, UINT
from pts.tools import nvme_ocp
from pts.tools.ocp_log_decode import (
    OcpLogError,
    decode,
    encode,
    from_nvme_cli_json,
    json_key,
)
from tests.support.helpers import DATA, RECORDED

C0 = ocp_log_c0.PAGE
PAGES = {
    "fadu-delta-u2 (v2)": RECORDED / "nvme-ocp-smart-add-log_fadu-delta-u2.json",
    "kioxia-cd8 (v3)": RECORDED / "nvme-ocp-smart-add-log_kioxia-cd8.json",
    **{f"qemu-10 {m} (2.3)": DATA / "qemu-10" / f"nvme-ocp-smart-add-log_{m}.json"
       for m in ("0", "after-1600MiB", "after-2624MiB")},
    **{f"2.16 {s} {m}": DATA / "nvme-cli-2.16" / f"nvme-ocp-smart-add-log_{s}_{m}.json"
       for s in ("v1", "v2", "nvme-2.3") for m in ("0", "after-64MiB")},
}


def bytes_of(path):
    """(the nvme-cli JSON, the values it printed, the page's bytes)."""
    doc = json.loads(path.read_text())
    version, guid, values = from_nvme_cli_json(C0, doc)
    assert guid == ocp_log_c0.GUID
    return doc, values, encode(C0, values, version)


@pytest.mark.parametrize("name", PAGES)
def test_every_printed_field_decodes_to_what_nvme_cli_printed(name):
    doc, values, raw = bytes_of(PAGES[name])
    assert len(raw) == 512
    whole = decode(C0, raw, every_field=True)
    assert (whole.version, whole.guid) == (doc.get("Log page version",
                                                   doc.get("log_page_version")), C0.guid)
    assert values, name
    for field, printed in values.items():
        assert whole.fields[field] == printed, (name, field)
    # and every key nvme-cli printed is a field of the table (none left undecoded)
    known = {json_key(f, doc) for f in C0.fields} - {None}
    assert set(doc) - known == {"Log page version", "Log page GUID", "log_page_version",
                                "log_page_guid"} & set(doc)


def test_real_pages_read_only_their_versions_fields():
    """The FADU's page is version 2 (Cloud SSD 1.0), the CD8's version 3 (OCP 2.0): nvme-cli
    printed the DSSD version, errata and power state fields as 0 on both, and the CD8's
    Major Version 2; from the bytes, the version 2 page does not give them, the version 3
    page does, and neither gives a version 4-6 field."""
    _, _, fadu = bytes_of(PAGES["fadu-delta-u2 (v2)"])
    _, _, cd8 = bytes_of(PAGES["kioxia-cd8 (v3)"])
    v2, v3 = decode(C0, fadu), decode(C0, cd8)
    assert (v2.spec, v3.spec) == ("Cloud SSD 1.0", "2.0")
    assert v2.fields["major_version"] is None and "power_state_change_count" in v2.not_given
    assert v3.fields["major_version"] == 2 and v3.fields["power_state_change_count"] == 0
    assert v2.fields["physical_media_units_written"] == 1011179618304
    assert v3.fields["physical_media_units_written"] == 1359892586692608
    later = [f.name for f in C0.fields if f.kind != RESERVED and 3 not in f.versions]
    assert "form_factor" in later and "lowest_permitted_firmware_revision" in later
    assert all(v3.fields[n] is None for n in later) and set(later) <= set(v3.not_given)
    # all ones is the spec's "not supported": named, its value kept as the drive gave it
    assert "bad_system_nand_blocks_raw" in v3.all_ones
    assert v3.fields["bad_system_nand_blocks_raw"] == (1 << 48) - 1


def test_a_field_nvme_cli_did_not_print_is_read_from_the_bytes():
    """Debian's nvme-cli 2.3 prints no Power State Change Count (SMART-31) for QEMU's version
    5 page; the bytes carry it (bytes 207:200), so the decoder gives it, not "missing"."""
    doc, _, raw = bytes_of(PAGES["2.16 nvme-2.3 after-64MiB"])
    assert json_key(ocp_log_c0.PAGE.field("power_state_change_count"), doc) is None
    page = decode(C0, raw)
    assert page.fields["power_state_change_count"] == 0
    assert "power_state_change_count" not in page.not_given


@pytest.mark.parametrize("version", ocp_log_c0.PAGE.versions)
def test_the_table_covers_each_version_without_overlap(version):
    """No two fields of a version share a byte; for the versions whose text was read (3:
    v2.0, 6: v2.7) the fields and reserved spans tile bytes 0-493 exactly (494-511: version
    and GUID): an offset or size typed wrong shows as a gap or an overlap. (Versions 2, 4, 5:
    no text, so their unlisted bytes are not known to be reserved.)"""
    spans = [(f.offset, f.end, f.name) for f in C0.fields if version in f.versions]
    if version == 3:
        spans += [(f.offset, f.end, f.name) for f in ocp_log_c0.RESERVED_2_0]
    spans.sort()
    edge = 0
    for start, end, name in spans:
        assert start >= edge, (version, name, start, edge)
        if version in (3, 6):
            assert start == edge, (version, name, start, edge)
        edge = end
    assert edge <= C0.version_at
    assert edge == C0.version_at or version not in (3, 6)


def test_each_field_reads_its_own_bytes():
    """A page with a different value in every field reads back each one: no field reads
    another's bytes; the spec's offsets spot-checked."""
    values = {}
    for n, f in enumerate(x for x in C0.fields if x.kind != RESERVED):
        values[f.name] = {UINT: (n + 1) * 0x0101 % (1 << 8 * f.size),
                          "ascii": f"r{n}", "uuid": f"{n:08x}-0000-4000-8000-000000000000"
                          }[f.kind]
    raw = encode(C0, values, 6)
    assert decode(C0, raw).fields == values
    # SMART-48 Lifetime Power Consumed, bytes 269:264 (v2.7 line 1681)
    assert int.from_bytes(raw[264:270], "little") == values["lifetime_power_consumed"]
    label = values["dssd_firmware_revision"].encode()    # SMART-49, bytes 277:270
    assert raw[270:270 + len(label)] == label and raw[270 + len(label):278] == bytes(
        8 - len(label))


def test_agrees_with_the_json_parser_the_verdicts_use_today():
    """pts.tools.nvme_ocp.parse_ocp_c0 (nvme-cli's JSON) and the decoder (the bytes) give
    the same value for each field both know, on both real drives."""
    for name in ("fadu-delta-u2 (v2)", "kioxia-cd8 (v3)"):
        path = PAGES[name]
        old = nvme_ocp.parse_ocp_c0(path.read_text())
        new = decode(C0, bytes_of(path)[2])
        for field, value in old.fields.items():
            if field in old.not_supported:
                assert field in new.all_ones
            else:
                assert new.fields[field] == value, (name, field)


def test_bad_bytes_are_refused_with_the_reason():
    good = encode(C0, {}, 6)
    with pytest.raises(OcpLogError, match="too short"):
        decode(C0, good[:300])
    with pytest.raises(OcpLogError, match="GUID 0x0+,"):
        decode(C0, good[:496] + bytes(16))
    with pytest.raises(OcpLogError, match="version 1, older"):
        decode(C0, encode(C0, {}, 1))
    newer = decode(C0, encode(C0, {"form_factor": 3}, 7))
    assert (newer.version, newer.read_as, newer.newer, newer.fields["form_factor"]) == \
        (7, 6, True, 3)


def test_every_requirement_id_of_both_texts_is_in_the_table():
    """v2.7's C0h IDs are SMART-1..52 (27, 28: version and GUID), v2.0's SMART-1..31: each
    one names a field or a reserved span of the table, under that spec version."""
    ids = {s: {dict(f.ids).get(s) for f in (*C0.fields, *ocp_log_c0.RESERVED_2_0)}
           for s in ("2.0", "2.7")}
    page_ids = {"SMART-27", "SMART-28"}         # C0.version_at, C0.guid_at
    assert ids["2.7"] - {None} | page_ids == {f"SMART-{n}" for n in range(1, 53)}
    assert ids["2.0"] - {None} | page_ids == {f"SMART-{n}" for n in range(1, 32)}
    assert (ocp_log_c0.VERSION_ID, ocp_log_c0.GUID_ID) == (
        {"2.0": "SMART-27", "2.7": "SMART-27"}, {"2.0": "SMART-28", "2.7": "SMART-28"})
    # what v2.0 reserves under SMART-30 and -26, v2.7 gives to fields
    assert C0.field("proactive_bad_die_retirement").req_id("2.7") == "SMART-30"
    assert C0.field("proactive_bad_die_retirement").req_id("2.0") is None
