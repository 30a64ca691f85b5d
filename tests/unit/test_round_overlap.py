"""Pipelined rounds (pts.tools.fio_round + pts.procedure.runner.RoundMeasure) on constructed
fio output: each point's result is split out of the round's JSON, its real start and end come
from its timing log; each point gets its predecessor's drain as a gap, and a round in which a
point overlaps the previous one by more than 1 % of a point is measured again (pipelined with
the gaps of its drains, then stonewalled), recorded as round_mode records, and never lands in
the ledger; only rounds that keep overlapping make the whole test stonewalled."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from pts.config.spec import load_spec
from pts.procedure.round_measure import (
    FALLBACK_ROUNDS,
    LEARNING,
    PIPELINE_GAP_MS,
    WHOLE_TEST,
    RoundMeasure,
)
from pts.procedure.rounds import TestPoint
from pts.procedure.runner import RoundTest
from pts.results import records
from pts.results.ledger import Ledger, read_records
from pts.testdefs import fields
from pts.tools.fio import START_AT_SCRIPT, random_job
from pts.tools.fio_round import LEAD_MS, PointResult, run_round, starts_ms

T0 = 1_800_000_000_000          # ms, Unix epoch


def job_entry(name: str, iops: float) -> dict:
    d = {"total_ios": int(iops), "iops": iops, "io_bytes": int(iops) * 4096,
         "bw_bytes": iops * 4096, "runtime": 1000, "lat_ns": {"mean": 1e5, "max": 2e6}}
    return {"jobname": name, "error": 0, "read": {"total_ios": 0}, "write": d}


class FakeFio:
    """Writes what fio would: the JSON document and each point's timing log. `starts`:
    each point's first I/O in ms after T0 per mode; each point lasts 1000 ms."""

    def __init__(self, starts: dict[str, list[int]], lengths: list[int] | None = None):
        self.starts, self.calls, self.texts = starts, [], []
        self.lengths = lengths or [1000] * 3
        self.t0 = T0            # the launch of the next fio run (Unix ms)

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
        resume=None, ledger=Ledger(folder / "ledger.jsonl"), write=lines.append, lines=lines,
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
    found = run_round(fio, "/dev/fake", jobs, out, "pipelined", 1020, timeout=60)
    assert [r.summary.iops for r in found] == [1000.0, 2000.0, 3000.0]
    assert [r.overlap_ms for r in found] == [None, pytest.approx(-20, abs=0.01),
                                        pytest.approx(-20, abs=0.01)]
    assert found[1].start == pytest.approx((T0 + 1020) / 1000)
    single = json.loads((out / "p01.json").read_text())
    assert [j["jobname"] for j in single["jobs"]] == ["p01"]
    text = fio.texts[0]
    assert text.count("new_group=1") == 3
    # point 1 is created LEAD_MS before its start and waits for T0 + LEAD_MS + 1 slot exactly
    assert "startdelay=520ms" in text and \
        f"exec_prerun=./{START_AT_SCRIPT} {T0 + LEAD_MS + 1020}\n" in text
    assert (out / START_AT_SCRIPT).stat().st_mode & 0o111


class DrainingFio(FakeFio):
    """fio on a drive whose points drain: each run's `drains` (ms, one per point pNN) is how
    long a point's last completion comes after its 1 s runtime; a pipelined point starts at
    its exact start time (its exec_prerun), a stonewalled one 300 ms after the last
    completion of the one before. One list of drains per fio run, the last one repeated."""

    def __init__(self, drains: list[list[int]], clock: bool = False):
        super().__init__({})
        self.drains, self.clock = drains, clock    # clock: each run launches after the last

    def run_document(self, filename, text, out_dir, name, timeout, histograms, cwd=None):
        text = text(self.t0) if callable(text) else text
        drains = self.drains[min(len(self.calls), len(self.drains) - 1)]
        names = [line[1:-1] for line in text.splitlines() if line.startswith("[p")]
        self.lengths = [1000 + drains[int(name[1:])] for name in names]     # by point
        at = [int(line.rsplit(" ", 1)[1]) - self.t0 for line in text.splitlines()
              if line.startswith("exec_prerun=")]
        if not at:          # stonewalled: one after the other
            for k in range(len(self.lengths)):
                at.append(at[k - 1] + self.lengths[k - 1] + 300 if k else 0)
        self.starts = {"pipelined": at, "stonewalled": at}
        found = super().run_document(filename, text, out_dir, name, timeout, histograms, cwd)
        if self.clock:      # fio exits after the last completion, the next starts 300 ms on
            self.t0 += max(a + n for a, n in zip(at, self.lengths, strict=False)) + 300
        return found


