"""The run folder: run.json (written once) and the append-only ledger.jsonl.

Each ledger record is one JSON line, flushed and fsynced before `append` returns, so a crash
or kill -9 loses at most the record being written. Format: docs/results-format.md.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pts.results import records

SCHEMA = 1


class LedgerError(ValueError):
    """ledger.jsonl cannot be read, or is damaged before its last line."""


class LedgerWriteError(OSError):
    """A record could not be appended (e.g. no space left); the message says what to do."""


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", text.strip()) or "unknown"


def new_run_folder(reports_dir: Path, model: str, serial: str) -> Path:
    """reports/<model>_<serial>/<run-id>/, run-id = UTC timestamp (+ -N if taken)."""
    parent = Path(reports_dir) / f"{safe_name(model)}_{safe_name(serial)}"
    folder = stamped_folder(parent)
    if folder is None:
        raise RuntimeError(f"cannot create a run folder under {parent}")
    return folder


def stamped_folder(parent: Path) -> Path | None:
    """A new folder parent/<UTC timestamp>[-N] (None: 1000 of them taken this second)."""
    parent.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    for n in range(1000):
        folder = parent / (stamp if n == 0 else f"{stamp}-{n}")
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            continue
    return None


class Ledger:
    """Append-only JSON-lines file; one record per completed step."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._set_aside_torn_tail()
        # unbuffered: a write that fails (a full disk) leaves nothing queued to be written
        # later, after records that follow it; a part of the line it wrote is a torn tail
        self._fh = open(self.path, "ab", buffering=0)

    def _set_aside_torn_tail(self) -> None:
        """A run killed mid-write leaves a last line without its newline. Before appending
        (resume), move that fragment to ledger.jsonl.torn, so every line stays whole."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        if not data or data.endswith(b"\n"):
            return
        keep = data.rfind(b"\n") + 1
        with open(self.path.with_name(self.path.name + ".torn"), "ab") as fh:
            fh.write(data[keep:] + b"\n")
        with open(self.path, "r+b") as fh:
            fh.truncate(keep)
            os.fsync(fh.fileno())

    def append(self, record: records.Record) -> records.Record:
        """Write `record` (stamped with the time now) and fsync before returning."""
        record = dataclasses.replace(record, time=time.time())
        line = (json.dumps(record.to_json(), allow_nan=False) + "\n").encode("utf-8")
        end = os.lseek(self._fh.fileno(), 0, os.SEEK_END)
        try:
            done = self._fh.write(line)
            while done < len(line):             # a short write: the rest, or its error
                done += self._fh.write(line[done:])
            os.fsync(self._fh.fileno())
        except OSError as exc:
            with contextlib.suppress(OSError):  # no fragment for later records to follow
                os.ftruncate(self._fh.fileno(), end)
            raise LedgerWriteError(
                f"cannot append a {record.TYPE} record to {self.path}: {exc.strerror} (the "
                "ledger holds every record before it; free space, then --resume the "
                "run)") from exc
        return record

    def close(self) -> None:
        self._fh.close()


# Reading. The ledger is appended and fsynced record by record, so a crash can leave only the
# LAST line torn: that one is skipped and reported as a note. An unreadable line anywhere else
# means the file was damaged after it was written, and nothing should be drawn from it.

@dataclass(frozen=True)
class LedgerLine:
    line: int            # 1-based line number in ledger.jsonl, for error messages
    data: dict

    @property
    def type(self) -> str:
        return self.data["type"]

    @functools.cached_property
    def record(self) -> records.Record:
        """The typed record (pts.results.records), parsed once: the read model keeps it."""
        return records.parse(self.data)

    def where(self, path: Path) -> str:
        return f"{path}:{self.line}"


def read_ledger(path: Path) -> tuple[list[LedgerLine], list[str]]:
    """All records of `path` with their line numbers, plus notes for the reader."""
    try:
        with path.open("rb") as fh:
            raw_lines = fh.read().split(b"\n")
    except FileNotFoundError:
        return [], [f"{path.name} is missing: no test has recorded anything"]
    except OSError as exc:
        raise LedgerError(f"cannot read {path}: {exc}") from None
    numbered = [(n, raw) for n, raw in enumerate(raw_lines, 1) if raw.strip()]
    lines, notes = [], []
    for pos, (number, raw) in enumerate(numbered):
        data, problem = _parse(raw)
        if problem is None:
            lines.append(LedgerLine(number, data))
        elif pos == len(numbered) - 1:
            notes.append(f"{path.name} line {number}: torn last record skipped ({problem}); "
                         "the run was probably interrupted while writing it")
        else:
            raise LedgerError(f"{path} line {number}: corrupt ledger record ({problem})")
    return lines, notes


def _parse(raw: bytes) -> tuple[dict | None, str | None]:
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, f"not valid JSON: {exc}"
    if not isinstance(data, dict):
        return None, "not a JSON object"
    if not isinstance(data.get("type"), str):
        return None, "no \"type\" field"
    return data, None


def read_records(path: Path) -> tuple[list[records.Record], list[str]]:
    """The typed records of `path` (unknown types as records.Unknown), plus notes."""
    found, notes = read_ledger(path)
    return [r.record for r in found], notes
