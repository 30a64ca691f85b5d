"""Running `python -m pytest pts/ ...` as a user does, on a loop device in /dev/shm (or an
emulated SSD), and reading back what it left: the run folder, its ledger, the PDF's text.
Used by the end-to-end tests of the Throughput, Latency and WSAT tests."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from pts.results.ledger import read_ledger
from tests.conftest import REPO, detach_if_ours


@contextlib.contextmanager
def loop_device(size: int, sector: int = 512):
    """A loop device over a sparse /dev/shm file; detaches only itself."""
    backing = Path("/dev/shm") / f"pts-e2e-{uuid.uuid4().hex[:8]}.img"
    with open(backing, "wb") as fh:
        fh.truncate(size)
    try:
        dev = subprocess.run(["losetup", "--find", "--show", "--direct-io=on",
                              f"--sector-size={sector}", str(backing)], check=True,
                             capture_output=True, text=True).stdout.strip()
        try:
            yield dev
        finally:
            detach_if_ours(dev, backing)
    finally:
        backing.unlink(missing_ok=True)


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
        text = subprocess.run(["pdftotext", "-layout", str(self.folder / "report.pdf"), "-"],
                              capture_output=True, text=True, check=True).stdout
        return re.sub(r"\s+", " ", text)


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
