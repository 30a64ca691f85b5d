"""`python -m pts workload`: the card, -o, and bad input (exit 2, nothing written)."""

from __future__ import annotations

import pytest

from pts.cli.main import main
from pts.workload import atw
from tests.support.synthetic_capture import R, W, rows, write


@pytest.fixture()
def capture(tmp_path):
    ios = [(i, i + 3, 8 * i, 4096, R) for i in range(8)] + [(9, 10, 5000, 65536, W)]
    return write(tmp_path / "c.capture", rows(*ios), seconds=0.012, lost_events=5,
                 device="/dev/loop9", process_filter="db_bench")


def test_card_and_workload_file(capture, tmp_path, capsys):
    out = tmp_path / "w.toml"
    assert main(["workload", str(capture), "-o", str(out), "--step", "0.005",
                 "--oio-rule", "median"]) == 0
    card = capsys.readouterr().out
    assert "/dev/loop9" in card and "db_bench" in card
    assert "5 EVENTS WERE LOST" in card                 # loudly
    assert "SEQ 4K R" in card and "top 9 cover 100.0 %" in card
    assert "median 3, p95 3, max 3" in card
    w = atw.load(out)
    assert [(s.key.label, s.share_pct) for s in w.streams] == \
        [("SEQ 4K R", 77.78), ("RND 4K R", 11.11), ("RND 64K W", 11.11)]
    assert (w.thread_count, w.queue_depth) == (3, 1)
    assert w.provenance["lost_events"] == 5 and w.provenance["process_filter"] == "db_bench"


def test_without_output_only_the_card(capture, tmp_path, capsys):
    assert main(["workload", str(capture), "--top-n", "1", "--step", "1"]) == 0
    assert "top 1 cover 77.8 %" in capsys.readouterr().out
    assert not list(tmp_path.glob("*.toml"))


def test_bad_capture_exit_2_nothing_written(capture, tmp_path, capsys):
    bad = tmp_path / "bad.capture"
    bad.write_bytes(capture.read_bytes()[:-100])
    out = tmp_path / "w.toml"
    assert main(["workload", str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "bad.capture" in err and "corrupt" in err
    assert not out.exists() and not list(tmp_path.glob(".w.toml*"))
    assert main(["workload", str(tmp_path / "none.capture"), "-o", str(out)]) == 2
    assert "no such capture file" in capsys.readouterr().err and not out.exists()


def test_empty_window_exit_2(capture, tmp_path, capsys):
    out = tmp_path / "w.toml"
    assert main(["workload", str(capture), "--from", "5", "--to", "6", "-o", str(out)]) == 2
    assert "no reads or writes" in capsys.readouterr().err and not out.exists()


def test_unwritable_output_exit_2(capture, tmp_path, capsys):
    out = tmp_path / "no-such-folder" / "w.toml"
    assert main(["workload", str(capture), "-o", str(out)]) == 2
    assert "cannot write" in capsys.readouterr().err and not out.exists()
