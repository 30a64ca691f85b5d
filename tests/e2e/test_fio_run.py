"""The fio wrapper against the real fio: WIPC bytes, kept files, and typed errors."""

import json
import os
import re
import stat

import pytest

from pts.conditioning.wipc import plan_wipc, run_wipc
from pts.results import records
from pts.tools import commands
from pts.tools.fio import Fio, FioFailed, FioOutputError, Job

pytestmark = pytest.mark.needs("root", "fio", "losetup")


def test_wipc_writes_exactly_twice_the_active_range_in_separate_regions(make_loop, tmp_path):
    size = 64 << 20
    dev = make_loop(size)
    plan = plan_wipc(size, 128 << 10, 2, 4, 32)
    regions = [(j.offset, j.offset + j.size) for j in plan.jobs]
    assert regions[0][0] == 0 and regions[-1][1] == size
    assert all(a[1] == b[0] for a, b in zip(regions, regions[1:], strict=False))  # no overlap
    fio = Fio(log_file=tmp_path / "commands.log")
    res = run_wipc(fio, dev, plan, tmp_path)
    assert res.summary.write.io_bytes == plan.bytes_expected == 2 * size
    job = (tmp_path / "wipc.fio").read_text()
    assert job.count("rw=write") == 4 and job.count("loops=2") == 4
    assert json.loads((tmp_path / "wipc.cmd").read_text())[0].endswith("fio")
    assert "wipc.fio" in (tmp_path / "commands.log").read_text()


