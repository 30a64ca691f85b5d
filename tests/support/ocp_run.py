"""A run folder that recorded the drive's host facts: the nvme_facts record QEMU 10's
controller gave at test start (tests/data/qemu-10/fdp, read by the product's own reader through
tests/support/qemu10_drive), appended to its ledger, so that pts.stored.ocp_every_id judges
the IDs a host rule judges (PASS, FAIL, NOT APPLICABLE) beside the table's and the classes'."""

from __future__ import annotations

import json
from pathlib import Path

from pts.tools import nvme_facts
from tests.support.qemu10_drive import recorded_facts


def add_host_facts(run_folder: Path, work: Path) -> None:
    """Append the recorded controller's facts (`work`: a folder for the reader's files)."""
    work.mkdir(parents=True, exist_ok=True)
    facts = nvme_facts.json_safe(recorded_facts(work))
    with (run_folder / "ledger.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "nvme_facts", "time": 1.8e9, "test": None,
                             "moment": "test start", "files": {}, "refused": {},
                             "facts": facts}) + "\n")
