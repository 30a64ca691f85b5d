"""rwsw-replay (pts.testdefs.rwsw_replay) as declarations, without a device: the ATW's capture
steps -> one point each (its shares in the ATW's stream order, exactly its OIO: TC 1 x QD OIO
spread over the streams by share, the nominal recorded; its fio sections, without fio flow
unless [rwsw_replay] hold = "shares"), the time scale and the 1 s minimum, the refusal of an
ATW without steps, the preconditioning, the per-step fields beside the capture's in-situ
figures, one pass ending "complete", the --dry-run plan and the typed parameters."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest

from pts.config.spec import load_spec
from pts.procedure import plan, runner
from pts.procedure.progress import Progress
from pts.procedure.rounds import run_rounds
from pts.results import parameters
from pts.results.ledger import Ledger
from pts.testdefs import registry
from pts.testdefs.rwsw import common as rwsw_common
from pts.testdefs.rwsw import replay as rwsw_replay
from pts.tools.fio import summarize
from pts.tools.fio_round import PointResult
from tests.support.rwsw import THREE_STREAMS, atw_text, settings_with, with_rwsw

AR = 1 << 30
DEVICE = SimpleNamespace(capacity_bytes=AR, logical_sector=512, path="/dev/x")
HEAD = atw_text("three", THREE_STREAMS)
STEPS = """
[[step]]
start_s = 0.0
seconds = {s}
oio = 4
iops = 1000.0
rt_mean_ms = 0.5
shares = {{ "RND 4K W" = 20.0, "RND 4K R" = 80.0 }}

[[step]]
start_s = {s}
seconds = {s}
oio = 6
shares = {{ "RND 4K R" = 50.0, "RND 4K W" = 30.0, "SEQ 128K W" = 20.0 }}

