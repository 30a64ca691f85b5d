"""`python -m pts capture --import FILE`: blkparse text and fio iologs v2/v3 into the capture
file (samples: tests/data/capture/README.md), and bad input refused naming file and line."""

from __future__ import annotations

import numpy as np
import pytest

from pts.cli import main
from pts.workload.capture import imports
from pts.workload.capture.events import NO_TIME, CaptureError, Op, open_capture
from tests.support.helpers import DATA

SAMPLES = DATA / "capture"


def rows(path):
    cap = open_capture(path)
    cols = next(cap.batches())
    return cap.info, cols


def test_blkparse_default_output_issue_is_d_complete_is_c(tmp_path):
    out = tmp_path / "cap.parquet"
    imports.import_file(SAMPLES / "blkparse.txt", out)
    info, c = rows(out)
    assert info.source == "blkparse" and info.dev_t == "8:0" and info.events == 6
    assert info.lost_events is None and any("lost events unknown" in n for n in info.notes)
    # D events, in order: the merged write (two Q of 8 -> one D of 16), a read, a read
    # completed with -5, an empty flush (FN), a discard, a write never completed
    assert list(c["op"]) == [Op.WRITE, Op.READ, Op.READ, Op.FLUSH, Op.DISCARD, Op.WRITE]
    assert list(c["sector"]) == [223490, 1048576, 2097152, 0, 4096, 3145728]
    assert list(c["bytes"]) == [16 * 512, 8 * 512, 256 * 512, 0, 2048 * 512, 8 * 512]
    assert list(c["issue_ns"]) == [11_400, 122_806, 1_002_500, 2_001_000, 3_001_000, 4_001_000]
    assert list(c["complete_ns"]) == [512_761, 290_117, 1_804_000, 2_101_000, 3_501_000,
                                      NO_TIME]
    assert list(c["error"]) == [0, 0, -5, 0, 0, 0]
    assert list(c["comm"]) == ["kjournald", "postgres", "postgres", "kworker/1:1H", "fstrim",
                               "postgres"]
    assert list(c["pid"]) == [697, 1204, 1204, 233, 1310, 1204]


def test_blkparse_without_d_events_uses_q_and_says_so(tmp_path):
    src = tmp_path / "q.txt"
    src.write_text("  8,0  0  1  0.000001000  55  Q   R 100 + 8 [app]\n"
                   "  8,0  0  2  0.000002000  55  Q   R 200 + 8 [app]\n"
                   "  8,0  0  3  0.000009000   0  C   R 100 + 8 [0]\n")
    info = imports.import_file(src, tmp_path / "cap.parquet")
    _, c = rows(tmp_path / "cap.parquet")
    assert list(c["sector"]) == [100, 200] and list(c["complete_ns"]) == [9000, NO_TIME]
    assert any("Q (queued" in n for n in info.notes)


def test_fio_iolog_v3_timestamps_are_microseconds(tmp_path):
    info = imports.import_file(SAMPLES / "fio-v3.iolog", tmp_path / "cap.parquet")
    _, c = rows(tmp_path / "cap.parquet")
    lines = [ln.split() for ln in (SAMPLES / "fio-v3.iolog").read_text().splitlines()[1:]]
    io = [f for f in lines if f[2] in ("read", "write", "sync")]
    assert info.source == "fio-iolog-v3" and info.events == len(io) == 67
    assert list(c["issue_ns"]) == [int(f[0]) * 1000 for f in io]
    assert info.seconds == pytest.approx(int(lines[-1][0]) / 1e6)
    assert (c["complete_ns"] == NO_TIME).all()
    assert [int(o) for o in c["op"]].count(Op.READ) == 43
    assert [int(o) for o in c["op"]].count(Op.FLUSH) == 3
    reads = c["op"] == Op.READ
    assert list(c["sector"][reads] * 512) == [int(f[3]) for f in io if f[2] == "read"]
    assert set(c["bytes"][reads]) == {4096}


def test_fio_iolog_v2_has_the_same_ios_without_times(tmp_path):
    imports.import_file(SAMPLES / "fio-v2.iolog", tmp_path / "v2.parquet")
    imports.import_file(SAMPLES / "fio-v3.iolog", tmp_path / "v3.parquet")
    info, v2 = rows(tmp_path / "v2.parquet")
    _, v3 = rows(tmp_path / "v3.parquet")
    assert info.source == "fio-iolog-v2" and (v2["issue_ns"] == NO_TIME).all()
    assert any("no issue times" in n for n in info.notes)
    for name in ("sector", "bytes", "op"):
        assert np.array_equal(v2[name], v3[name])


def test_fio_iolog_v2_wait_entries_give_times(tmp_path):
    src = tmp_path / "w.iolog"
    src.write_text("fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x read 0 4096\n"
                   "/dev/x wait 250 0\n/dev/x write 4096 8192\n/dev/x close\n")
    imports.import_file(src, tmp_path / "cap.parquet")
    _, c = rows(tmp_path / "cap.parquet")
    assert list(c["issue_ns"]) == [0, 250_000] and list(c["bytes"]) == [4096, 8192]


BAD = {
    "iolog entry": ("fio version 3 iolog\n10 /dev/x add\n12 /dev/x read 0 4096\n"
                    "13 /dev/x read zero 4096\n", ":4:"),
    "iolog truncated": ("fio version 3 iolog\n10 /dev/x add\n12 /dev/x read 0 4096\n"
                        "13 /dev/x wri", ":4: truncated"),
    "iolog header": ("fio version 9 iolog\n", ":1:"),
    "iolog unaligned": ("fio version 2 iolog\n/dev/x read 100 4096\n", ":2: offset"),
    "iolog two files": ("fio version 2 iolog\n/a read 0 4096\n/b read 0 4096\n", "2 files"),
    "blkparse line": ("  8,0 0 1 0.000001000 5 D R 10 + 8 [a]\n  8,0 0 2 zero\n", ":2:"),
    "blkparse truncated": ("  8,0 0 1 0.000001000 5 D R 10 + 8 [a]\n  8,0 0 2 0.0000020",
                           ":2: truncated"),
    "blkparse no sector": ("  8,0 0 1 0.000001000 5 D R ten + 8 [a]\n", ":1:"),
    "blkparse two devices": ("  8,0 0 1 0.000001000 5 D R 10 + 8 [a]\n"
                             "  8,16 0 1 0.000001000 5 D R 10 + 8 [a]\n", "2 devices"),
    "neither": ("hello\n", ":1: neither"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_corrupt_input_names_file_and_line_and_writes_nothing(tmp_path, case, capsys):
    text, where = BAD[case]
    src = tmp_path / "in.txt"
    src.write_text(text)
    out = tmp_path / "cap.parquet"
    with pytest.raises(CaptureError, match=f"{src}.*" if where.startswith(":") else str(src)) \
            as caught:
        imports.import_file(src, out)
    assert where in str(caught.value)
    assert list(tmp_path.iterdir()) == [src]
    assert main.main(["capture", "--import", str(src), "-o", str(out)]) == 2
    assert where in capsys.readouterr().err and not out.exists()
