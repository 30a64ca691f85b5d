"""Replay step logs made as the steps run (issue 40 §3, rwsw/replay_log.py, replay_feed.py),
without a device: a log made in chunks is byte for byte the log the former all-at-once maker
wrote for the same seed (kept below as the oracle: ONE numpy draw of all the streams, then
each stream's offsets in stream order); the prefix counts are the former's; the feed serves
each step through its own Unix socket in step order, each made as it is read, and nothing
else is on disk; a re-declared (resumed) run is fed the same bytes; stale and too-long
socket paths."""

from __future__ import annotations

import dataclasses
import math
import os
import socket
import stat
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from pts.testdefs.rwsw import replay as rwsw_replay
from pts.testdefs.rwsw import replay_feed
from pts.testdefs.rwsw import replay_log as iolog
from pts.workload import applied
from pts.workload.atw import Stream, StreamKey
from tests.support.rwsw import THREE_STREAMS, atw_text, settings_with

MIX = (Stream(StreamKey("RND", "R", 4096), 50.0), Stream(StreamKey("RND", "W", 8192), 25.0),
       Stream(StreamKey("SEQ", "W", 131072), 10.0), Stream(StreamKey("SEQ", "R", 65536), 10.0),
       Stream(StreamKey("RND", "R", 512), 5.0))


def former_log(filename, streams, n, seed, ar_bytes, sector) -> bytes:
    """The log as pts.workload.iolog wrote it before issue 40 §3 (commit 3517e75): all `n`
    stream draws at once, then each stream's offsets (RND from one generator in stream
    order), formatted with numpy's string functions."""
    p = np.asarray([s.share_pct for s in streams], dtype=float)
    picked = np.random.default_rng(seed).choice(len(p), size=n, p=p / p.sum())
    rng = np.random.default_rng([seed, 1])
    where_all = np.zeros(n, dtype=np.int64)
    seq = [s for s in streams if s.key.access == "SEQ"]
    region = applied.seq_region(ar_bytes, len(seq))
    for k, s in enumerate(streams):
        where = np.flatnonzero(picked == k)
        if s.key.access == "RND":
            align = math.lcm(s.key.size, sector)
            slots = (ar_bytes - s.key.size) // align + 1
            where_all[where] = rng.integers(0, slots, size=len(where)) * align
        else:
            per = region // s.key.size
            where_all[where] = seq.index(s) * region + (np.arange(len(where)) % per) * s.key.size
    ops = np.array([f"{filename} {'read' if s.key.direction == 'R' else 'write'} "
                    for s in streams])
    sizes = np.array([f" {s.key.size}\n" for s in streams])
    body = "".join(np.char.add(np.char.add(ops[picked], where_all.astype(str)), sizes[picked]))
    return (f"fio version 2 iolog\n{filename} add\n{filename} open\n{body}"
            f"{filename} close\n").encode()


@pytest.mark.parametrize(("n", "ar", "sector", "chunk"), [
    (1, 1 << 26, 512, 1 << 16),
    (150_001, 1 << 26, 4096, 1 << 16),          # chunk boundaries inside the log
    (40_000, (1 << 44) + 12_345, 512, 999),     # > 2^32 slots (64-bit draws), odd chunks
    (30_000, 8 << 20, 512, 7),                  # SEQ regions that wrap
])
def test_a_log_made_in_chunks_is_the_former_all_at_once_log(tmp_path, n, ar, sector, chunk):
    log = iolog.StepLog("/dev/loop7", MIX, n, 9, ar, sector)
    want = former_log("/dev/loop7", MIX, n, 9, ar, sector)
    assert b"".join(log.chunks(chunk)) == want
    iolog.write(tmp_path / "s.iolog", "/dev/loop7", MIX, n, 9, ar, sector)
    assert (tmp_path / "s.iolog").read_bytes() == want
    # another seed is another log
    assert b"".join(iolog.StepLog("/dev/loop7", MIX, n, 10, ar, sector).chunks()) != want \
        or n == 1


def test_the_prefix_counts_are_the_former_logs_first_lines():
    shares = [s.share_pct for s in MIX]
    p = np.asarray(shares) / sum(shares)
    picked = np.random.default_rng(3).choice(len(p), size=3_000_000, p=p)
    for done in (0, 1, 1_048_577, 2_999_999, 3_000_000, 5_000_000):
        want = np.bincount(picked[:done], minlength=len(p)).tolist()
        assert iolog.prefix_counts(shares, 3_000_000, 3, done) == want, done


def read_until(conn: socket.socket, lines: int) -> bytes:
    """What a reader got when it stopped after `lines` lines (the rest of its last read
    included), or the whole log when it ended first."""
    got = b""
    while got.count(b"\n") < lines:
        piece = conn.recv(1 << 16)
        if not piece:
            break
        got += piece
    return got


class Counted(iolog.StepLog):
    """A step log that counts the pieces it made."""
    made = 0

    def chunks(self, chunk: int = 1 << 16):
        for piece in super().chunks(chunk):
            self.made += 1
            yield piece


def only_sockets(folder: Path) -> list[str]:
    """The folder's entries, each checked to be a socket (no log file on disk)."""
    names = []
    for entry in folder.iterdir():
        assert stat.S_ISSOCK(entry.lstat().st_mode), entry
        names.append(entry.name)
    return sorted(names)


