"""Pipelined rounds (pts.tools.fio_round + pts.procedure.runner.RoundMeasure) on constructed
fio output: each point's result is split out of the round's JSON, its real start and end come
from its timing log and its release by the gate; the first point's threads wait until all of
them are set up (the gate's barrier), each point after the first until all the threads of the
one before it have completed their I/O (the gate script, run here for real); a point that
overlaps the previous one by more than 1 % of a point anyway is measured again stonewalled,
recorded as round_mode records, and never lands in the ledger; only rounds that keep
overlapping make the whole test stonewalled."""

from __future__ import annotations

import dataclasses
import json
import re
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from pts.config.spec import load_spec
from pts.procedure.round_measure import FALLBACK_ROUNDS, WHOLE_TEST, RoundMeasure
from pts.procedure.rounds import TestPoint
from pts.procedure.runner import RoundTest
from pts.results import records
from pts.results.ledger import Ledger, read_records
from pts.testdefs import fields
from pts.tools.fio import JobSet, random_job
from pts.tools.fio_round import GATE_SCRIPT, LEAD_MS, gate_text, run_round, scheduled

T0 = 1_800_000_000_000          # ms, Unix epoch


def job_entry(name: str, iops: float) -> dict:
    d = {"total_ios": int(iops), "iops": iops, "io_bytes": int(iops) * 4096,
         "bw_bytes": iops * 4096, "runtime": 1000, "lat_ns": {"mean": 1e5, "max": 2e6}}
    return {"jobname": name, "error": 0, "read": {"total_ios": 0}, "write": d}


class FakeFio:
    """Writes what fio would: the JSON document and each point's timing log. `starts`:
    each point's first I/O in ms after T0 per mode; each point lasts 1000 ms (`lengths`). A
    pipelined point is released by the gate (gate-K.started, in the gate script's folder) at
    its first I/O, or at `released` (ms after T0) when given."""

    def __init__(self, starts: dict[str, list[int]], lengths: list[int] | None = None,
                 released: list[int] | None = None):
        self.starts, self.calls, self.texts = starts, [], []
        self.lengths = lengths or [1000] * 3
        self.released = released
        self.t0 = T0            # the launch of the next fio run (Unix ms)
        self.gates: list[Path] = []

    def run_document(self, filename, text, out_dir, name, timeout, histograms, cwd=None):
        text = text(self.t0) if callable(text) else text
        mode = "pipelined" if "exec_prerun=" in text else "stonewalled"
        self.calls.append(mode)
        self.texts.append(text)
        names = [line[1:-1] for line in text.splitlines() if line.startswith("[p")]
        for name_, start, length in zip(names, self.starts[mode], self.lengths,
                                        strict=False):
            prefix = next(line.split("=", 1)[1] for line in text.split(f"[{name_}]")[1]
                          .splitlines() if line.startswith("write_lat_log="))
            stamps = range(self.t0 + start + 1, self.t0 + start + length + 1)   # 1 ms windows
            Path(f"{prefix}_lat.1.log").write_text(
                "".join(f"{t}, 100000, 1, 0, 0\n" for t in stamps))
        if mode == "pipelined":       # the gate script's folder of FIFOs (fio_round.gate_text)
            gates = Path(re.search(r"^cd -- (\S+) \|\|", (cwd / GATE_SCRIPT).read_text(),
                                   re.M).group(1))
            self.gates.append(gates)
            for k in range(len(names)):
                at = (self.released or self.starts[mode])[k]
                (gates / f"gate-{k}.started").write_text(f"{(self.t0 + at) / 1000:.6f}\n")
        doc = {"fio version": "fio-3.33",
               "jobs": [job_entry(n, 1000.0 * (k + 1)) for k, n in enumerate(names)]}
        path = out_dir / f"{name}.json"
        path.write_text(json.dumps(doc))
        return doc, path, self.t0 / 1000, self.t0 / 1000 + 4, ""


