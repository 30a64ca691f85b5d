"""Both JSON key styles of nvme-cli's OCP plugin (`nvme ocp smart-add-log -o json`), read by
pts.tools.nvme_ocp.parse_ocp_c0 from what nvme-cli really printed, not from keys renamed
here: nvme-cli 2.16's style 1 and style 2 (--output-format-version) and Debian's nvme-cli 2.3
(style 1, its older spelling), on one QEMU 10 controller at the same two moments
(tests/data/nvme-cli-2.16/README.md), and the real drives' style 1 pages (tests/data/recorded:
the FADU's and the KIOXIA CD8's, printed by an nvme-cli of 2.10 or later: "NVMe Base Errata
Version"). No public style 2 output of a real drive was found: the style 2 pages here are
QEMU's, whose counters are all 0 but the media units; so every field is 0 there, and a key
the parser does not know shows as None (not given), not as 0."""

from __future__ import annotations

import json

import pytest

from pts.tools import nvme_ocp
from tests.support.helpers import DATA, RECORDED

PROBE = DATA / "nvme-cli-2.16"      # README.md there: how and where they were printed
MOMENTS = {"0": 0, "after-64MiB": 64 << 20}     # Physical Media Units Written, bytes


def page(style: str, moment: str) -> nvme_ocp.OcpC0:
    return nvme_ocp.parse_ocp_c0((PROBE / f"nvme-ocp-smart-add-log_{style}_{moment}.json")
                                 .read_text())


@pytest.mark.parametrize("moment", MOMENTS)
def test_style_2_reads_as_style_1_of_the_same_page(moment):
    """The two styles of one nvme-cli at one moment: the same page, every field given."""
    v1, v2 = page("v1", moment), page("v2", moment)
    keys = json.loads((PROBE / f"nvme-ocp-smart-add-log_v2_{moment}.json").read_text())
    assert "uncorrectable_read_errors" in keys and "Log page version" not in keys  # style 2
    assert v2 == v1
    assert (v2.version, v2.guid) == (5, nvme_ocp.OCP_C0_GUID)
    # a version 5 page has every field the parser reads: none missing, none left unread
    missing = [name for name, value in v2.fields.items() if value is None]
    assert missing == [] and v2.not_in_version == () and v2.not_supported == ()
    assert v2.fields["physical_media_units_written"] == MOMENTS[moment]
    assert nvme_ocp.parse_ocp_smart_add_log(
        (PROBE / f"nvme-ocp-smart-add-log_v2_{moment}.json").read_text()) == MOMENTS[moment]


@pytest.mark.parametrize("moment", MOMENTS)
def test_nvme_cli_2_3_reads_as_2_16_but_for_what_it_does_not_print(moment):
    """Debian 12's nvme-cli 2.3 spells byte 130 "NVMe Errata Version" (2.16: "NVMe Base
    Errata Version") and prints no Power State Change Count: that field is not given, the
    others read as 2.16's."""
    old, new = page("nvme-2.3", moment), page("v1", moment)
    keys = json.loads((PROBE / f"nvme-ocp-smart-add-log_nvme-2.3_{moment}.json").read_text())
    assert "NVMe Errata Version" in keys and "Power State Change Count" not in keys
    assert old.fields["power_state_change_count"] is None
    assert {k: v for k, v in old.fields.items() if k != "power_state_change_count"} == \
        {k: v for k, v in new.fields.items() if k != "power_state_change_count"}
    assert old.fields["nvme_base_errata_version"] == 0          # read under its old name


def test_every_field_has_one_key_in_each_style_nvme_cli_prints():
    """Each field the parser reads is found under exactly one key of each real page (none
    read twice under two spellings, none found by accident): style 1 and 2 of 2.16 at
    version 5, and the real drives' style 1 pages, whose fields their version has."""
    pages = {f"2.16 {style}": (PROBE / f"nvme-ocp-smart-add-log_{style}_0.json").read_text()
             for style in ("v1", "v2")}
    pages |= {drive: (RECORDED / f"nvme-ocp-smart-add-log_{drive}.json").read_text()
              for drive in ("fadu-delta-u2", "kioxia-cd8")}
    for name, text in pages.items():
        keys = {nvme_ocp._key(k) for k in json.loads(text)}
        for field, v1, v2, _, _ in nvme_ocp.C0_FIELDS:
            spellings = {nvme_ocp._key(k) for k in
                         (v1, v2 or field, *nvme_ocp.OLDER_KEYS.get(field, ()))}
            assert len(spellings & keys) == 1, (name, field, spellings & keys)


def test_the_real_drives_pages_are_style_1():
    """The FADU's and the CD8's pages (tests/data/recorded) are style 1 as nvme-cli 2.10 and
    later print it: the keys of 2.16's style 1 that their page versions have."""
    style_1 = set(json.loads((PROBE / "nvme-ocp-smart-add-log_v1_0.json").read_text()))
    for drive in ("fadu-delta-u2", "kioxia-cd8"):
        keys = set(json.loads((RECORDED / f"nvme-ocp-smart-add-log_{drive}.json").read_text()))
        assert keys <= style_1, (drive, keys - style_1)
        assert "NVMe Base Errata Version" in keys
