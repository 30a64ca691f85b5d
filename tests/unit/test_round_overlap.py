"""Pipelined rounds (pts.tools.fio_round + pts.procedure.runner.RoundMeasure) on constructed
fio output: each point's result is split out of the round's JSON, its real start and end come
from its timing log, and a point that overlaps the previous one by more than 1 % of a point
makes the test fall back to stonewalled points — the overlapping round is measured again,
recorded as a round_mode record, and never lands in the ledger."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from pts.config.spec import load_spec
from pts.procedure.rounds import TestPoint
from pts.procedure.runner import RoundMeasure, RoundTest
from pts.results import records
from pts.results.ledger import Ledger, read_records
from pts.testdefs import fields
from pts.tools.fio import START_AT_SCRIPT, random_job
from pts.tools.fio_round import LEAD_MS, run_round

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

    def run_document(self, filename, text, out_dir, name, timeout, histograms, cwd=None):
        text = text(T0) if callable(text) else text
        mode = "stonewalled" if "stonewall=1" in text else "pipelined"
        self.calls.append(mode)
        self.texts.append(text)
        names = [line[1:-1] for line in text.splitlines() if line.startswith("[p")]
        for name_, start, length in zip(names, self.starts[mode], self.lengths,
                                        strict=False):
            prefix = next(line.split("=", 1)[1] for line in text.split(f"[{name_}]")[1]
                          .splitlines() if line.startswith("write_lat_log="))
            stamps = range(T0 + start + 1, T0 + start + length + 1)     # 1 ms windows
            Path(f"{prefix}_lat.1.log").write_text(
                "".join(f"{t}, 100000, 1, 0, 0\n" for t in stamps))
        doc = {"fio version": "fio-3.33",
               "jobs": [job_entry(n, 1000.0 * (k + 1)) for k, n in enumerate(names)]}
        path = out_dir / f"{name}.json"
        path.write_text(json.dumps(doc))
        return doc, path, T0 / 1000, T0 / 1000 + 4, ""


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


def test_an_overlapping_round_is_measured_again_stonewalled(tmp_path):
    # p02 starts 30 ms before p01 has finished: 3 % of a 1 s point.
    fio = FakeFio({"pipelined": [0, 1020, 1990], "stonewalled": [0, 1300, 2600]})
    run = fake_run(tmp_path, fio)
    measure = RoundMeasure(run, declaration(POINTS))
    found = measure(POINTS, 1)
    assert fio.calls == ["pipelined", "stonewalled"] and measure.mode == "stonewalled"
    assert found[2]["overlap_ms"] == pytest.approx(-300, abs=0.01)     # the stonewalled measurement
    run.ledger.close()
    recs, _ = read_records(run.folder / "ledger.jsonl")
    (mode,) = recs
    assert isinstance(mode, records.RoundMode) and mode.mode == "stonewalled"
    assert "overlapped the previous point by 30 ms" in mode.reason
    assert (run.folder / "raw/iops/round-01-overlapped/p02.json").exists()
    assert measure(POINTS, 2) and fio.calls[-1] == "stonewalled"    # later rounds too


def test_a_point_whose_io_waited_behind_the_previous_ones_overlapped_it(tmp_path):
    """Seen on an emulated SSD under load (2 s points): RND 1024 KiB writes at QD32 took
    6.1 s of a 2 s slot; the next points' first completions came only after, 10 ms apart, so
    their logged I/O windows showed a gap, and their 0.01 s of I/O gave 28.8 IOPS for the
    tracking variable. Their I/O ran from their start time: an overlap, measured again."""
    fio = FakeFio({}, lengths=[1000, 3000, 10])
    run = fake_run(tmp_path, fio)
    measure = RoundMeasure(run, declaration(POINTS))
    planned = [LEAD_MS + k * measure.slot_ms for k in range(3)]  # each point's start time
    fio.starts = {"pipelined": [planned[0], planned[1], planned[1] + 3010],
                  "stonewalled": [0, 1300, 4600]}     # one after the other
    found = measure(POINTS, 1)
    assert fio.calls == ["pipelined", "stonewalled"] and measure.mode == "stonewalled"
    run.ledger.close()
    (mode,), _ = read_records(run.folder / "ledger.jsonl")
    overlap = planned[1] + 3000 - planned[2]                     # p01's end - p02's start
    assert f"overlapped the previous point by {overlap} ms" in mode.reason
    assert found[2]["overlap_ms"] == pytest.approx(-300, abs=0.01)


def test_a_gap_keeps_the_round_pipelined(tmp_path):
    fio = FakeFio({"pipelined": [0, 1020, 2040]})
    run = fake_run(tmp_path, fio)
    measure = RoundMeasure(run, declaration(POINTS))
    measure(POINTS, 1)
    assert fio.calls == ["pipelined"] and measure.mode == "pipelined"


def test_an_overlap_under_one_percent_is_tolerated(tmp_path):
    fio = FakeFio({"pipelined": [0, 1020, 2015]})          # 5 ms: 0.5 % of the point
    run = fake_run(tmp_path, fio)
    measure = RoundMeasure(run, declaration(POINTS))
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
