"""The capture file's refusals (pts.workload.capture.events.open_capture and CaptureFile.batches),
each reached by a file that is whole but for that one fault, so the test meets exactly that
refusal and names it: a foreign descriptor, another (a future) format version, a descriptor
key this version does not know, a column missing, an event count that does not match the
rows, and corruption met mid-file, after rows were already read (a cut file fails earlier,
at the footer: test_characterise's corrupt capture)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pts.workload import characterise
from pts.workload.capture.events import (
    COLUMNS,
    FORMAT_VERSION,
    META_KEY,
    SCHEMA,
    CaptureError,
    CaptureInfo,
    CaptureWriter,
    open_capture,
)

ROWS = 3


def columns(n: int = ROWS, start: int = 0) -> dict:
    """n reads of 4 KiB by fio, 1 ms apart, each completed 100 us later."""
    issue = (np.arange(n, dtype=np.int64) + start) * 1_000_000
    return {"issue_ns": issue, "complete_ns": issue + 100_000,
            "sector": np.arange(n, dtype=np.int64) * 8, "bytes": np.full(n, 4096),
            "op": np.zeros(n, dtype=np.uint8), "pid": np.full(n, 42, dtype=np.int32),
            "comm": ["fio"] * n, "error": np.zeros(n, dtype=np.int16),
            "dirtier_pid": np.zeros(n, dtype=np.int32), "dirtier_comm": [""] * n}


def descriptor(**changes) -> dict:
    """A whole capture's descriptor as stored (format, version and CaptureInfo), changed."""
    info = CaptureInfo(source="tracefs", device="/dev/x", started_unix=1.7e9, seconds=1.0,
                       events=ROWS, lost_events=0)
    return json.loads(info.to_json()) | changes


def write(path, meta: dict, drop: tuple[str, ...] = ()):
    """A Parquet file of ROWS rows (the columns of `drop` left out) whose footer holds
    `meta` as the capture descriptor: everything else as the capture writes it."""
    table = pa.Table.from_batches([pa.RecordBatch.from_arrays(
        [pa.array(columns()[n], type=SCHEMA.field(n).type) for n in COLUMNS], schema=SCHEMA)])
    table = table.drop_columns(list(drop))
    pq.write_table(table.replace_schema_metadata({META_KEY: json.dumps(meta).encode()}), path)
    return path


def test_a_whole_file_opens(tmp_path):
    """The baseline every refusal below departs from by one fault."""
    cap = open_capture(write(tmp_path / "ok.parquet", descriptor()))
    assert cap.rows == ROWS and cap.info.events == ROWS and cap.info.lost_events == 0
    assert list(next(cap.batches())["issue_ns"]) == [0, 1_000_000, 2_000_000]


def test_a_foreign_descriptor_is_refused(tmp_path):
    path = write(tmp_path / "foreign.parquet", descriptor(format="other-tool-capture"))
    with pytest.raises(CaptureError) as err:
        open_capture(path)
    assert str(err.value) == (f"{path}: not a snia-pts capture (no snia-pts-capture "
                              "descriptor)")


def test_a_future_format_version_is_refused(tmp_path):
    path = write(tmp_path / "future.parquet", descriptor(version=FORMAT_VERSION + 1))
    with pytest.raises(CaptureError) as err:
        open_capture(path)
    assert str(err.value) == (f"{path}: capture format version {FORMAT_VERSION + 1}; this "
                              f"snia-pts reads versions [1, {FORMAT_VERSION}]")


def test_a_version_1_file_reads_with_the_dirtier_columns_empty(tmp_path):
    """Version 1 (before writeback attribution) had no dirtier columns: read as none."""
    path = write(tmp_path / "v1.parquet", descriptor(version=1),
                 drop=("dirtier_pid", "dirtier_comm"))
    cap = open_capture(path)
    assert cap.absent == ("dirtier_pid", "dirtier_comm")
    got = next(cap.batches())
    assert got["dirtier_pid"].tolist() == [0] * ROWS and got["dirtier_comm"].tolist() == \
        [""] * ROWS and got["comm"].tolist() == ["fio"] * ROWS
    # the same columns missing from a version 2 file: refused
    with pytest.raises(CaptureError, match="lacks columns"):
        open_capture(write(tmp_path / "v2.parquet", descriptor(),
                           drop=("dirtier_pid", "dirtier_comm")))


