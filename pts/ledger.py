"""The run folder: run.json (written once) and the append-only ledger.jsonl.

Each ledger record is one JSON line, flushed and fsynced before `append` returns, so a crash
or kill -9 loses at most the record being written. Format: docs/results-format.md.
"""

from __future__ import annotations

import json
import os
import re
import time
from datetime import UTC, datetime
from pathlib import Path

SCHEMA = 1


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", text.strip()) or "unknown"


def write_json_atomic(path: Path, data: dict) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, sort_keys=False)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def new_run_folder(reports_dir: Path, model: str, serial: str) -> Path:
    """reports/<model>_<serial>/<run-id>/, run-id = UTC timestamp (+ -N if taken)."""
    parent = Path(reports_dir) / f"{safe_name(model)}_{safe_name(serial)}"
    parent.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    for n in range(1000):
        folder = parent / (stamp if n == 0 else f"{stamp}-{n}")
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            continue
    raise RuntimeError(f"cannot create a run folder under {parent}")


class Ledger:
    """Append-only JSON-lines file; one record per completed step."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._fh = open(self.path, "a", encoding="utf-8")

    def append(self, record_type: str, **fields) -> dict:
        record = {"type": record_type, "time": time.time(), **fields}
        self._fh.write(json.dumps(record, allow_nan=False) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())
        return record

    def close(self) -> None:
        self._fh.close()


def read_ledger(path: Path) -> tuple[list[dict], str | None]:
    """All records, and a note if the last line was torn (e.g. killed mid-write)."""
    lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    records, note = [], None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            if n == len(lines):
                note = f"{path}: last line {n} is incomplete (run interrupted) and was ignored"
            else:
                raise ValueError(f"{path}: line {n} is not valid JSON") from None
    return records, note