[[step]]
start_s = 7.0
seconds = {last}
oio = 1
iops = 300.0
rt_mean_ms = 0.2
shares = {{ "SEQ 128K W" = 100.0 }}
"""


def replay(tmp_path, seconds=2.0, last=2.0, hold="oio", **kw):
    """The three-step ATW; hold "oio" (one section per stream) unless told: the iolog hold
    (the spec's default) is tests/unit/test_rwsw_iolog.py's."""
    return settings_with(tmp_path, HEAD + STEPS.format(s=seconds, last=last),
                         rwsw={"rwsw_replay": {"hold": hold}}, **kw)


def test_each_capture_step_is_one_point_at_its_shares_and_oio(tmp_path):
    decl = rwsw_replay.declare(replay(tmp_path), DEVICE)
    assert [p.label for p in decl.points] == ["ATW step 1 80/20 TC1/QD4",
                                              "ATW step 2 50/50 TC1/QD6",
                                              "ATW step 3 0/100 TC1/QD1"]
    jobs = [decl.job(p).sections for p in decl.points]
    # step 1: its two streams in the ATW's order (not the file's), OIO 4 spread by share,
    # no fio flow ([rwsw_replay] hold "oio": every depth kept full)
    assert [(j.name, j.rw, j.iodepth, j.flow, j.flow_id, j.runtime) for j in jobs[0]] == [
        ("p00.s0", "randread", 3, None, None, 2), ("p00.s1", "randwrite", 1, None, None, 2)]
    # step 2: OIO 6 spread 50/30/20 -> 3, 2, 1: nominal 6 (TC4 x QD2 ran 8 before)
    assert [(j.rw, j.numjobs, j.iodepth, j.flow) for j in jobs[1]] == [
        ("randread", 1, 3, None), ("randwrite", 1, 2, None), ("write", 1, 1, None)]
    assert decl.parameters["hold"] == "oio"
    assert [st["oio_nominal"] for st in decl.parameters["steps"]] == [4, 6, 1]
    assert decl.parameters["oio_split"] == "share"
    assert jobs[1][2].offset == 0 and jobs[1][2].size == AR
    # step 3: one stream alone, no flow, its whole OIO
    (alone,) = jobs[2]
    assert (alone.rw, alone.block_size, alone.numjobs, alone.iodepth, alone.flow_id) == (
        "write", 131072, 1, 1, None)
    assert decl.round_mode == "stonewalled" and decl.max_rounds == 1
    assert decl.until_steady is False and decl.wipc_block_size is None
    assert decl.point_seconds == 2


def test_a_steps_oio_is_held_exactly_whatever_the_oio_split(tmp_path):
    """[rwsw_fio] oio_split "every-stream" gives the preconditioning TC x QD per stream;
    the replay's steps still ask fio for exactly their OIO, spread by share."""
    s = with_rwsw(replay(tmp_path), {"rwsw_fio": {"oio_split": "every-stream"}})
    pre = rwsw_replay.declare_precondition(s, DEVICE)
    assert [(j.numjobs, j.iodepth) for j in pre.job(pre.points[0]).sections] == [(2, 8)] * 3
    decl = rwsw_replay.declare(s, DEVICE)
    assert [sum(j.numjobs * j.iodepth for j in decl.job(p).sections)
            for p in decl.points] == [4, 6, 1]
    assert [st["oio_nominal"] for st in decl.parameters["steps"]] == [4, 6, 1]


def test_hold_shares_applies_the_steps_with_fio_flow(tmp_path):
    s = with_rwsw(replay(tmp_path), {"rwsw_replay": {"hold": "shares"}})
    decl = rwsw_replay.declare(s, DEVICE)
    assert [(j.iodepth, j.flow, j.flow_id) for j in decl.job(decl.points[1]).sections] == [
        (3, 500, 2), (2, 300, 2), (1, 200, 2)]
    assert decl.parameters["hold"] == "shares"


def test_time_scale_compresses_every_step_and_is_declared(tmp_path):
    s = replay(tmp_path, seconds=4.0, last=2.0, time_scale=0.5)
    decl = rwsw_replay.declare(s, DEVICE)
    assert [decl.job(p).sections[0].runtime for p in decl.points] == [2, 2, 1]
    assert [st["replay_seconds"] for st in decl.parameters["steps"]] == [2, 2, 1]
    assert decl.parameters["time_scale"] == 0.5
    (text,) = rwsw_replay.deviations(s)
    assert "compressed by 0.5" in text and "--time-scale" in text
    assert rwsw_replay.deviations(replay(tmp_path)) == []


def test_a_step_shorter_than_one_second_once_scaled_runs_one_second_declared(tmp_path):
    s = replay(tmp_path, seconds=3.0, last=0.4, time_scale=0.5)
    assert [rwsw_replay.step_seconds(s, st) for st in s.workload.steps] == [2, 2, 1]
    assert rwsw_replay.lengthened(s) == [3]
    assert "steps 3 are shorter than 1 s once scaled and ran 1 s" in \
        rwsw_replay.deviations(s)[1]


def test_an_atw_without_steps_is_refused_naming_the_fix(tmp_path):
    s = settings_with(tmp_path, HEAD)
    for declare in (rwsw_replay.declare, rwsw_replay.declare_precondition):
        with pytest.raises(runner.TestDefinitionError) as err:
            declare(s, DEVICE)
        assert "has no [[step]] tables" in str(err.value)
        assert "python -m pts workload CAPTURE -o FILE" in str(err.value)


def test_the_preconditioning_is_the_cumulative_atw_to_steady_state(tmp_path):
    pre = rwsw_replay.declare_precondition(replay(tmp_path), DEVICE)
    assert pre.test == "rwsw-replay-preconditioning" and pre.until_steady
    assert [(j.rw, j.iodepth, j.flow) for j in pre.job(pre.points[0]).sections] == [
        ("randread", 10, 600), ("randwrite", 5, 300), ("write", 1, 100)]
    assert pre.point_seconds == 1                 # --point-seconds 1: the round length
    assert pre.parameters["precondition"] == "atw-steady-state"


def doc(*ios) -> dict:
    def d(n):
        return {"total_ios": n, "iops": float(n), "io_bytes": n * 4096, "bw_bytes": n * 4096.0,
                "runtime": 1000, "lat_ns": {"mean": 2e5, "max": 1e6}}
    return {"jobs": [{"jobname": f"p00.s{k}", "error": 0, "read": d(r), "write": d(w)}
                     for k, (r, w) in enumerate(ios)]}


def test_a_step_records_its_shares_oio_and_the_captures_in_situ_figures(tmp_path):
    decl = rwsw_replay.declare(replay(tmp_path), DEVICE)
    whole = doc((790, 0), (0, 210))
    result = PointResult("p00", summarize(whole), Path("p00.json"), 0.0, 1.0, None,
                         tuple((j["jobname"], summarize({"jobs": [j]})) for j in whole["jobs"]))
    f = decl.point_fields(decl.points[0], result)
    assert [(r["stream"], r["target_pct"], r["achieved_pct"]) for r in f["streams"]] == [
        ("RND 4K R", 80.0, 79.0), ("RND 4K W", 20.0, 21.0)]
    assert (f["oio_target"], f["oio_nominal"], f["step"], f["step_seconds"],
            f["replay_seconds"]) == (4, 4, 1, 2.0, 2)
    assert (f["insitu_iops"], f["insitu_rt_mean_ms"]) == (1000.0, 0.5)
    assert f["shares_within_tolerance"] is True
    f3 = decl.point_fields(decl.points[2], PointResult(
        "p02", summarize(doc((0, 5))), Path("p02.json"), 0, 1, None,
        (("p02.s0", summarize(doc((0, 5)))),)))
    assert (f3["insitu_iops"], f3["oio_target"], f3["step"]) == (300.0, 1, 3)


def test_one_pass_ends_complete_without_steady_state(tmp_path):
    decl = rwsw_replay.declare(replay(tmp_path), DEVICE)
    rule = load_spec("pts-2.0.2-enterprise").steady_state
    seen = []
    out = run_rounds(
        test=decl.test, points=list(decl.points), tracking=decl.tracking,
        measure=lambda pts, r: seen.append(r) or {p.index: {"iops": 10.0 * p.index}
                                                  for p in pts},
        rule=rule, max_rounds=decl.max_rounds, ledger=Ledger(tmp_path / "ledger.jsonl"),
        progress=Progress(lambda s: None, "t", 3, 2, 5, 1), stop=decl.stop,
        until_steady=decl.until_steady)
    assert seen == [1]
    assert (out.status, out.rounds, out.steady_round) == ("complete", 1, None)
    assert out.message.startswith("replay complete: all 3 capture steps ran (6 s of capture "
                                  "in 6 s)")


def test_the_plan_shows_every_steps_sections_and_the_deviation(tmp_path, monkeypatch):
    monkeypatch.setattr(plan, "setup_lines", lambda *a: ["(set-up lines)"])
    s = replay(tmp_path, seconds=4.0, last=2.0, time_scale=0.5)
    lines = registry.get("rwsw-replay").plan(s, DEVICE, None)
    text = "\n".join(lines)
    assert lines[0].startswith("RWSW Replay-Native Preconditioning test")
    assert "replay (rwsw-replay): one pass, 3 capture steps in order, stonewalled, time " \
           "scale 0.5" in text
    for section in ("[p00.s1]", "[p01.s2]", "[p02.s0]"):
        assert "    " + section in lines
    assert "DEVIATION: rwsw-replay: the capture's steps compressed by 0.5" in text
    assert "replay duration: 5 s of steps" in text
    assert registry.get("rwsw-replay").plan(dataclasses.replace(s, workload=None), DEVICE,
                                            None) == [f"skipped: {rwsw_common.NO_WORKLOAD}"]


def test_the_parameters_are_the_rwsw_record(tmp_path):
    s = replay(tmp_path)
    for decl in (rwsw_replay.declare_precondition(s, DEVICE), rwsw_replay.declare(s, DEVICE)):
        assert parameters.typed(decl.test, decl.parameters).as_dict() == decl.parameters
    steps = rwsw_replay.declare(s, DEVICE).parameters["steps"]
    assert steps[0] == {"step": 1, "start_s": 0.0, "seconds": 2.0, "replay_seconds": 2,
                        "oio": 4, "thread_count": 1, "queue_depth": 4, "oio_nominal": 4,
                        "shares": {"RND 4K R": 80.0, "RND 4K W": 20.0}, "iolog": None,
                        "insitu_iops": 1000.0, "insitu_rt_mean_ms": 0.5}
    keys = {r["key"] for r in s.spec.readings_for("rwsw-replay")}
    assert {"rwsw_replay.time_scale", "rwsw_replay.loop", "rwsw_replay.precondition"} <= keys


def test_the_option_help_names_the_rwsw_tests_and_the_replay_steps():
    from _pytest.config.argparsing import Parser

    from pts.session import options
    parser = Parser(_ispytest=True)
    options.add(parser)
    helps = {o.names()[0]: " ".join(o.attrs()["help"].split())
             for o in parser.getgroup("snia-pts").options}
    workload = helps["--workload"]
    for test in ("rwsw-wsat", "rwsw-streams", "rwsw-replay", "rwsw-dirth"):
        assert test in workload
    assert "rwsw-replay needs the file's [[step]] tables" in workload
    assert "--resume refuses a file whose sha256 is not the run's" in workload
    assert "rwsw-replay's capture steps: each step's seconds x [rwsw_replay] time_scale x F, " \
           "at least min_step_seconds (1 s)" in helps["--time-scale"]