def fake_run(tmp_path: Path, fio: FakeFio):
    spec = load_spec("pts-e-1.1")
    settings = SimpleNamespace(point_seconds=1, round_mode="pipelined", spec=spec)
    folder = tmp_path / "run"
    folder.mkdir()
    lines: list[str] = []
    return SimpleNamespace(
        settings=settings, spec=spec, device=SimpleNamespace(path="/dev/fake"), fio=fio,
        resume=None, power=None, ledger=Ledger(folder / "ledger.jsonl"), write=lines.append,
        lines=lines,
        raw_dir=lambda test, *parts: folder.joinpath("raw", test, *parts),
        relative=lambda p: str(Path(p).relative_to(folder)), folder=folder)


def declaration(points) -> RoundTest:
    return RoundTest(
        test="iops", title="IOPS", clause="x", parameters={}, points=tuple(points),
        tracking={}, value_key="iops",
        job=lambda p: random_job(f"p{p.index:02d}", 0, 4096, 32, 1, 1, 1 << 30),
        fields=fields.basic, thread_count=1, queue_depth=32, wipc_block_size=None)


POINTS = [TestPoint(i, load_spec("pts-e-1.1").iops.rw_mixes[-1], 4096) for i in range(3)]


def test_points_are_split_out_of_the_round_with_their_own_io_window(tmp_path):
    fio = FakeFio({"pipelined": [0, 1020, 2040]})
    out = tmp_path / "round"
    jobs = [random_job(f"p{k:02d}", 0, 4096, 32, 1, 1, 1 << 30) for k in range(3)]
    found = run_round(fio, "/dev/fake", jobs, out, "pipelined", timeout=60)
    assert [r.summary.iops for r in found] == [1000.0, 2000.0, 3000.0]
    assert [r.overlap_ms for r in found] == [None, pytest.approx(-20, abs=0.01),
                                        pytest.approx(-20, abs=0.01)]
    assert found[1].start == pytest.approx((T0 + 1020) / 1000, abs=1e-4)
    single = json.loads((out / "p01.json").read_text())
    assert [j["jobname"] for j in single["jobs"]] == ["p01"]
    text = fio.texts[0]
    assert text.count("new_group=1") == 3
    # the first point's thread waits at the barrier (1 thread, LEAD_MS after fio's launch at
    # the earliest); each later one at its gate
    assert f"exec_prerun=./{GATE_SCRIPT} wait 0 61 1 {T0 + LEAD_MS}\n" in text
    assert f"exec_prerun=./{GATE_SCRIPT} wait 1 61\n" in text
    assert found[0].start == T0 / 1000                  # its release (gate-0.started)
    assert (out / GATE_SCRIPT).stat().st_mode & 0o111
    assert not list(out.glob("gate-*"))            # the FIFOs and their notes: elsewhere,
    assert fio.gates and not fio.gates[0].exists()  # in a folder removed after the run


def test_each_point_waits_for_all_the_threads_of_the_one_before_it(tmp_path):
    """Point k's threads wait at the gate k; every thread of point k-1 (numjobs of each of
    its sections) reports its completion, the last releases point k's threads (all their
    sections'); point k is created when point k-2 has exited (wait_for its first section).
    Point 0's threads wait at its barrier, all of its sections' counted, and T0."""
    one = random_job("a", 0, 4096, 32, 4, 1, 1 << 30)
    two = JobSet("b", (random_job("b1", 0, 4096, 1, 2, 1, 1 << 30),
                       random_job("b2", 0, 4096, 1, 3, 1, 1 << 30)))
    three = random_job("c", 0, 4096, 32, 1, 1, 1 << 30)
    planned = scheduled([one, two, three], "pipelined", tmp_path, T0, wait_s=61)
    opts = [dict(job.extra) for point in planned for job in point.sections]
    assert opts[0] == {"exec_prerun": f"./{GATE_SCRIPT} wait 0 61 4 {T0}",
                       "exec_postrun": f"./{GATE_SCRIPT} done 0 4 5"}
    for section in opts[1:3]:
        assert section == {"exec_prerun": f"./{GATE_SCRIPT} wait 1 61",
                           "exec_postrun": f"./{GATE_SCRIPT} done 1 5 1"}
    assert opts[3] == {"exec_prerun": f"./{GATE_SCRIPT} wait 2 61", "wait_for": "a"}
    barrier = scheduled([two, three], "pipelined", tmp_path, T0, wait_s=61)[0]
    assert [dict(j.extra)["exec_prerun"] for j in barrier.sections] == [
        f"./{GATE_SCRIPT} wait 0 61 5 {T0}"] * 2              # b1's 2 threads + b2's 3
    stonewalled = scheduled([one, two, three], "stonewalled", tmp_path)
    assert all(not job.extra for p in stonewalled for job in p.sections)