def learned(measure: RoundMeasure) -> RoundMeasure:
    """As after a first round (stonewalled, LEARNING) in which no point drained: the
    overlap rules of the pipelined rounds after it, on their own."""
    measure.seen = {p.index: [0.0] for p in POINTS}
    return measure


def ledger_modes(run) -> list:
    run.ledger.close()
    return [r for r in read_records(run.folder / "ledger.jsonl")[0]
            if isinstance(r, records.RoundMode)]


def test_a_round_that_overlaps_is_measured_again_pipelined_with_its_drains_as_gaps(tmp_path):
    # p01 drains 300 ms after its runtime: p02, 10 ms after it, overlaps it by 290 ms.
    fio = DrainingFio([[0, 300, 0]])
    run = fake_run(tmp_path, fio)
    measure = learned(RoundMeasure(run, declaration(POINTS)))
    found = measure(POINTS, 1)
    assert fio.calls == ["pipelined", "pipelined"] and measure.mode == "pipelined"
    # the gap before p02: 10 ms + 1.5 x 300 ms, in the second run's schedule
    assert f"exec_prerun=./{START_AT_SCRIPT} {T0 + LEAD_MS + 2010 + 460}\n" in fio.texts[1]
    assert measure.gaps_ms(POINTS) == [10, 10, 460]
    assert found[2]["overlap_ms"] == pytest.approx(-160, abs=0.01)
    assert (run.folder / "raw/iops/round-01-overlapped/p02.json").exists()
    measure(POINTS, 2)                       # the learned gap holds: one run, no record
    assert fio.calls == ["pipelined"] * 3
    (mode,) = ledger_modes(run)
    assert (mode.round, mode.mode) == (1, "pipelined")
    assert "0/100 by 290 ms" in mode.reason and "widest: 460 ms" in mode.reason
    assert any("measured again pipelined" in line for line in run.lines)


def test_a_round_that_overlaps_again_is_measured_stonewalled_and_the_next_goes_on(tmp_path):
    # p01's drain grows from 300 ms to 1000 ms between the two pipelined runs.
    fio = DrainingFio([[0, 300, 0], [0, 1000, 0], [0, 20, 0], [0, 20, 0]])
    run = fake_run(tmp_path, fio)
    measure = learned(RoundMeasure(run, declaration(POINTS)))
    found = measure(POINTS, 1)
    assert fio.calls == ["pipelined", "pipelined", "stonewalled"]
    # only p02, which overlapped again, is measured again, alone, stonewalled
    assert fio.texts[2].count("[p") == 1 and "[p02]" in fio.texts[2]
    assert found[2]["raw"] == "raw/iops/round-01-stonewalled/p02.json"
    assert found[2]["overlap_ms"] is None                  # the first of its fio run
    assert found[1]["raw"] == "raw/iops/round-01/p01.json"  # the second pipelined run's
    assert found[1]["overlap_ms"] == pytest.approx(-10, abs=0.01)
    assert measure.mode == "pipelined" and measure.fallbacks == 1
    measure(POINTS, 2)
    assert fio.calls[3:] == ["pipelined"] and measure.fallbacks == 0
    first, second = ledger_modes(run)
    assert (first.mode, second.mode) == ("pipelined", "stonewalled")
    assert "0/100 by 540 ms" in second.reason     # 1000 - (10 + 450)
    assert "the next round goes on pipelined" in second.reason
    assert (run.folder / "raw/iops/round-01-overlapped/p02.json").exists()


def test_rounds_that_keep_overlapping_make_the_test_stonewalled(tmp_path):
    # every pipelined run drains more than the last one learned
    # (each pipelined run's drain beyond the gap learned, 1.5 x the last + 10 ms, by more than
    # 10 ms, and under SEGMENT_COST_MS / 0.5: the round stays one fio run; the third run of a
    # round is p02 alone, stonewalled)
    fio = DrainingFio([[0, d, 0] for pair in ((40, 90), (170, 300), (500, 800))
                       for d in (*pair, 0)])
    run = fake_run(tmp_path, fio)
    measure = learned(RoundMeasure(run, declaration(POINTS)))
    for round_no in range(1, FALLBACK_ROUNDS + 1):
        measure(POINTS, round_no)
    assert measure.mode == "stonewalled"
    assert fio.calls == ["pipelined", "pipelined", "stonewalled"] * FALLBACK_ROUNDS
    measure(POINTS, FALLBACK_ROUNDS + 1)
    assert fio.calls[-1] == "stonewalled" and len(fio.calls) == 3 * FALLBACK_ROUNDS + 1
    assert fio.texts[-1].count("[p") == 3           # the whole round, stonewalled
    modes = ledger_modes(run)
    assert modes[-1].mode == "stonewalled" and WHOLE_TEST in modes[-1].reason
    assert sum(WHOLE_TEST in m.reason for m in modes) == 1


