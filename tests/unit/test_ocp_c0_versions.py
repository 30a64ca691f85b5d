"""The first C0h log page version of each gated field (pts.tools.nvme_ocp.C0_FIELDS), as the
OCP specifications' own text gives it: the Datacenter NVMe SSD Specification 2.0 r21 (log
page version 0003h, SMART-27) defines the DSSD Specification Version (SMART-13, bytes
103:98), the NVMe Errata revision (SMART-20, byte 130), PCIe Link Retraining Count (SMART-29,
199:192) and Power State Change Count (SMART-31, 207:200); the source of each is in the
comment above C0_FIELDS. Checked on what real drives and QEMU 10 printed."""

from __future__ import annotations

import json

from pts.tools import nvme_ocp
from tests.support.helpers import DATA, RECORDED

V3 = {"errata_version": 3, "point_version": 3, "minor_version": 3, "major_version": 3,
      "nvme_base_errata_version": 3, "pcie_link_retraining_count": 3,
      "power_state_change_count": 3}


def test_every_gated_field_starts_at_the_version_that_defines_it():
    gated = {name: since for name, _, _, _, since in nvme_ocp.C0_FIELDS if since}
    assert gated == V3


def test_a_version_3_page_gives_them_and_a_version_2_page_does_not():
    """The KIOXIA CD8's version 3 page prints these as Major 2 and zeros: given (zeros are
    counts the drive reports); the FADU's version 2 page prints zeros there: not given."""
    cd8 = nvme_ocp.parse_ocp_c0((RECORDED / "nvme-ocp-smart-add-log_kioxia-cd8.json")
                                .read_text())
    fadu = nvme_ocp.parse_ocp_c0((RECORDED / "nvme-ocp-smart-add-log_fadu-delta-u2.json")
                                 .read_text())
    assert (cd8.version, fadu.version) == (3, 2)
    assert {n: cd8.fields[n] for n in V3} == {n: 2 if n == "major_version" else 0 for n in V3}
    assert set(fadu.not_in_version) == set(V3)
    assert all(fadu.fields[n] is None for n in V3)
    # one version lower, the CD8's own page no longer gives them
    doc = json.loads((RECORDED / "nvme-ocp-smart-add-log_kioxia-cd8.json").read_text())
    doc["Log page version"] = 2
    assert set(nvme_ocp.parse_ocp_c0(json.dumps(doc)).not_in_version) == set(V3)


def test_nvme_cli_2_3_names_byte_130_nvme_errata_version():
    """nvme-cli 2.3's OCP plugin prints byte 130 as "NVMe Errata Version" (QEMU 10's
    version 5 page, tests/data/qemu-10): read as the NVMe Base Errata Version."""
    page = nvme_ocp.parse_ocp_c0((DATA / "qemu-10" / "nvme-ocp-smart-add-log_after-2624MiB"
                                  ".json").read_text())
    assert page.version == 5 and page.fields["nvme_base_errata_version"] == 0
    assert "nvme_base_errata_version" not in page.not_in_version
