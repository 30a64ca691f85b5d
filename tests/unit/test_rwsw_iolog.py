"""The replay's iolog hold (rwsw/replay_log.py, rwsw/replay.py hold "iolog"), without
a device: a long generated log's stream shares match the step's, offsets aligned and inside
the ActiveRange, SEQ streams continuing in their own region, the file in fio's iolog v2
format; the prefix counts; a step as ONE section replaying its log at iodepth = its OIO; the
shares a step records counted from the log's completed prefix; the remote fallback."""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path
from types import SimpleNamespace

from pts.testdefs.rwsw import replay as rwsw_replay
from pts.testdefs.rwsw import replay_log as iolog
from pts.testdefs.rwsw import wsat as rwsw_wsat
from pts.tools.fio import summarize
from pts.tools.fio_round import PointResult
from pts.workload.atw import Stream, StreamKey
from tests.support.rwsw import THREE_STREAMS, atw_text, settings_with

AR = 1 << 30
DEVICE = SimpleNamespace(capacity_bytes=AR, logical_sector=512, path="/dev/x")
MIX = (Stream(StreamKey("RND", "R", 4096), 60.0), Stream(StreamKey("RND", "W", 8192), 30.0),
       Stream(StreamKey("SEQ", "W", 131072), 10.0))
STEP = """
[[step]]
start_s = 0.0
seconds = 2.0
oio = 3
shares = { "RND 4K R" = 60.0, "RND 4K W" = 30.0, "SEQ 128K W" = 10.0 }

[[step]]
start_s = 2.0
seconds = 1.0
oio = 1
shares = { "RND 4K R" = 100.0 }
"""


def lines_of(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines()]


def test_a_long_log_holds_the_step_shares_aligned_and_seq_continuing(tmp_path):
    path, ar = tmp_path / "s.iolog", 64 << 20
    iolog.write(path, "/dev/x", MIX, 50_000, 7, ar, 4096)
    rows = lines_of(path)
    assert rows[:3] == [["fio", "version", "2", "iolog"], ["/dev/x", "add"],
                        ["/dev/x", "open"]] and rows[-1] == ["/dev/x", "close"]
    ios = rows[3:-1]
    assert len(ios) == 50_000 and all(len(r) == 4 and r[0] == "/dev/x" for r in ios)
    by = {}
    for _, op, off, size in ios:
        by.setdefault((op, int(size)), []).append(int(off))
    n = {k: len(v) for k, v in by.items()}
    assert abs(100 * n[("read", 4096)] / 50_000 - 60) < 1
    assert abs(100 * n[("write", 8192)] / 50_000 - 30) < 1
    assert abs(100 * n[("write", 131072)] / 50_000 - 10) < 1
    for (_, size), offs in by.items():
        assert all(o % size == 0 and o % 4096 == 0 and 0 <= o <= ar - size for o in offs)
    # the RND streams spread over the whole ActiveRange
    assert max(by[("read", 4096)]) > ar * 0.9 and min(by[("read", 4096)]) < ar * 0.1
    # the one SEQ stream: each I/O where the one before it ended, back to 0 at the region end
    seq = by[("write", 131072)]
    assert seq[0] == 0
    assert all(b == a + 131072 or (b == 0 and a + 2 * 131072 > ar)
               for a, b in zip(seq, seq[1:], strict=False))


def test_the_log_is_the_seeds_and_the_prefix_counts_are_its_first_lines(tmp_path):
    a, b, c = (tmp_path / f"{k}.iolog" for k in "abc")
    iolog.write(a, "/dev/x", MIX, 2000, 3, 1 << 26, 512)
    iolog.write(b, "/dev/x", MIX, 2000, 3, 1 << 26, 512)
    iolog.write(c, "/dev/x", MIX, 2000, 4, 1 << 26, 512)
    assert a.read_text() == b.read_text() != c.read_text()
    ios = lines_of(a)[3:-1]
    want = [sum(1 for r in ios[:777] if (r[1], r[3]) == (op, str(s.key.size)))
            for s, op in zip(MIX, ("read", "write", "write"), strict=True)]
    assert iolog.prefix_counts([s.share_pct for s in MIX], 2000, 3, 777) == want
    assert sum(iolog.prefix_counts([60, 30, 10], 2000, 3, 5000)) == 2000
    assert iolog.exhausted(2000, 2000) and not iolog.exhausted(1999, 2000)