def test_an_unknown_descriptor_key_is_refused_naming_it(tmp_path):
    path = write(tmp_path / "newer.parquet", descriptor(queue_model="mq-deadline"))
    with pytest.raises(CaptureError) as err:
        open_capture(path)
    assert str(err.value) == f"{path}: unknown capture descriptor keys ['queue_model']"


def test_a_missing_column_is_refused_naming_it(tmp_path):
    path = write(tmp_path / "nopid.parquet", descriptor(), drop=("pid",))
    with pytest.raises(CaptureError) as err:
        open_capture(path)
    assert str(err.value) == f"{path}: capture file lacks columns ['pid']"


@pytest.mark.parametrize("counted", [ROWS + 2, ROWS - 1])
def test_an_event_count_not_matching_the_rows_is_refused(tmp_path, counted):
    path = write(tmp_path / "count.parquet", descriptor(events=counted))
    with pytest.raises(CaptureError) as err:
        open_capture(path)
    assert str(err.value) == (f"{path}: the descriptor counts {counted} events but the file "
                              f"holds {ROWS}: the file is corrupt")


def test_a_descriptor_missing_a_key_is_refused(tmp_path):
    meta = descriptor()
    del meta["device"]
    path = write(tmp_path / "nodevice.parquet", meta)
    with pytest.raises(CaptureError, match=r"capture descriptor incomplete \(.*'device'"):
        open_capture(path)


def test_a_parquet_file_without_a_descriptor_is_refused(tmp_path):
    path = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"issue_ns": [1, 2]}), path)
    with pytest.raises(CaptureError, match="a Parquet file, but not a snia-pts capture"):
        open_capture(path)


GROUP, GROUPS = 1000, 4


@pytest.fixture
def corrupt_mid_file(tmp_path):
    """A capture of GROUPS row groups whose footer and first groups are whole and whose third
    group's `sector` column chunk is overwritten with noise (a bad block, a torn copy): the
    file opens (the footer is read first) and the fault is met only when that group is."""
    path = tmp_path / "mid.parquet"
    rng = np.random.default_rng(7)
    with CaptureWriter(path, row_group=GROUP) as w:
        for g in range(GROUPS):
            cols = columns(GROUP, start=g * GROUP)
            cols["sector"] = rng.integers(0, 1 << 30, GROUP)    # incompressible: a real chunk
            w.append(cols)
        w.close(CaptureInfo(source="tracefs", device="/dev/x", started_unix=1.7e9,
                            seconds=4.0, events=GROUP * GROUPS, lost_events=0))
    chunk = pq.read_metadata(path).row_group(2).column(COLUMNS.index("sector"))
    data = bytearray(path.read_bytes())
    at = chunk.data_page_offset
    data[at:at + chunk.total_compressed_size] = rng.integers(
        0, 256, chunk.total_compressed_size, dtype=np.uint8).tobytes()
    path.write_bytes(bytes(data))
    return path


def test_corruption_met_mid_file_is_refused_after_the_whole_groups(corrupt_mid_file):
    cap = open_capture(corrupt_mid_file)              # the footer is whole: it opens
    assert cap.rows == GROUP * GROUPS
    read = []
    with pytest.raises(CaptureError) as err:
        for batch in cap.batches(batch_rows=GROUP):
            read.append(len(batch["sector"]))
    assert read == [GROUP, GROUP]                     # met at the third group, not before
    assert str(err.value).startswith(
        f"{corrupt_mid_file}: the capture file is truncated or corrupt (")


def test_a_characterisation_stops_on_corruption_met_mid_file(corrupt_mid_file):
    """What a user meets: `pts workload characterise` gives no figures from a part of the
    file; the error names the file and says what is wrong."""
    with pytest.raises(CaptureError, match="the capture file is truncated or corrupt"):
        characterise.characterise(corrupt_mid_file, step_s=1.0, batch_rows=GROUP)
