"""nvme-cli JSON parsing. There is no NVMe drive here; the values are those QEMU 7.2's
emulated controller returned to `nvme id-ctrl -o json` (nvme-cli 2.3), as recorded in
../shared/reference/test-targets.md §5.4 — including the space padding of sn/mn/fr."""

import json

from pts.nvme import parse_id_ctrl

RECORDED_QEMU_FIELDS = {"vid": 6966, "ssvid": 6900, "sn": "deadbeef            ",
                        "mn": "QEMU NVMe Ctrl                          ", "fr": "7.2.22  ",
                        "ver": 66560, "oacs": 266, "oncs": 349, "fna": 0, "sanicap": 0,
                        "tnvmcap": "0", "unvmcap": "0", "mdts": 7, "vwc": 7, "nn": 256}


def test_identity_fields_are_stripped():
    ident = parse_id_ctrl(json.dumps(RECORDED_QEMU_FIELDS)).identity
    assert (ident.model, ident.serial, ident.firmware) == ("QEMU NVMe Ctrl", "deadbeef",
                                                           "7.2.22")
    assert ident.source == "nvme id-ctrl"


def test_missing_fields_are_unknown_not_errors():
    ident = parse_id_ctrl(json.dumps({"vid": 1})).identity
    assert (ident.model, ident.serial, ident.firmware) == ("unknown", "unknown", "unknown")