def test_two_seq_streams_each_continue_in_their_own_region(tmp_path):
    two = (Stream(StreamKey("SEQ", "R", 4096), 50.0), Stream(StreamKey("SEQ", "W", 4096), 50.0))
    path = tmp_path / "s.iolog"
    iolog.write(path, "/dev/x", two, 1000, 1, 8 << 20, 512)
    ios = lines_of(path)[3:-1]
    reads = [int(r[2]) for r in ios if r[1] == "read"]
    writes = [int(r[2]) for r in ios if r[1] == "write"]
    assert reads == [4096 * k for k in range(len(reads))]
    assert writes == [(4 << 20) + 4096 * k for k in range(len(writes))]


def iolog_replay(tmp_path, **rwsw):
    return settings_with(tmp_path, atw_text("three", THREE_STREAMS) + STEP,
                         rwsw={"rwsw_replay": {"hold": "iolog", **rwsw}})


def test_a_step_is_one_job_replaying_its_log_at_its_oio(tmp_path):
    s = iolog_replay(tmp_path, iolog_iops=1000)
    decl = rwsw_replay.declare(s, DEVICE)
    (job,) = decl.job(decl.points[0]).sections
    (job2,) = decl.job(decl.points[1]).sections
    step, step2 = decl.parameters["steps"]
    assert (job.iodepth, job.numjobs, job.runtime, job.block_size) == (3, 1, 2, 131072)
    assert (job2.iodepth, job2.runtime, job2.block_size) == (1, 1, 4096)
    log = rwsw_replay.iolog_path(s, DEVICE, 0, rwsw_replay.step_streams(
        rwsw_wsat.workload(s, DEVICE), rwsw_replay.steps(s)[0]), 2000)
    # the log's socket: absolute (fio runs in the round's folder), short enough for a Unix
    # socket, one folder of this user's under the temporary directory
    assert log.is_absolute() and log.name.endswith(".sock") and len(str(log)) <= 107
    assert log.parent == Path(tempfile.gettempdir()).resolve() / f"pts-iolog-{os.getuid()}"
    # a --resume's relative reports dir names the same sockets as the absolute one
    rel = dataclasses.replace(s, reports_dir=Path(os.path.relpath(tmp_path)))
    assert rwsw_replay.iolog_path(rel, DEVICE, 0, MIX, 10) == rwsw_replay.iolog_path(
        s, DEVICE, 0, MIX, 10)
    assert dict(job.extra) == {"read_iolog": str(log), "read_iolog_chunked": "1",
                               "replay_no_stall": "1"}
    assert (step["oio_nominal"], step["iolog"]["ios"], step["iolog"]["seed"]) == (3, 2000, 1)
    assert (step2["oio_nominal"], step2["iolog"]["ios"], step2["iolog"]["seed"]) == (1, 1000, 2)
    assert decl.parameters["hold"] == "iolog"
    # nothing exists until the replay runs; the logs to feed hold what the steps say
    assert not log.exists()
    (path, one), (path2, two) = rwsw_replay.step_logs(s, DEVICE, decl)
    assert path == log and not path.exists()
    assert len(b"".join(one.chunks()).splitlines()) == 2000 + 4
    assert {r.split()[1] for r in b"".join(two.chunks()).splitlines()[3:-1]} == {b"read"}
    # a remote device falls back to "oio": one section per stream, declared
    remote = SimpleNamespace(**vars(DEVICE), remote=object())
    far = rwsw_replay.declare(s, remote)
    assert far.parameters["hold"] == "oio"
    assert [j.iodepth for j in far.job(far.points[0]).sections] == [1, 1, 1]
    (text,) = rwsw_replay.deviations(s, remote)
    assert 'hold "iolog" needs the iolog on the device\'s host' in text
    assert rwsw_replay.deviations(s, DEVICE) == []


def test_a_native_length_replay_of_a_day_keeps_the_iolog_hold(tmp_path):
    # 290 steps of 5 min (SNIA's 24 h capture) at 400,000 logged I/Os a second: 120 M lines
    # (~4.8 GB) a step, which a log written before the replay could not afford (the former
    # 1 GiB limit sent it to hold "oio"); streamed, it keeps "iolog", nothing declared
    day = "".join(f"""
[[step]]
start_s = {300.0 * k}
seconds = 300.0
oio = 4
shares = {{ "RND 4K R" = 60.0, "RND 4K W" = 30.0, "SEQ 128K W" = 10.0 }}
""" for k in range(290))
    s = settings_with(tmp_path, atw_text("three", THREE_STREAMS) + day,
                      rwsw={"rwsw_replay": {"hold": "iolog"}})
    decl = rwsw_replay.declare(s, DEVICE)
    assert decl.parameters["hold"] == "iolog" and rwsw_replay.deviations(s, DEVICE) == []
    steps = decl.parameters["steps"]
    assert len(steps) == 290 and {st["iolog"]["ios"] for st in steps} == {300 * 400_000}
    assert [st["iolog"]["seed"] for st in steps] == list(range(1, 291))
    assert not hasattr(rwsw_replay, "IOLOG_MAX_BYTES")