def test_the_gate_releases_a_point_when_every_thread_of_the_one_before_is_done(tmp_path):
    """The gate script as fio runs it (exec_postrun/exec_prerun, through sh), on a FIFO held
    open as run_round holds it: point 1 (2 threads) is not released while one of point 0's
    2 threads is still running; when both are done, each thread of point 1 is released once
    and notes when (gate-1.started)."""
    import os
    import subprocess

    work, gates = tmp_path / "fio's cwd", tmp_path / "gates"
    work.mkdir()
    gates.mkdir()
    script = work / GATE_SCRIPT
    script.write_text(gate_text(gates))
    script.chmod(0o755)
    os.mkfifo(gates / "gate-1")
    held = os.open(gates / "gate-1", os.O_RDWR | os.O_NONBLOCK)
    tmp_path = gates                      # where its notes go

    def gate(*args: str) -> int:
        return subprocess.run(["sh", "-c", f"./{GATE_SCRIPT} {' '.join(args)}"],
                              cwd=work, timeout=30).returncode
    try:
        assert gate("done", "0", "2", "2") == 0               # one of point 0's threads
        assert gate("wait", "1", "0.2") == 1                   # nothing to read: not released
        assert not (tmp_path / "gate-1.started").exists()
        assert gate("done", "0", "2", "2") == 0               # the last: releases 2 threads
        assert gate("wait", "1", "5") == 0 and gate("wait", "1", "5") == 0
        assert gate("wait", "1", "0.2") == 1                   # and no third
    finally:
        os.close(held)
    stamps = (tmp_path / "gate-1.started").read_text().split()
    done = (tmp_path / "gate-0.done").read_text().split()
    assert len(stamps) == 2 and len(done) == 2
    assert min(float(s) for s in stamps) >= max(float(d) for d in done)


def test_a_point_starts_when_released_not_at_its_first_logged_window(tmp_path):
    """A released point's start is its release (its I/O cannot begin before): its first log
    window, stamped at the window's end and so read as beginning one window earlier, would
    show an overlap of up to a window with the point before it that never happened."""
    fio = FakeFio({"pipelined": [0, 995, 1995]}, released=[0, 1003, 2004])
    jobs = [random_job(f"p{k:02d}", 0, 4096, 32, 1, 1, 1 << 30) for k in range(3)]
    found = run_round(fio, "/dev/fake", jobs, tmp_path / "round", "pipelined", timeout=60)
    assert found[1].start == pytest.approx((T0 + 1003) / 1000, abs=1e-4)
    assert found[1].overlap_ms == pytest.approx(-3, abs=0.01)
    assert found[2].overlap_ms == pytest.approx(-9, abs=0.01)
    assert found[1].drain_ms == pytest.approx(995 + 1000 - 1003 - 1000, abs=0.01)


def gate_folders(tmp_path: Path, k: int) -> tuple[Path, Path, int]:
    """fio's working folder with the gate script, and the gate folder with gate-K open
    read-write, as run_round holds it: (work, gates, the gate's fd)."""
    import os
    work, gates = tmp_path / "work", tmp_path / "gates"
    work.mkdir()
    gates.mkdir()
    (work / GATE_SCRIPT).write_text(gate_text(gates))
    (work / GATE_SCRIPT).chmod(0o755)
    os.mkfifo(gates / f"gate-{k}")
    return work, gates, os.open(gates / f"gate-{k}", os.O_RDWR | os.O_NONBLOCK)


def ledger_modes(run) -> list:
    run.ledger.close()
    return [r for r in read_records(run.folder / "ledger.jsonl")[0]
            if isinstance(r, records.RoundMode)]


