"""The Throughput test end to end, as a user runs it: pytest pts/ -k throughput on a real
loop device, real fio, 1 s points (declared). Each block size of the spec (1024 and 128 KiB
for PTS-E) is its own purge + WIPC + rounds test in the ledger; MB/s are decimal; the PDF has
each block size's pages and the table / 2D plot over both."""

import json

import pytest

from tests.support.engine import IO_URING_ARGS, check_io_uring
from tests.support.helpers import loop_device
from tests.support.ptsrun import check_outcomes, run_pts

pytestmark = [pytest.mark.slow,
              pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "pdftotext")]

SIZE = 128 << 20
TESTS = {"throughput-1024k": 1 << 20, "throughput-128k": 128 << 10}


@pytest.fixture(scope="module")
def tp(tmp_path_factory):
    reports = tmp_path_factory.mktemp("tp") / "reports"
    with loop_device(SIZE, sector=4096) as dev:       # a 4Kn drive (issue 23 §4)
        return run_pts(dev, reports, "-k", "throughput", "--point-seconds", "1",
                       "--purge", "trim", "--max-rounds", "6", *IO_URING_ARGS)


def test_one_bracket_per_block_size_and_pytest_result(tp):
    assert tp.run_json["device"]["logical_sector"] == 4096
    starts = tp.of_type("test_start")
    assert [s["test"] for s in starts] == list(TESTS)
    ends = {e["test"]: e for e in tp.of_type("test_end")}
    print(f"Throughput integration: {tp.wall:.0f} s wall; " + "; ".join(
        f"{k} {e['status']} after {e['rounds']} rounds" for k, e in ends.items()))
    for name, bs in TESTS.items():
        assert starts[list(TESTS).index(name)]["parameters"]["block_sizes"] == [bs]
    expected = check_outcomes(tp.folder, tp.records)     # each bracket, from its rounds
    assert sorted(expected) == sorted(TESTS)
    all_steady = all(e.passed for e in expected.values())
    assert tp.proc.returncode == (0 if all_steady else 1), tp.proc.stdout


def test_purge_then_wipc_at_the_block_size_and_test_tc_qd(tp):
    for name, bs in TESTS.items():
        kinds = [r["type"] for r in tp.records if r.get("test") == name]
        assert kinds.index("purge") < kinds.index("wipc") < kinds.index("point")
        wipc = tp.of_type("wipc", name)[0]
        assert wipc["block_size"] == bs and wipc["bytes_written"] == 2 * SIZE
        assert (wipc["thread_count"], wipc["queue_depth"]) == (1, 32)


def test_points_seq_read_then_write_and_decimal_mbps(tp):
    for name, bs in TESTS.items():
        points = tp.of_type("point", name)
        rounds = tp.of_type("round", name)
        assert rounds
        assert [p["rw_mix"] for p in points] == ["100/0", "0/100"] * len(rounds)
        for p in points:
            raw = json.loads((tp.folder / p["raw"]).read_text())["jobs"][0]
            assert raw["job options"]["rw"] == ("read" if p["rw_mix"] == "100/0" else "write")
            assert raw["job options"]["bs"] == str(bs) and p["block_size"] == bs
            ddir = "read" if p["rw_mix"] == "100/0" else "write"
            assert p["mbps"] == pytest.approx(raw[ddir]["bw_bytes"] / 1e6) and p["mbps"] > 0
            assert p[f"{ddir}_mbps"] == p["mbps"]
        label = f"SEQ {bs // 1024}KiB 0/100"
        for r in rounds:
            write = [p for p in points if p["round"] == r["round"] and p["rw_mix"] == "0/100"]
            assert r["tracking"] == {label: write[0]["mbps"]}


def test_pdf_pages_per_block_size(tp):
    text = tp.pdf_text()
    for title in ("Throughput 1024 KiB test", "Throughput 128 KiB test",
                  "Steady State Convergence: SEQ read MB/s",
                  "Steady State Convergence: SEQ write MB/s",
                  "Steady State Measurement Window: SEQ 1024KiB 0/100",
                  "Steady State Measurement Window: SEQ 128KiB 0/100",
                  "Throughput Measurement Window Tabular Data: MB/s, all block sizes",
                  "2D Plot: MB/s vs Block Size", "MB/s are decimal"):
        assert title in text, title


def test_every_fio_run_used_io_uring(tp):
    """`--ioengine io_uring` (issue 33 §2): every job file and fio JSON of the run."""
    check_io_uring(tp)