def test_gaps_are_learned_from_each_points_predecessors_drain():
    measure = RoundMeasure.__new__(RoundMeasure)
    measure.gaps, measure.seen, measure.drains = {}, {}, {}
    results = [PointResult(f"p{k}", SimpleNamespace(), Path("x"), 100.0 + k,
                           101.0 + k + d / 1000, None, (), 101.0 + k)
               for k, d in enumerate([40, -5, 0])]
    measure.learn(POINTS, results)
    assert measure.gaps_ms(POINTS) == [PIPELINE_GAP_MS, PIPELINE_GAP_MS + 60, PIPELINE_GAP_MS]
    assert results[0].drain_ms == pytest.approx(40)


def test_a_resumed_test_goes_on_pipelined_unless_it_gave_the_pipeline_up(tmp_path):
    run = fake_run(tmp_path, DrainingFio([[0, 0, 0]]))
    one_round = records.RoundMode(test="iops", round=2, mode="stonewalled",
                                  reason="round 2: ... the next round goes on pipelined")
    run.resume = SimpleNamespace(records=[one_round])
    assert RoundMeasure(run, declaration(POINTS)).mode == "pipelined"
    whole = records.RoundMode(test="iops", round=4, mode="stonewalled",
                              reason=f"round 4: ...; {WHOLE_TEST}")
    run.resume = SimpleNamespace(records=[one_round, whole])
    assert RoundMeasure(run, declaration(POINTS)).mode == "stonewalled"


def test_a_schedule_of_gaps_starts_each_point_after_the_one_before_and_its_gap():
    jobs = [random_job(f"p{k:02d}", 0, 4096, 32, 1, 1, 1 << 30) for k in range(3)]
    assert starts_ms(jobs, gaps_ms=[999, 10, 460]) == [0, 1010, 2470]
    assert starts_ms(jobs, slot_ms=1010) == [0, 1010, 2020]
    with pytest.raises(ValueError, match="2 gaps for 3 points"):
        starts_ms(jobs, gaps_ms=[10, 10])


def test_a_point_whose_io_waited_behind_the_previous_ones_overlapped_it(tmp_path):
    """Seen on an emulated SSD under load (2 s points): RND 1024 KiB writes at QD32 took
    6.1 s of a 2 s slot; the next points' first completions came only after, 10 ms apart, so
    their logged I/O windows showed a gap, and their 0.01 s of I/O gave 28.8 IOPS for the
    tracking variable. Their I/O ran from their start time: an overlap, measured again."""
    fio = FakeFio({}, lengths=[1000, 2000, 10])
    run = fake_run(tmp_path, fio)
    measure = learned(RoundMeasure(run, declaration(POINTS)))
    planned = [LEAD_MS + k * measure.slot_ms for k in range(3)]  # each point's start time
    fio.starts = {"pipelined": [planned[0], planned[1], planned[1] + 2010],
                  "stonewalled": [0, 1300, 4600]}     # one after the other
    found = measure(POINTS, 1)
    assert fio.calls == ["pipelined", "pipelined"]
    run.ledger.close()
    (again,), _ = read_records(run.folder / "ledger.jsonl")
    overlap = planned[1] + 2000 - planned[2]                     # p01's end - p02's start
    assert f"by {overlap} ms" in again.reason and again.mode == "pipelined"
    # measured again with p01's 1000 ms drain x 1.5 + 10 ms before p02
    assert f"exec_prerun=./{START_AT_SCRIPT} {T0 + planned[1] + 1000 + 1510}\n" in fio.texts[1]
    assert found[2]["overlap_ms"] < 10


def test_a_gap_keeps_the_round_pipelined(tmp_path):
    fio = FakeFio({"pipelined": [0, 1020, 2040]})
    run = fake_run(tmp_path, fio)
    measure = learned(RoundMeasure(run, declaration(POINTS)))
    measure(POINTS, 1)
    assert fio.calls == ["pipelined"] and measure.mode == "pipelined"


def test_an_overlap_under_one_percent_is_tolerated(tmp_path):
    fio = FakeFio({"pipelined": [0, 1020, 2015]})          # 5 ms: 0.5 % of the point
    run = fake_run(tmp_path, fio)
    measure = learned(RoundMeasure(run, declaration(POINTS)))
    assert measure(POINTS, 1)[2]["overlap_ms"] == pytest.approx(5, abs=0.01)
    assert fio.calls == ["pipelined"]


def test_decl_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        declaration(POINTS).test = "x"