def test_the_first_round_runs_pipelined(tmp_path):
    """Nothing needs learning before a round: the gate starts each point when the one
    before it has completed, from the test's first round on; nothing is recorded."""
    fio = FakeFio({"pipelined": [0, 1004, 2008]})
    run = fake_run(tmp_path, fio)
    measure = RoundMeasure(run, declaration(POINTS))
    found = measure(POINTS, 1)
    assert fio.calls == ["pipelined"] and measure.mode == "pipelined"
    assert found[2]["overlap_ms"] == pytest.approx(-4, abs=0.01)
    assert not ledger_modes(run)


def test_an_overlapping_point_is_measured_again_stonewalled_and_the_next_round_goes_on(
        tmp_path):
    # p02 began 60 ms before p01's last completion (a timing log or a gate gone wrong)
    fio = FakeFio({"pipelined": [0, 1010, 1950], "stonewalled": [0]})
    run = fake_run(tmp_path, fio)
    measure = RoundMeasure(run, declaration(POINTS))
    found = measure(POINTS, 1)
    assert fio.calls == ["pipelined", "stonewalled"]
    # only p02 is measured again, alone, stonewalled
    assert fio.texts[1].count("[p") == 1 and "[p02]" in fio.texts[1]
    assert found[2]["raw"] == "raw/iops/round-01-stonewalled/p02.json"
    assert found[2]["overlap_ms"] is None                  # the first of its fio run
    assert found[1]["raw"] == "raw/iops/round-01/p01.json"
    assert measure.mode == "pipelined" and measure.fallbacks == 1
    fio.starts["pipelined"] = [0, 1010, 2020]
    measure(POINTS, 2)
    assert fio.calls[2:] == ["pipelined"] and measure.fallbacks == 0
    (mode,) = ledger_modes(run)
    assert mode.mode == "stonewalled" and "0/100 by 60 ms" in mode.reason
    assert "the next round goes on pipelined" in mode.reason
    assert any("measured again stonewalled" in line for line in run.lines)


def test_rounds_that_keep_overlapping_make_the_test_stonewalled(tmp_path):
    fio = FakeFio({"pipelined": [0, 1010, 1950], "stonewalled": [0, 1300, 2600]})
    run = fake_run(tmp_path, fio)
    measure = RoundMeasure(run, declaration(POINTS))
    for round_no in range(1, FALLBACK_ROUNDS + 1):
        measure(POINTS, round_no)
    assert measure.mode == "stonewalled"
    assert fio.calls == ["pipelined", "stonewalled"] * FALLBACK_ROUNDS
    measure(POINTS, FALLBACK_ROUNDS + 1)
    assert fio.calls[-1] == "stonewalled" and len(fio.calls) == 2 * FALLBACK_ROUNDS + 1
    assert fio.texts[-1].count("[p") == 3           # the whole round, stonewalled
    modes = ledger_modes(run)
    assert modes[-1].mode == "stonewalled" and WHOLE_TEST in modes[-1].reason
    assert sum(WHOLE_TEST in m.reason for m in modes) == 1


def test_a_resumed_test_goes_on_pipelined_unless_it_gave_the_pipeline_up(tmp_path):
    run = fake_run(tmp_path, FakeFio({}))
    one_round = records.RoundMode(test="iops", round=2, mode="stonewalled",
                                  reason="round 2: ... the next round goes on pipelined")
    run.resume = SimpleNamespace(records=[one_round])
    assert RoundMeasure(run, declaration(POINTS)).mode == "pipelined"
    whole = records.RoundMode(test="iops", round=4, mode="stonewalled",
                              reason=f"round 4: ...; {WHOLE_TEST}")
    run.resume = SimpleNamespace(records=[one_round, whole])
    assert RoundMeasure(run, declaration(POINTS)).mode == "stonewalled"


def test_an_overlap_under_one_percent_is_tolerated(tmp_path):
    fio = FakeFio({"pipelined": [0, 1020, 2015]})          # 5 ms: 0.5 % of the point
    run = fake_run(tmp_path, fio)
    measure = RoundMeasure(run, declaration(POINTS))
    assert measure(POINTS, 1)[2]["overlap_ms"] == pytest.approx(5, abs=0.01)
    assert fio.calls == ["pipelined"]


