"""The capture file: one row per block I/O request, as the device was handed it.

Columns (`SCHEMA`): when it was issued and completed (ns since the capture's start), its
start sector (512-byte units, on the whole device), its size, its operation (`Op`), the task
that issued it (pid, comm), its completion error, and for buffered writeback the task that
dirtied the pages it writes (dirtier_pid, dirtier_comm: pts/workload/capture/writeback.py). Never
any data.

Why Parquet (pyarrow): a capture of an hour at 100 k IOPS is 360 M rows. Parquet is a
well-kept open columnar format that numpy-side tools (pyarrow, pandas, DuckDB, Spark) read
without us; it is written in row groups, so memory stays bounded while writing (one group of
`ROW_GROUP` rows buffered) and reading (`CaptureFile.batches`); its dictionary encoding keeps
a repeated `comm` at a few bits a row, and its footer carries the capture's descriptor
(`CaptureInfo`) as key-value metadata, written last, when the lost-event count is known.
The file is written under a temporary name and renamed when complete: a capture that fails
or is killed leaves no file that looks whole.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

FORMAT = "snia-pts-capture"
FORMAT_VERSION = 2
# version 1 had no dirtier columns: read with them empty (0, "")
READ_VERSIONS = {1: ("dirtier_pid", "dirtier_comm"), 2: ()}
META_KEY = b"snia-pts.capture"
ROW_GROUP = 1 << 20          # rows buffered before a row group is written (~30 MiB)
NO_TIME = -1                 # complete_ns of an I/O whose completion was not seen


class Op(IntEnum):
    """What a request does (the first letter of the kernel's rwbs: R, W, F, D; E, N, ...)."""
    READ = 0
    WRITE = 1
    FLUSH = 2
    DISCARD = 3
    OTHER = 4       # write-zeroes, secure erase, ... (counted, never a stream)


SCHEMA = pa.schema([
    ("issue_ns", pa.int64()),        # ns since CaptureInfo.started_unix
    ("complete_ns", pa.int64()),     # ns since start; NO_TIME when not seen
    ("sector", pa.int64()),          # start, 512-byte sectors, whole device
    ("bytes", pa.int64()),           # transfer size
    ("op", pa.uint8()),              # Op
    ("pid", pa.int32()),             # issuing task (0: unknown, e.g. an import without it)
    ("comm", pa.dictionary(pa.int32(), pa.string())),   # its name
    ("error", pa.int16()),           # completion error (0: none)
    ("dirtier_pid", pa.int32()),     # writeback: the task that dirtied its pages (0: none)
    ("dirtier_comm", pa.dictionary(pa.int32(), pa.string())),   # its name ("": none)
])
DEFAULTS = {"dirtier_pid": 0, "dirtier_comm": ""}   # for sources without them (imports)
COLUMNS = tuple(SCHEMA.names)


class CaptureError(ValueError):
    """A capture file (or capture input) is missing, truncated, corrupt or not a capture;
    the message names the file and what is wrong."""


@dataclass(frozen=True)
class CaptureInfo:
    """The capture's descriptor (stored in the file's footer)."""
    source: str                      # "tracefs", "blkparse", "fio-iolog-v2", "fio-iolog-v3"
    device: str                      # e.g. /dev/nvme0n1, ssh://host/dev/sdb, or the import's file
    started_unix: float              # Unix time of issue_ns == 0
    seconds: float                   # how long it recorded
    host: str = ""
    dev_t: str = ""                  # "major:minor"
    model: str = ""
    logical_sector: int = 512
    capacity_bytes: int | None = None   # the device's size (footprint: share of LBAs touched)
    process_filter: str | None = None   # --process NAME: only that application's I/O kept
    events: int = 0                  # rows in the file
    lost_events: int | None = None   # tracing buffer overruns; None: the source cannot tell
    lost_by_step: tuple[int, ...] = ()   # per --step of `step_s`, where known
    step_s: float | None = None      # the step the capture was taken with (a reading)
    kernel: str = ""
    tool: str = ""                   # what recorded it (snia-pts version, blkparse, fio ...)
    notes: tuple[str, ...] = ()      # what the source cannot give (e.g. no completion times)
    extra: dict = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "version": FORMAT_VERSION}
                          | dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str, where: Path) -> CaptureInfo:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise CaptureError(f"{where}: the capture descriptor is not valid JSON ({exc})") \
                from None
        if data.pop("format", None) != FORMAT:
            raise CaptureError(f"{where}: not a snia-pts capture (no {FORMAT} descriptor)")
        version = data.pop("version", None)
        if version not in READ_VERSIONS:
            raise CaptureError(f"{where}: capture format version {version}; this snia-pts "
                               f"reads versions {sorted(READ_VERSIONS)}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise CaptureError(f"{where}: unknown capture descriptor keys {unknown}")
        for key in ("lost_by_step", "notes"):
            if key in data:
                data[key] = tuple(data[key])
        try:
            return cls(**data)
        except TypeError as exc:
            raise CaptureError(f"{where}: capture descriptor incomplete ({exc})") from None


class CaptureWriter:
    """Appends columns to a capture file in row groups; `close(info)` writes the footer and
    renames the file into place. Use as a context manager: an exception removes the
    partial file, so nothing that looks like a capture is left."""

    def __init__(self, path: Path, row_group: int = ROW_GROUP):
        self.path = Path(path)
        self.tmp = self.path.with_name(f".{self.path.name}.part-{os.getpid()}")
        self.row_group = row_group
        self.rows = 0
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self._writer = pq.ParquetWriter(self.tmp, SCHEMA, compression="zstd")

    def append(self, columns: dict[str, np.ndarray | list]) -> None:
        """One batch: every column of SCHEMA, equal lengths (comm: a list of str)."""
        n = len(columns.get("issue_ns", ()))
        columns = {name: [value] * n for name, value in DEFAULTS.items()} | dict(columns)
        missing = set(COLUMNS) - set(columns)
        if missing:
            raise ValueError(f"capture batch lacks columns {sorted(missing)}")
        batch = pa.RecordBatch.from_arrays(
            [pa.array(columns[name], type=SCHEMA.field(name).type) for name in COLUMNS],
            schema=SCHEMA)
        if not batch.num_rows:
            return
        self._pending.append(batch)
        self._pending_rows += batch.num_rows
        self.rows += batch.num_rows
        if self._pending_rows >= self.row_group:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            self._writer.write_table(pa.Table.from_batches(self._pending, SCHEMA),
                                     row_group_size=self.row_group)
            self._pending, self._pending_rows = [], 0

    def close(self, info: CaptureInfo) -> Path:
        self._flush()
        self._writer.add_key_value_metadata({META_KEY: info.to_json().encode()})
        self._writer.close()
        os.replace(self.tmp, self.path)
        return self.path

    def abort(self) -> None:
        try:
            self._writer.close()
        finally:
            self.tmp.unlink(missing_ok=True)

    def __enter__(self) -> CaptureWriter:
        return self

    def __exit__(self, kind, exc, tb) -> None:
        if kind is not None and self.tmp.exists():
            self.abort()


@dataclass(frozen=True)
class CaptureFile:
    """A capture file opened for reading: its descriptor and its rows, batch by batch."""
    path: Path
    info: CaptureInfo
    rows: int
    absent: tuple[str, ...] = ()     # columns an older version lacks (read as DEFAULTS)

    def batches(self, columns: tuple[str, ...] = COLUMNS, batch_rows: int = ROW_GROUP,
                comm_codes: bool = False) -> Iterator[dict[str, np.ndarray]]:
        """The rows in file order as numpy columns (comm as an object array of str),
        at most `batch_rows` at a time: memory stays flat whatever the capture's size.
        `comm_codes`: comm as int32 codes into the list `out["comm_names"]` (the batch's
        dictionary) instead; building a Python str per row costs more than the rest of a
        characterisation (benchmarks/characterise.py)."""
        try:
            # no pre-buffering, one thread: pyarrow otherwise holds a whole row group's
            # column chunks at once (read peak 305 -> 165 MiB at 1 M-row groups, measured)
            reader = pq.ParquetFile(self.path, pre_buffer=False)
            stored = [c for c in columns if c not in self.absent]
            for batch in reader.iter_batches(batch_size=batch_rows, columns=stored,
                                             use_threads=False):
                out = {}
                for name in columns:
                    if name in self.absent:
                        out[name] = np.full(batch.num_rows, DEFAULTS[name],
                                            dtype=object if name == "dirtier_comm" else np.int32)
                        continue
                    col = batch.column(name)
                    if name == "comm" and comm_codes:
                        col = col if pa.types.is_dictionary(col.type) \
                            else col.dictionary_encode()
                        out["comm"] = col.indices.fill_null(0).to_numpy(zero_copy_only=False)
                        out["comm_names"] = col.dictionary.to_pylist() or [""]
                    elif name == "comm":
                        out[name] = np.asarray(col.to_pylist(), dtype=object)
                    else:
                        out[name] = col.to_numpy(zero_copy_only=False)
                yield out
        except (OSError, pa.ArrowException) as exc:
            raise CaptureError(f"{self.path}: the capture file is truncated or corrupt "
                               f"({exc})") from None


def open_capture(path: Path) -> CaptureFile:
    """Open a capture file; CaptureError names the file and the fault (missing, truncated,
    corrupt, not a capture, another format version, missing columns)."""
    path = Path(path)
    if not path.is_file():
        raise CaptureError(f"{path}: no such capture file (make one with "
                           "`python -m pts capture DEVICE --seconds N -o FILE`)")
    try:
        meta = pq.read_metadata(path)
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowException) as exc:
        raise CaptureError(f"{path}: not a readable capture file: truncated or corrupt "
                           f"({exc})") from None
    text = (meta.metadata or {}).get(META_KEY)
    if text is None:
        raise CaptureError(f"{path}: a Parquet file, but not a snia-pts capture (no "
                           "capture descriptor in its footer)")
    info = CaptureInfo.from_json(text.decode("utf-8", errors="replace"), path)
    version = json.loads(text).get("version")
    absent = tuple(n for n in READ_VERSIONS[version] if n not in schema.names)
    missing = [n for n in COLUMNS if n not in schema.names and n not in absent]
    if missing:
        raise CaptureError(f"{path}: capture file lacks columns {missing}")
    if info.events != meta.num_rows:
        raise CaptureError(f"{path}: the descriptor counts {info.events} events but the file "
                           f"holds {meta.num_rows}: the file is corrupt")
    return CaptureFile(path, info, meta.num_rows, absent)