def test_the_feed_serves_each_step_as_it_is_read_and_keeps_nothing_on_disk(tmp_path):
    folder = tmp_path / "s"
    logs = [(folder / f"step{k + 1}.sock", Counted("/dev/x", MIX, n, 7 + k, 1 << 30, 512))
            for k, n in enumerate((2_000_000, 2_000, 300_000))]
    stale = folder / "step2.sock"            # a killed run's socket, still on its path
    folder.mkdir()
    old = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old.bind(str(stale))
    old.close()
    seen, made = [], []
    with replay_feed.Feed(logs, poll_s=0.05) as feed:
        assert only_sockets(folder) == ["step1.sock", "step2.sock", "step3.sock"]
        for k, (path, log) in enumerate(logs):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as fio:
                fio.connect(str(path))
                seen.append(only_sockets(folder))
                # fio stops reading after its runtime: 70,000 lines of step 1 and 3; the
                # whole of step 2 (the log ran out)
                got = read_until(fio, 70_000 if k != 1 else 10 ** 9)
                made.append(log.made)
            full = b"".join(log.chunks())
            assert got == full[:len(got)] and len(got) < len(full) or k == 1
            if k == 1:
                assert got == full and got.endswith(b"/dev/x close\n")
            # the next step is served only once this one closed; its socket is gone then
            # (60 s: a limit that only stops a hang; it was 5 s, which a loaded host can take)
            deadline = time.monotonic() + 60
            while path.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
            assert not path.exists()
    assert seen == [["step1.sock", "step2.sock", "step3.sock"],
                    ["step2.sock", "step3.sock"], ["step3.sock"]]
    assert not list(folder.iterdir())
    # what was made: about as much as was read (a chunk ahead, and the socket's buffer),
    # never the whole log; step 2 to its end
    one, two, three = feed.stats
    assert (one["step"], one["ended"], two["ended"], three["ended"]) == (
        1, "fio closed", "log end", "fio closed")
    assert 70_000 <= one["lines_made"] < 70_000 + 4 * (1 << 16)
    # made as it was read: a few of step 1's 31 chunks of lines, not the whole log
    assert made[0] <= 2 + 4 < 2 + 31, made
    assert two["lines_made"] == 2_000 and two["bytes_sent"] == len(b"".join(logs[1][1].chunks()))
    assert all(s["make_s"] >= 0 and s["prepare_s"] >= 0 for s in feed.stats)


def test_a_replay_stopped_mid_step_ends_the_feed_and_removes_its_sockets(tmp_path):
    logs = [(tmp_path / f"s{k}.sock", iolog.StepLog("/dev/x", MIX, 10 ** 7, k, 1 << 30, 512))
            for k in range(2)]
    with replay_feed.Feed(logs, poll_s=0.05):
        fio = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        fio.connect(str(logs[0][0]))
        read_until(fio, 10)                   # fio reads no more (hung, or killed later)
    fio.close()
    assert not list(tmp_path.iterdir())


def test_a_socket_path_too_long_is_refused_naming_the_fix(tmp_path):
    long = tmp_path / ("d" * 120) / "s.sock"
    with pytest.raises(replay_feed.FeedError, match="longer than 107 bytes.*TMPDIR"):
        with replay_feed.Feed([(long, iolog.StepLog("/dev/x", MIX, 10, 1, 1 << 30, 512))]):
            pass
    assert not long.parent.exists()


STEPS = """
[[step]]
start_s = 0.0
seconds = 3.0
oio = 4
shares = { "RND 4K R" = 60.0, "RND 4K W" = 30.0, "SEQ 128K W" = 10.0 }

[[step]]
start_s = 3.0
seconds = 2.0
oio = 1
shares = { "RND 4K R" = 70.0, "RND 4K W" = 30.0 }
"""
DEVICE = SimpleNamespace(capacity_bytes=1 << 30, logical_sector=512, path="/dev/x")


def test_a_resumed_run_is_fed_the_same_logs(tmp_path):
    """A --resume declares the replay again (settings read afresh, a relative reports dir):
    the same sockets and, served, the same bytes."""
    def fed(reports: Path) -> list[tuple[Path, bytes]]:
        s = settings_with(tmp_path, atw_text("three", THREE_STREAMS) + STEPS,
                          rwsw={"rwsw_replay": {"hold": "iolog", "iolog_iops": 20_000}})
        s = dataclasses.replace(s, reports_dir=reports)
        decl = rwsw_replay.declare(s, DEVICE)
        out = []
        logs = rwsw_replay.step_logs(s, DEVICE, decl)
        with replay_feed.Feed(logs, poll_s=0.05):
            for path, _ in logs:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as fio:
                    fio.connect(str(path))
                    out.append((path, read_until(fio, 10 ** 9)))
        return out
    first = fed(tmp_path)
    cwd = os.getcwd()
    os.chdir(tmp_path.parent)
    try:
        again = fed(Path(tmp_path.name))
    finally:
        os.chdir(cwd)
    assert first == again
    assert [len(b.splitlines()) - 4 for _, b in first] == [60_000, 40_000]


def test_the_dry_run_says_how_the_step_logs_are_made(tmp_path, monkeypatch):
    from pts.procedure import plan
    from pts.testdefs import registry
    monkeypatch.setattr(plan, "setup_lines", lambda *a: ["(set-up lines)"])
    s = settings_with(tmp_path, atw_text("three", THREE_STREAMS) + STEPS,
                      rwsw={"rwsw_replay": {"hold": "iolog"}})
    text = "\n".join(registry.get("rwsw-replay").plan(s, DEVICE, None))
    assert "hold iolog: each step's log (its I/Os at [rwsw_replay] iolog_iops x its " \
           "seconds, seed iolog_seed + step) is made as the step runs and streamed to fio " \
           "through the Unix socket its read_iolog names (read_iolog_chunked): nothing on " \
           "disk" in text
    assert "read_iolog_chunked=1" in text and ".sock" in text and "DEVIATION" not in text
