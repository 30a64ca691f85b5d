"""Running `python -m pytest pts/ ...` as a user does, on a loop device in /dev/shm
(tests.helpers.loop_device) or an emulated SSD, and reading back what it left: the run
folder, its ledger, the PDF's text. Used by the end-to-end tests of the Throughput, Latency
and WSAT tests."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from pts.results.ledger import read_ledger
from tests.helpers import REPO, pdf_text


@dataclass
class PtsRun:
    proc: subprocess.CompletedProcess
    wall: float
    folder: Path
    records: list[dict]
    notes: list[str]
    run_json: dict

    def of_type(self, kind: str, test: str | None = None) -> list[dict]:
        return [r for r in self.records if r["type"] == kind
                and (test is None or r.get("test") == test)]

    def pdf_text(self) -> str:
        return pdf_text(self.folder / "report.pdf", layout=True)


def run_pts(device: str, reports: Path, *args: str, timeout: float = 900) -> PtsRun:
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "pts/", "-p", "no:cacheprovider", "--device", device,
         "--destructive", "--reports-dir", str(reports), *args],
        cwd=REPO, capture_output=True, text=True, timeout=timeout)
    wall = time.monotonic() - start
    print(proc.stdout[-3000:], proc.stderr[-2000:])
    found = list(reports.glob("*/*/run.json"))
    assert len(found) == 1, proc.stdout + proc.stderr
    folder = found[0].parent
    records, notes = read_ledger(folder / "ledger.jsonl")
    return PtsRun(proc, wall, folder, [r.data for r in records], notes,
                  json.loads(found[0].read_text()))