def test_the_start_script_waits_for_its_time_and_never_fails(tmp_path):
    """The exec_prerun script (dash, as fio's system() runs it): a time in the past returns
    at once with status 0; a time 300 ms ahead is waited for."""
    import subprocess
    import time

    from pts.tools.fio import START_AT_TEXT
    script = tmp_path / START_AT_SCRIPT
    script.write_text(START_AT_TEXT)
    script.chmod(0o755)
    past = subprocess.run(["sh", "-c", f"./{START_AT_SCRIPT} 1000"], cwd=tmp_path)
    assert past.returncode == 0
    target = int(time.time() * 1000) + 300
    subprocess.run(["sh", "-c", f"./{START_AT_SCRIPT} {target}"], cwd=tmp_path, check=True)
    assert time.time() * 1000 >= target


def test_the_first_round_runs_stonewalled_and_its_drains_give_the_gaps(tmp_path):
    """Nothing is known of the drains before a test's first round (or the first after
    --resume): it runs stonewalled, recorded and said; the next round runs pipelined with
    the gap p01's drain needs before p02."""
    fio = DrainingFio([[0, 300, 0]])
    run = fake_run(tmp_path, fio)
    measure = RoundMeasure(run, declaration(POINTS))
    measure(POINTS, 1)
    assert fio.calls == ["stonewalled"] and measure.mode == "pipelined"
    assert measure.gaps_ms(POINTS) == [10, 10, 460]
    found = measure(POINTS, 2)
    assert fio.calls == ["stonewalled", "pipelined"]
    assert f"exec_prerun=./{START_AT_SCRIPT} {T0 + LEAD_MS + 2010 + 460}\n" in fio.texts[1]
    assert found[2]["overlap_ms"] == pytest.approx(-160, abs=0.01)
    (mode,) = ledger_modes(run)
    assert (mode.round, mode.mode) == (1, "stonewalled") and LEARNING in mode.reason
    assert any(LEARNING in line for line in run.lines)


def test_a_point_draining_longer_than_a_fio_start_ends_its_fio_run(tmp_path):
    """p00 drains 2000 ms: a gap of 10 + 1.5 x 2000 ms would idle 1010 ms, more than a new
    fio run costs (SEGMENT_COST_MS): p01 and p02 run as a second fio run, after the first
    has finished (its own files, round-2.*); p01's overlap is its gap to p00's end."""
    fio = DrainingFio([[2000, 0, 0]], clock=True)
    run = fake_run(tmp_path, fio)
    measure = RoundMeasure(run, declaration(POINTS))
    measure(POINTS, 1)                                         # learning, stonewalled
    assert measure.segments(POINTS, measure.gaps_ms(POINTS), "pipelined") == [(0, 1), (1, 3)]
    assert measure.segments(POINTS, [10, 10, 10], "pipelined") == [(0, 3)]
    assert measure.segments(POINTS, measure.gaps_ms(POINTS), "stonewalled") == [(0, 3)]
    found = measure(POINTS, 2)
    assert fio.calls == ["stonewalled", "pipelined", "pipelined"]
    assert fio.texts[1].count("[p") == 1 and fio.texts[2].count("[p") == 2
    out = run.folder / "raw/iops/round-02"
    assert (out / "round.json").exists() and (out / "round-2.json").exists()
    # the second run launched 300 ms after p00's last completion; p01 starts LEAD_MS later
    assert found[1]["overlap_ms"] == pytest.approx(-(300 + LEAD_MS), abs=0.01)
    assert found[2]["overlap_ms"] == pytest.approx(-10, abs=0.01)
    assert not ledger_modes(run)[1:]                # nothing measured again


def test_a_few_overlapping_points_alone_are_measured_again(tmp_path):
    """One point of eight overlaps (its predecessor drained beyond its margin): only it is
    measured again, stonewalled after the round; the round is not run again."""
    points = [TestPoint(i, load_spec("pts-e-1.1").iops.rw_mixes[-1], 4096) for i in range(8)]
    fio = DrainingFio([[0] * 8, [0, 0, 0, 300, 0, 0, 0, 0]], clock=True)
    run = fake_run(tmp_path, fio)
    measure = RoundMeasure(run, declaration(points))
    measure(points, 1)                                         # learning: nothing drains
    found = measure(points, 2)
    assert fio.calls == ["stonewalled", "pipelined", "stonewalled"]
    assert fio.texts[2].count("[p") == 1 and "[p04]" in fio.texts[2]
    assert found[4]["raw"] == "raw/iops/round-02-stonewalled/p04.json"
    assert found[3]["raw"] == "raw/iops/round-02/p03.json"
    assert measure.mode == "pipelined" and measure.fallbacks == 0
    (_, mode) = ledger_modes(run)
    assert mode.mode == "stonewalled" and "by 290 ms" in mode.reason
    assert measure.gaps_ms(points)[4] == 10 + 450            # learned for the next round
