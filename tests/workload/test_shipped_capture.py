"""The real capture shipped in tests/data/rwsw/ (db_bench on ext4 on a loop device; how it
was made: tests/data/rwsw/README.md) opens, characterises and gives an ATW that loads.
No device, no root: it reads the file only."""

from __future__ import annotations

import tomllib

import pytest

from pts.workload import atw
from pts.workload.atw import StreamKey
from pts.workload.capture.events import open_capture
from pts.workload.characterise import characterise
from pts.workload.derive import derive
from tests.support.helpers import DATA

SHIPPED = DATA / "rwsw" / "db_bench.parquet"


@pytest.fixture(scope="module")
def ch():
    return characterise(SHIPPED, step_s=1)


def test_every_event_the_descriptor_counts_is_in_the_file():
    cap = open_capture(SHIPPED)
    rows = sum(len(b["op"]) for b in cap.batches(("op",), 50_000))
    assert rows == cap.info.events == 151123
    assert (cap.info.source, cap.info.lost_events, cap.info.step_s) == ("tracefs", 0, 1.0)
    assert cap.info.process_filter is None and cap.info.extra["ios_by_op"]["READ"] == 150846


def test_it_characterises_to_db_benchs_streams(ch):
    """The README's card: random reads of 4 KiB and 4.5 KiB (RocksDB's data blocks read
    O_DIRECT, not aligned to 4 KiB) carry 99.9 % of the I/Os; the writes are the memtable
    flush's ~512 KiB sequential requests, WAL writeback and the journal."""
    assert ch.events == 151123 and ch.ios == 151061 and ch.flushes == 62
    assert ch.streams, "no IO streams"
    top = [s.key for s in ch.streams[:2]]
    assert top == [StreamKey("RND", "R", 4096), StreamKey("RND", "R", 4608)]
    assert sum(s.share_ios_pct for s in ch.streams[:2]) > 99.5
    assert ch.processes["db_bench"] >= 0.99 * ch.ios
    assert ch.processes.get("rocksdb:high", 0) > 0
    assert ch.lost_events == 0 and len(ch.steps) == 12


def test_the_atw_derived_from_it_loads(ch, tmp_path):
    w = derive(ch)
    text = atw.dumps(w)
    path = tmp_path / "db_bench.toml"
    path.write_text(text)
    loaded = atw.load(path)
    assert loaded.streams == w.streams and len(loaded.streams) == ch.top_n
    assert abs(sum(s.share_pct for s in loaded.streams) - 100) < 1e-6
    prov = tomllib.loads(text)["provenance"]
    assert prov["capture_sha256"] == ch.sha256 and prov["events"] == 151123
    assert {s.key for s in loaded.streams} <= {s.key for s in ch.streams}