def test_wipc_plan_uneven_split_and_tail():
    plan = plan_wipc(10 * 131072 + 4096, 131072, 2, 4, 32)
    assert [j.size // 131072 for j in plan.jobs] == [3, 3, 2, 2]
    assert plan.bytes_expected == 2 * 10 * 131072 and plan.tail_bytes == 4096


def test_nonzero_exit_is_fio_failed_with_stderr(tmp_path):
    fio = Fio()
    with pytest.raises(FioFailed, match="(?s)exited with status 1.*failed parsing rw=bogus"):
        fio.run("/dev/null", [Job("a", "bogus", 4096, 1, runtime=1, size=4096)],
                tmp_path, "bad")
    assert (tmp_path / "bad.fio").exists() and (tmp_path / "bad.cmd").exists()


def fake_fio(tmp_path, body):
    path = tmp_path / "fio"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_garbage_output_is_fio_output_error(tmp_path):
    # A stand-in binary: the real fio never prints garbage on purpose.
    binary = fake_fio(tmp_path, 'case "$1" in --version) echo fio-x;; *) '
                                'for a; do case "$a" in '
                                '--output=*) echo garbage > "${a#--output=}";; '
                                'esac; done; echo oops >&2;; esac\n')
    fio = Fio(binary=binary)
    with pytest.raises(FioOutputError, match="printed no JSON.*fio stderr: oops"):
        fio.run("/dev/null", [Job("a", "read", 4096, 1, size=4096)], tmp_path, "g")


def test_fio_missing_names_the_package(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(commands.ToolMissing, match="apt-get install fio"):
        Fio()
    assert os.environ["PATH"] == "/nonexistent"


# A gate gone wrong (pts.tools.fio_gate's script replaced for this test): it releases a
# pipelined point at once and notes when, as the real one does, so that the points' I/O
# really overlaps on the device; what the suite must do then is the point of the test.
LEAKY_GATE = """#!/bin/bash
cd -- @GATES@ || exit 1
[ "$1" = wait ] && printf '%s\\n' "$EPOCHREALTIME" >> "gate-$2.started"
exit 0
"""


def test_a_real_overlap_is_measured_again_stonewalled(make_loop, tmp_path, monkeypatch):
    """The overlap fallback of pipelined rounds (pts.procedure.round_measure) on real fio
    output (tests/unit/test_round_overlap.py has its rules on constructed output): a round of
    two 1 s RND 4 KiB points on a loop device whose gate releases point 1 at once, so that it
    runs while point 0 still does. Its overlap, read from the real timing logs and the gate's
    note, is far over 1 % of a point; it is measured again, alone, stonewalled, and that is
    what the round returns; the round_mode record says so; point 0 stands as measured."""
    import shlex
    from types import SimpleNamespace

    from pts.config.spec import load_spec
    from pts.procedure.round_measure import RoundMeasure
    from pts.procedure.rounds import TestPoint
    from pts.procedure.runner import RoundTest
    from pts.results.ledger import Ledger, read_records
    from pts.testdefs import fields
    from pts.tools import fio_gate, fio_logs
    from pts.tools.fio import random_job

    monkeypatch.setattr(fio_gate, "gate_text", lambda gates, owner=None: LEAKY_GATE.replace(
        "@GATES@", shlex.quote(str(gates))))
    size = 16 << 20
    dev = make_loop(size)
    spec = load_spec("pts-e-1.1")
    folder = tmp_path / "run"
    folder.mkdir()
    said: list[str] = []
    run = SimpleNamespace(
        settings=SimpleNamespace(point_seconds=1, round_mode="pipelined", spec=spec),
        spec=spec, device=SimpleNamespace(path=dev), fio=Fio(log_file=tmp_path / "cmds.log"),
        resume=None, power=None, ledger=Ledger(folder / "ledger.jsonl"), write=said.append,
        raw_dir=lambda test, *parts: folder.joinpath("raw", test, *parts),
        relative=lambda p: str(p.relative_to(folder)))
    points = [TestPoint(i, spec.iops.rw_mixes[-1], 4096) for i in range(2)]
    decl = RoundTest(test="iops", title="IOPS", clause="x", parameters={},
                     points=tuple(points), tracking={}, value_key="iops",
                     job=lambda p: random_job(f"p{p.index:02d}", 0, 4096, 4, 1, 1, size),
                     fields=fields.basic, thread_count=1, queue_depth=4, wipc_block_size=None)
    measure = RoundMeasure(run, decl)
    found = measure(points, 1)
    run.ledger.close()

    piped = folder / "raw" / "iops" / "round-01"
    ends = [max(r[0] for f in fio_logs.thread_files(str(piped / "timing" / name), "lat")
                for r in fio_logs.read_rows(f, ddir=None)) for name in ("p00", "p01")]
    firsts = [min(r[0] for f in fio_logs.thread_files(str(piped / "timing" / name), "lat")
                  for r in fio_logs.read_rows(f, ddir=None)) for name in ("p00", "p01")]
    assert firsts[1] < ends[0] - 200, (firsts, ends)    # the logs: p01 ran while p00 did
    (mode,) = [r for r in read_records(folder / "ledger.jsonl")[0]
               if isinstance(r, records.RoundMode)]
    over = float(re.search(r"\(RND 4KiB 0/100 by (\d+) ms\)", mode.reason)[1])
    print(f"overlap measured on the device: {over:.0f} ms; {mode.reason}")
    assert over > 200 and mode.mode == "stonewalled" and mode.round == 1
    assert "measured again stonewalled after the round (raw: round-01-stonewalled)" in \
        mode.reason and "the next round goes on pipelined" in mode.reason
    assert any("measured again stonewalled" in line for line in said)
    assert measure.mode == "pipelined" and measure.fallbacks == 1
    # what the round gives: p00 from the pipelined run, p01 from its own stonewalled run
    assert found[0]["raw"] == "raw/iops/round-01/p00.json"
    assert found[1]["raw"] == "raw/iops/round-01-stonewalled/p01.json"
    again = json.loads((folder / found[1]["raw"]).read_text())
    assert [j["jobname"] for j in again["jobs"]] == ["p01"]
    assert found[1]["iops"] == pytest.approx(again["jobs"][0]["write"]["iops"], rel=1e-9)
    assert found[1]["iops"] > 0
    assert found[1]["overlap_ms"] is None           # alone in its fio run
    piped_p01 = json.loads((piped / "p01.json").read_text())["jobs"][0]["write"]["iops"]
    assert found[1]["iops"] != piped_p01            # not the overlapping measurement


# The barrier of a pipelined round's first point: one IO stream's section created LATE_MS
# after fio's start (`startdelay`: its set-up, and so its arrival at the barrier, comes that
# late, as a slow set-up on a loaded host does: 0.13-1.8 s seen), well after the earliest
# start (LEAD_MS after the launch), where the old fixed start time began the other streams.
# SPREAD_MS: how far apart streams released together may start and end (measured 0-39 ms
# at load 4-5, a CI run beside it: each released thread's wake-up, its gate script's exit
# and fio's return from it, which a loaded host's scheduler sets, not the barrier; 150 ms
# was 4x that); started apart, they are 700 ms apart and more (the early streams at the
# old fixed start, LEAD_MS after the launch; the late one after LATE_MS + its set-up).
# Whether the barrier held the release until the late stream was set up is judged by the
# release's own time (gate-0.started), which no load moves: `released >= LATE_MS` below.
LATE_MS, SPREAD_MS = 1200, 400


def test_an_atw_points_streams_start_together_however_late_one_is_set_up(make_loop, tmp_path):
    """The first point of a pipelined round, an ATW point of 3 IO streams (one fio job section
    each, in one fio flow: pts.workload.applied) on a loop device, one of them set up LATE_MS
    late: all 3 streams' I/O (their own timing logs) starts within SPREAD_MS, and ends
    within SPREAD_MS (each runs its 1 s runtime from its own start), after the late one's
    creation; the point's start is their release by the barrier (the gate's note, read by
    run_round), not its earliest start. With the fixed start time (fio_round before the
    barrier) or a barrier that lets the first thread through, the other two began about
    1 s earlier, starved by the flow until the late stream came, and ended 1 s earlier."""
    import dataclasses
    import tomllib

    from pts.tools import fio_logs
    from pts.tools.fio import timing_window_ms
    from pts.tools.fio_round import LEAD_MS, run_round
    from pts.workload import applied, atw
    from tests.support.rwsw import THREE_STREAMS, atw_text

    size = 64 << 20
    dev = make_loop(size)
    w = atw.parse(tomllib.loads(atw_text("three", THREE_STREAMS)), "three.toml", "ab" * 32)
    point = applied.sections(w, "p00", flow_id=1, runtime=1, ar_bytes=size, split="share",
                             flow_sleep_us=10)
    late = dataclasses.replace(point.sections[1], startdelay_ms=LATE_MS)
    point = dataclasses.replace(point, sections=(point.sections[0], late, point.sections[2]))
    out = tmp_path / "round"
    (found,) = run_round(Fio(log_file=tmp_path / "cmds.log"), dev, [point], out, "pipelined",
                         timeout=60)
    text = (out / "round.fio").read_text()
    t0_ms = int(re.search(r"^exec_prerun=\./pts-gate\.sh wait 0 61 3 (\d+)$", text, re.M)[1])
    assert text.count(f"wait 0 61 3 {t0_ms}\n") == 3 and f"startdelay={LATE_MS}ms" in text
    launch_ms, window = t0_ms - LEAD_MS, timing_window_ms(1)
    stamps = {job.name: [row[0] for f in fio_logs.thread_files(str(out / "timing" / job.name),
                                                               "lat")
                         for row in fio_logs.read_rows(f, ddir=None)]
              for job in point.sections}
    firsts = {n: min(s) - window - launch_ms for n, s in stamps.items()}    # ms after launch
    lasts = {n: max(s) - launch_ms for n, s in stamps.items()}
    released = found.start * 1000 - launch_ms
    print(f"after fio's launch (ms): first I/O {firsts}, last {lasts}; "
          f"released {released:.1f}")
    assert max(firsts.values()) - min(firsts.values()) <= SPREAD_MS, (firsts, lasts)
    assert max(lasts.values()) - min(lasts.values()) <= SPREAD_MS, (firsts, lasts)
    # released once the late section was created (fio's start + LATE_MS), not at t0; no
    # stream's I/O began before the release (log stamps: whole ms)
    assert released >= LATE_MS
    assert min(firsts.values()) >= released - window - 1, (firsts, released)