def fio_result(reads: int, writes: int, read_bytes: int, write_bytes: int) -> PointResult:
    """fio's JSON of a 2 s step run as one job: its reads and writes, I/Os and bytes."""
    def side(n, size):
        return {"total_ios": n, "iops": n / 2, "io_bytes": size, "bw_bytes": 1.0,
                "runtime": 2000, "lat_ns": {"mean": 2e6, "max": 1e7}}
    doc = {"jobs": [{"jobname": "p00.s0", "error": 0, "read": side(reads, read_bytes),
                     "write": side(writes, write_bytes)}]}
    return PointResult("p00", summarize(doc), Path("p00.json"), 0.0, 2.0, None,
                       (("p00.s0", summarize(doc)),))


def test_a_step_records_the_shares_of_the_log_prefix_fio_completed(tmp_path):
    s = iolog_replay(tmp_path, iolog_iops=1000)
    decl = rwsw_replay.declare(s, DEVICE)
    sizes = (4096, 4096, 131072)          # the step's streams: RND 4K R, RND 4K W, SEQ 128K W

    def result(done: int, extra_write_bytes: int = 0) -> PointResult:
        # what fio did when it replayed the log's first `done` lines: per direction
        r, w4, w128 = iolog.prefix_counts([60.0, 30.0, 10.0], 2000, 1, done)
        return fio_result(r, w4 + w128, r * sizes[0],
                          w4 * sizes[1] + w128 * sizes[2] + extra_write_bytes)
    f = decl.point_fields(decl.points[0], result(1500))
    want = iolog.prefix_counts([60.0, 30.0, 10.0], 2000, 1, 1500)
    assert [r["ios"] for r in f["streams"]] == want
    assert [round(r["achieved_pct"], 6) for r in f["streams"]] == [
        round(100 * n / 1500, 6) for n in want]
    assert (f["oio_target"], f["oio_nominal"], f["iolog_completed"]) == (3, 3, 1500)
    assert f["oio_achieved"] == 1500 / 2 * 2e6 / 1e9 and f["iolog_exhausted"] is False
    # the shares are the replayed log's; what is measured is fio's per direction, beside it
    assert f["shares_of"] == "replayed log"
    assert f["log_vs_fio"] == [
        {"direction": "read", "log_ios": want[0], "fio_ios": want[0],
         "log_bytes": want[0] * 4096, "fio_bytes": want[0] * 4096, "match": True},
        {"direction": "write", "log_ios": want[1] + want[2], "fio_ios": want[1] + want[2],
         "log_bytes": want[1] * 4096 + want[2] * 131072,
         "fio_bytes": want[1] * 4096 + want[2] * 131072, "match": True}]
    assert f["shares_within_tolerance"] is True and f["mix_warning"] is None
    spent = decl.point_fields(decl.points[0], result(2000))
    assert spent["iolog_exhausted"] is True
    assert "ran out before its runtime: raise [rwsw_replay] iolog_iops" in spent["mix_warning"]
    # up to the OIO (3) I/Os of the largest size in flight at the end: still the log's
    near = decl.point_fields(decl.points[0], result(1500, 3 * 131072))
    assert near["shares_within_tolerance"] is True and near["mix_warning"] is None
    # fio wrote what the log does not hold (another log, another seed): the shares fail
    off = decl.point_fields(decl.points[0], result(1500, 3 * 131072 + 4096))
    assert off["shares_within_tolerance"] is False
    assert [r["match"] for r in off["log_vs_fio"]] == [True, False]
    assert "fio's I/Os and bytes per direction are not those of the replayed log's " \
           f"completed part (writes {want[1] + want[2]:,} I/Os" in off["mix_warning"]
    # a log whose reads and writes come out swapped (counts): caught on the I/Os alone
    r, w4, w128 = want
    swapped = decl.point_fields(decl.points[0], fio_result(
        w4 + w128, r, (w4 + w128) * 4096, r * 4096))
    assert [row["match"] for row in swapped["log_vs_fio"]] == [False, False]


def test_directions_count_each_streams_transfer_size():
    counts = [10, 5, 2]
    rows = iolog.directions(MIX, counts, fio_result(10, 7, 40960, 5 * 8192 + 2 * 131072).summary,
                            1)
    assert [(r["log_ios"], r["log_bytes"], r["match"]) for r in rows] == [
        (10, 40960, True), (7, 5 * 8192 + 2 * 131072, True)]
    # a direction the log never uses must be empty in fio's too
    (_, w) = iolog.directions(MIX[:1], [10], fio_result(10, 1, 40960, 4096).summary, 3)
    assert (w["log_ios"], w["match"]) == (0, False)