def test_decl_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        declaration(POINTS).test = "x"


def test_the_first_point_starts_when_its_last_thread_is_set_up_and_not_before_t0(
        tmp_path):
    """The barrier (the gate script as fio runs it, `wait 0 S N T0`, on a FIFO held as
    run_round holds it): of a point of 3 threads, the 2 set up first are not released while
    the third is not there; the third's arrival releases all 3, each once, at T0 at the
    earliest (T0 here 300 ms after the third arrives), and the release is noted
    (gate-0.started: the point's start). A barrier a thread never reaches runs out after S
    and says so on its output (fio keeps it: NAME.prerun.txt)."""
    import os
    import subprocess

    work, gates, held = gate_folders(tmp_path, 0)

    def gate(*args) -> subprocess.Popen:
        return subprocess.Popen(["sh", "-c", f"./{GATE_SCRIPT} wait 0 {' '.join(args)}"],
                                cwd=work, stderr=subprocess.PIPE, text=True)
    try:
        first = [gate("30", "3", "1000") for _ in range(2)]      # T0 long past
        arrived = gates / "gate-0.arrived"
        deadline = time.monotonic() + 30
        while len(arrived.read_text().split() if arrived.exists() else ()) < 2:
            assert time.monotonic() < deadline, "the first two threads never arrived"
            time.sleep(0.05)
        time.sleep(0.5)                                  # they wait: nothing released them
        assert [p.poll() for p in first] == [None, None]
        assert not (gates / "gate-0.started").exists()
        t0 = int(time.time() * 1000) + 300
        last = gate("30", "3", str(t0))                   # the last one, T0 ahead
        assert [p.wait(timeout=30) for p in (*first, last)] == [0, 0, 0]
    finally:
        os.close(held)
    stamps = [float(s) for s in (gates / "gate-0.started").read_text().split()]
    arrivals = [float(s) for s in arrived.read_text().split()]
    assert len(stamps) == 3 and len(arrivals) == 3
    assert min(stamps) >= max(arrivals) and min(stamps) >= t0 / 1000

    os.mkfifo(gates / "gate-9")
    held = os.open(gates / "gate-9", os.O_RDWR | os.O_NONBLOCK)
    try:
        alone = subprocess.run(["sh", "-c", f"./{GATE_SCRIPT} wait 9 0.3 2 1000"], cwd=work,
                               capture_output=True, text=True, timeout=30)
    finally:
        os.close(held)
    assert alone.returncode == 1
    assert alone.stderr == "pts-gate: point 9 not released within 0.3 s (1 of its 2 threads " \
                           "set up)\n"
    assert not (gates / "gate-9.started").exists()


def test_a_waiting_gate_ends_with_its_fio_job(tmp_path):
    """fio killed mid-round (test_faults): its jobs lead their own sessions, and the `sh -c`
    running a waiting gate holds fio's output pipe, so the suite read fio's output until the
    gate's whole timeout (120 s and more). The gate ends when the leader of its session (the
    fio job) is gone: here a stand-in job that waits 30 s at the gate is killed at once, and
    the pipe it held reaches EOF long before those 30 s."""
    import os
    import select
    import signal
    import subprocess
    import sys

    work, gates, held = gate_folders(tmp_path, 1)
    job = ("import os, subprocess, time; os.setsid(); "      # a fio job: a session leader
           f"subprocess.Popen(['sh', '-c', './{GATE_SCRIPT} wait 1 30 > p.prerun.txt 2>&1']); "
           "print('waiting', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", job], cwd=work, stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline() == "waiting\n"
        time.sleep(0.5)
        os.kill(proc.pid, signal.SIGKILL)                   # fio's job killed (-9)
        proc.wait()
        # the gate's shell inherited the job's stdout: EOF once the gate has ended
        fd, deadline, ended = proc.stdout.fileno(), time.monotonic() + 15, False
        while not ended and time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            ended = bool(ready) and not os.read(fd, 4096)
        assert ended, "the gate kept waiting after its fio job was gone"
    finally:
        os.close(held)
        proc.stdout.close()
