"""smart-log device_counters of real NVMe drives for synthetic run folders: what the FADU
DELTA U.2 and the KIOXIA CD8 printed (tests/data/recorded), read through the suite's own
pts.device.media_writes with nvme-cli answering from those files (tests/qualify/test_ocp.py,
tests/report/test_ocp_page.py). Their C0h page as bytes: the printed page turned back into
the bytes the drive sent (pts.tools.ocp_log_decode.encode; nvme-cli prints every byte of a
version 2 / 3 page's fields); `bytes_read=False`: a get-log that fails, so the record is the
JSON's alone (source "nvme-cli JSON")."""

from __future__ import annotations

import copy
import json

from pts.config import ocp_log_c0
from pts.device import media_writes
from pts.tools import nvme
from pts.tools.ocp_log_decode import encode, from_nvme_cli_json
from tests.support.helpers import RECORDED, RecordedRunner, Reply

STEPS = ("test start", "after purge", "after WIPC", "after round 1", "after round 2")


def c0h_bytes(name: str, folder=RECORDED) -> bytes:
    """A recorded nvme-cli JSON C0h page as the bytes the drive sent."""
    version, _, values = from_nvme_cli_json(ocp_log_c0.PAGE,
                                            json.loads((folder / name).read_text()))
    return encode(ocp_log_c0.PAGE, values, version)


def recorded_counters(monkeypatch, tmp_path, drive: str, bytes_read: bool = True,
                      json_text: str = "") -> dict:
    """A smart-log device_counters record's counters as pts.device.health.snapshot makes
    them, nvme-cli answering from the drive's recorded outputs (no Endurance Group: QEMU's
    recorded id-ns with ENDGID 0, so the media writes come from C0h). `json_text`: what
    nvme-cli's OCP plugin prints instead of the recorded page (another layout of it)."""
    page = f"nvme-ocp-smart-add-log_{drive}.json"
    get_log = Reply(raw=c0h_bytes(page)) if bytes_read else Reply(
        rc=1, stderr="get-log: Input/output error")
    RecordedRunner({("nvme", "id-ns"): [Reply(out="../qemu-7.2/nvme-id-ns.json")],
                    ("nvme", "get-log"): [get_log],
                    ("nvme", "ocp", "smart-add-log"): [Reply(
                        stdout=json_text) if json_text else Reply(out=page)],
                    ("nvme", "ocp", "latency-monitor-log"): [Reply(
                        rc=1, err="../qemu-7.2/nvme-sanitize-log_invalid-field.stderr.txt")]}
                   ).install(monkeypatch)
    smart = nvme.parse_smart_log((RECORDED / f"nvme-smart-log_{drive}.json").read_text())
    return {"host_writes": smart.data_units_written, "page_size": nvme.DATA_UNIT_BYTES,
            **smart.as_dict(),
            **media_writes.nvme_counters("/dev/nvme9n1", tmp_path / f"{drive}.log")}


def growing(first: dict, *, nuse_after_purge: int = 0) -> dict:
    """The drive's counters at each step of a test: from its recorded reading, 10 GB more
    host writes (19,532 data units) and 11 GB more media writes a step; NUSE 0 after the
    Format, then growing."""
    out = {}
    for i, when in enumerate(STEPS):
        c = copy.deepcopy(first)
        c["data_units_written"] = c["host_writes"] = first["host_writes"] + 19_532 * i
        c["media_bytes"] = first["media_bytes"] + 11_000_000_000 * i
        page = c[media_writes.OCP_C0]
        page["fields"]["physical_media_units_written"] = c["media_bytes"]
        if when != "test start":
            page["fields"]["nuse"] = nuse_after_purge if when == "after purge" else 2_000_000 * i
        out[when] = c
    return out
