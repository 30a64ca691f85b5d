"""Applying an Applied Test Workload with fio (pts.workload.applied) through the one round
mechanism (pts.tools.fio_round, pts.procedure.runner/rounds), on constructed fio output:
the job sections (flow weights, SEQ regions, the OIO split), a point of several sections
(one reporting group each, its JSON split per stream, its summary their sum), the achieved
shares and the declared warning, the WSAT stop rule of rwsw-wsat, the RWSW parameters."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

from pts.config.settings import make_settings
from pts.config.spec import load_spec
from pts.procedure import runner
from pts.procedure.progress import Progress
from pts.procedure.rounds import TestPoint, run_rounds
from pts.procedure.runner import RoundMeasure, RoundTest
from pts.results import parameters, records
from pts.results.ledger import Ledger, read_records
from pts.session.options import with_workload
from pts.testdefs.rwsw import common as rwsw_common
from pts.testdefs.rwsw import dirth as rwsw_dirth
from pts.testdefs.rwsw import replay as rwsw_replay
from pts.testdefs.rwsw import streams as rwsw_streams
from pts.testdefs.rwsw import wsat as rwsw_wsat
from pts.tools.fio import JobSet, job_file, random_job
from pts.tools.fio_round import run_round
from pts.workload import applied, atw
from tests.support import rwsw
from tests.support.rwsw import THREE_STREAMS, atw_text

T0 = 1_800_000_000_000
AR = 1 << 30
ATW = atw_text("three", THREE_STREAMS)


def three() -> atw.Workload:
    return atw.parse(tomllib.loads(ATW), "three.toml", "ab" * 32)


def two_seq() -> atw.Workload:
    """RND 4K R 40 %, SEQ 64K R 30 %, SEQ 128K W 30 %."""
    w = three()
    return atw.Workload("seq", (atw.Stream(w.streams[0].key, 40.0),
                                atw.Stream(atw.StreamKey("SEQ", "R", 65536), 30.0),
                                atw.Stream(w.streams[2].key, 30.0)), 2, 8)


def sections(w, split="share", **kw):
    return applied.sections(w, "p00", flow_id=1, runtime=1, ar_bytes=AR, split=split,
                            flow_sleep_us=10, **kw)


def test_one_section_per_stream_in_one_flow_weighted_by_share():
    js = sections(three())
    assert [(j.name, j.rw, j.block_size) for j in js.sections] == [
        ("p00.s0", "randread", 4096), ("p00.s1", "randwrite", 4096), ("p00.s2", "write", 131072)]
    assert [(j.flow_id, j.flow, j.flow_sleep_us) for j in js.sections] == [
        (1, 600, 10), (1, 300, 10), (1, 100, 10)]
    text = job_file("/dev/x", list(js.sections))
    assert text.count("flow_id=1\n") == 3 and "flow=600\n" in text and "flow_sleep=10\n" in text
    assert applied.weight(0.04) == 1 and applied.weight(100) == 1000   # fio's range 1..1000
    assert applied.weight(38.14) == 381                                 # 0.1 % resolution


def test_the_oio_is_spread_over_the_streams_by_share_or_given_to_each():
    # OIO 16: quotas 9.6, 4.8, 1.6 -> 9, 4, 1 + the largest remainders (4.8, then 9.6 before
    # 1.6: a tie, the first stream) -> 10, 5, 1: the nominal OIO is the ATW's 16, one thread
    # each (rounding each alone gave 10 + 5 + 2 = 17)
    js = sections(three())
    assert [(j.numjobs, j.iodepth) for j in js.sections] == [(1, 10), (1, 5), (1, 1)]
    assert applied.nominal_oio(js) == 16
    assert [(j.numjobs, j.iodepth) for j in sections(three(), "every-stream").sections] == [
        (2, 8)] * 3
    with pytest.raises(applied.ApplyError, match="oio_split 'half'"):
        applied.depths(three(), "half")


@pytest.mark.parametrize(("oio", "shares", "depths"), [
    (6, [50, 30, 20], [3, 2, 1]),          # 3 + 1.8 + 1.2: the 0.8 goes up
    (4, [80, 20], [3, 1]),                 # 3.2 + 0.8: the small stream keeps its one
    (8, [97, 1, 1, 1], [5, 1, 1, 1]),      # minimum 1 each overshoots: the big one gives back
    (2, [40, 30, 30], [1, 1, 1]),          # more streams than OIO: max(OIO, streams)
    # the digest's 9 streams: floors 12, 7, 4, 2, 1, 1, 1, 1, 1 = 30, then the two 0.66
    (32, [38.1, 22.7, 13.7, 8.3, 5.2, 4.3, 4.1, 2.2, 1.5], [12, 7, 4, 3, 2, 1, 1, 1, 1]),
    (1, [100], [1]),
])
def test_share_depths_sum_to_exactly_the_oio(oio, shares, depths):
    assert applied.share_depths(oio, shares) == depths
    assert sum(depths) == max(oio, len(shares))


def test_seq_streams_each_get_their_own_region():
    js = sections(two_seq())
    rnd, seq_r, seq_w = js.sections
    assert (rnd.offset, rnd.size) == (0, AR)                      # RND: the whole range
    assert (seq_r.offset, seq_r.size) == (0, AR // 2)
    assert (seq_w.offset, seq_w.size) == (AR // 2, AR // 2)       # not at 0 as well
    every = sections(two_seq(), "every-stream").sections[2]       # 2 threads: own slices
    assert (every.offset, every.size, every.offset_increment) == (AR // 2, AR // 4, AR // 4)
    with pytest.raises(applied.ApplyError, match="smaller than its transfer size"):
        applied.sections(two_seq(), "p", flow_id=1, runtime=1, ar_bytes=65536, split="share",
                         flow_sleep_us=10)


def test_seq_regions_start_on_aligned_offsets():
    # 64 MiB over 6 SEQ streams is 11184810 bytes each: not a sector multiple, which fio
    # refuses for O_DIRECT (EINVAL). Regions start on MiB boundaries.
    w = atw.Workload("six", tuple(atw.Stream(atw.StreamKey("SEQ", d, size), share)
                                  for d, size, share in (("R", 4096, 20.0), ("W", 4096, 20.0),
                                                         ("R", 8192, 20.0), ("W", 8192, 20.0),
                                                         ("R", 65536, 10.0),
                                                         ("W", 65536, 10.0))), 1, 6)
    js = applied.sections(w, "p00", flow_id=1, runtime=1, ar_bytes=64 << 20, split="share",
                          flow_sleep_us=10)
    assert [j.offset for j in js.sections] == [k * (10 << 20) for k in range(6)]
    assert all(j.offset + j.size <= 64 << 20 for j in js.sections)
    assert applied.seq_region(3 << 20, 4) == 786432           # under 1 MiB each: 4 KiB grain


def test_a_stream_alone_has_no_flow_and_the_whole_oio():
    w = three()
    (job,) = sections(w, streams=(w.streams[2],)).sections
    assert job.flow_id is None and "flow" not in job.options()
    assert (job.numjobs, job.iodepth, job.rw, job.offset_increment) == (2, 8, "write", AR // 2)


def entry(name: str, reads: int, writes: int) -> dict:
    def d(n):
        return {"total_ios": n, "iops": float(n), "io_bytes": n * 4096, "bw_bytes": n * 4096.0,
                "runtime": 1000, "lat_ns": {"mean": 2e5, "max": 1e6}}
    return {"jobname": name, "error": 0, "read": d(reads), "write": d(writes)}


class FakeFio:
    """Writes what fio would for a round: a JSON entry per job section (its reporting
    group) with `ios[name]` = (reads, writes), and each section's timing log."""

    def __init__(self, ios: dict[str, tuple[int, int]]):
        self.ios, self.texts = ios, []

    def run_document(self, filename, text, out_dir, name, timeout, histograms, cwd=None):
        text = text(T0) if callable(text) else text
        self.texts.append(text)
        names = [line[1:-1] for line in text.splitlines() if line.startswith("[p")]
        for k, section in enumerate(names):
            prefix = next(line.split("=", 1)[1] for line in text.split(f"[{section}]")[1]
                          .splitlines() if line.startswith("write_lat_log="))
            first = T0 + 1000 * int(section[1:3]) + 10 * k         # sections start apart
            Path(f"{prefix}_lat.1.log").write_text(
                "".join(f"{t}, 100000, 1, 0, 0\n" for t in range(first + 1, first + 991)))
        doc = {"fio version": "fio-3.33", "jobs": [entry(n, *self.ios[n]) for n in names]}
        path = out_dir / f"{name}.json"
        path.write_text(json.dumps(doc))
        return doc, path, T0 / 1000, T0 / 1000 + 3, ""


IOS = {"p00.s0": (600, 0), "p00.s1": (0, 300), "p00.s2": (0, 100), "p01": (0, 50)}


def test_a_point_of_sections_runs_as_one_point_split_per_stream_and_summed(tmp_path):
    fio = FakeFio(IOS)
    points = [sections(three()), random_job("p01", 0, 4096, 8, 1, 1, AR)]
    found = run_round(fio, "/dev/x", points, tmp_path, "pipelined", timeout=60)
    text = fio.texts[0]
    assert text.count("new_group=1") == 4                     # every section its own group
    head = text.split("[p01]")[0]
    # one start: a barrier for the 3 sections' threads, at T0 + LEAD_MS at the earliest
    assert head.count("exec_prerun=./pts-gate.sh wait 0 61 3 1800000000500\n") == 3
    one = found[0]
    assert one.name == "p00" and [n for n, _ in one.sections] == ["p00.s0", "p00.s1", "p00.s2"]
    assert one.summary.iops == 1000.0 == sum(s.iops for _, s in one.sections)
    assert (one.summary.read.total_ios, one.summary.write.total_ios) == (600, 400)
    doc = json.loads((tmp_path / "p00.json").read_text())
    assert [j["jobname"] for j in doc["jobs"]] == ["p00.s0", "p00.s1", "p00.s2"]
    # the point's window spans its sections': from s0's first I/O to s2's last
    assert one.start == pytest.approx((T0 + 1) / 1000 - 0.001, abs=0.002)
    assert one.end == pytest.approx((T0 + 20 + 990) / 1000)
    assert found[1].summary.iops == 50.0 and found[1].sections[0][0] == "p01"


def test_stonewalled_waits_on_the_first_section_of_a_point_only(tmp_path):
    fio = FakeFio(IOS)
    points = [random_job("p01", 0, 4096, 8, 1, 1, AR), sections(three())]
    run_round(fio, "/dev/x", points, tmp_path, "stonewalled", timeout=60)
    text = fio.texts[0]
    assert text.count("stonewall=1") == 1
    assert "stonewall=1" in text.split("[p00.s0]")[1].split("[p00.s1]")[0]


def test_per_point_runs_a_point_of_sections_as_one_fio_process(tmp_path):
    fio = FakeFio(IOS)
    run_round(fio, "/dev/x", [sections(three())], tmp_path, "per-point", timeout=60)
    assert len(fio.texts) == 1 and fio.texts[0].count("[p00.s") == 3


def result(ios: dict):
    return run_round(FakeFio(ios), "/dev/x", [sections(three())], Path(ios["dir"]),
                     "per-point", timeout=60)[0]


def test_achieved_shares_beside_their_target_and_the_tolerance(tmp_path):
    w = three()
    good = result(IOS | {"dir": tmp_path / "a"})
    f = applied.achieved(w.streams, good, 2.0, w.oio, 17)
    assert (f["oio_target"], f["oio_nominal"]) == (16, 17)
    assert [(r["stream"], r["target_pct"], r["achieved_pct"]) for r in f["streams"]] == [
        ("RND 4K R", 60.0, 60.0), ("RND 4K W", 30.0, 30.0), ("SEQ 128K W", 10.0, 10.0)]
    assert f["shares_within_tolerance"] and f["mix_warning"] is None
    assert f["oio_achieved"] == pytest.approx(1000 * 2e5 / 1e9)      # Little: IOPS x latency
    off = result({"p00.s0": (560, 0), "p00.s1": (0, 300), "p00.s2": (0, 140),
                  "dir": tmp_path / "b"})
    f = applied.achieved(w.streams, off, 2.0, w.oio)
    assert not f["shares_within_tolerance"] and f["share_miss_pts"] == pytest.approx(4.0)
    assert "RND 4K R 56.0 % (target 60 %)" in f["mix_warning"]
    assert "SEQ 128K W 14.0 % (target 10 %)" in f["mix_warning"]
    assert "RND 4K W" not in f["mix_warning"]


def test_a_point_outside_the_tolerance_is_said_and_recorded_as_a_deviation(tmp_path):
    w = three()
    spec = load_spec("pts-e-1.1")
    folder = tmp_path / "run"
    folder.mkdir()
    lines: list[str] = []
    run = SimpleNamespace(
        settings=SimpleNamespace(point_seconds=1, round_mode="per-point", spec=spec),
        spec=spec, device=SimpleNamespace(path="/dev/x"), resume=None, power=None,
        fio=FakeFio({"p00.s0": (560, 0), "p00.s1": (0, 300), "p00.s2": (0, 140)}),
        ledger=Ledger(folder / "ledger.jsonl"), write=lines.append,
        raw_dir=lambda test, *parts: folder.joinpath("raw", test, *parts),
        relative=lambda p: str(Path(p).relative_to(folder)))
    run.deviation = lambda test, text: run.ledger.append(records.Deviation(test=test,
                                                                           text=text))
    point = TestPoint(0, spec.iops.rw_mixes[0], 0, access="ATW", workload="3 streams")
    decl = RoundTest(test="rwsw-wsat", title="t", clause="c", parameters={}, points=(point,),
                     tracking={}, value_key="iops", job=lambda p: sections(w),
                     fields=rwsw_wsat.measured, thread_count=2, queue_depth=8,
                     wipc_block_size=None,
                     point_fields=lambda p, r: applied.achieved(w.streams, r, 2.0, w.oio))
    found = RoundMeasure(run, decl)([point], 1)
    assert found[0]["shares_within_tolerance"] is False
    assert found[0]["write_bytes"] == 440 * 4096 and found[0]["ios"] == 1000
    assert any("WARNING round 1, ATW 3 streams" in line and "RND 4K R 56.0 %" in line
               for line in lines)
    run.ledger.close()
    (dev,), _ = read_records(folder / "ledger.jsonl")
    assert isinstance(dev, records.Deviation) and "RND 4K R 56.0 %" in dev.text


class Rounds:
    """run_rounds on constant tracking values (steady from the window's round on) and a
    stop rule at `stop_at`."""

    def __init__(self, tmp_path: Path):
        self.ledger = Ledger(tmp_path / "ledger.jsonl")
        self.rule = load_spec("pts-e-1.1").steady_state
        self.point = TestPoint(0, load_spec("pts-e-1.1").iops.rw_mixes[0], 4096)

    def __call__(self, stop_at: int | None, until_steady: bool, max_rounds: int = 12):
        return run_rounds(
            test="rwsw-wsat", points=[self.point], tracking={"ATW IOPS": self.point},
            measure=lambda pts, r: {0: {"iops": 1000.0, "write_bytes": 10}}, rule=self.rule,
            max_rounds=max_rounds, ledger=self.ledger,
            progress=Progress(lambda s: None, "t", 1, 1, 5, max_rounds),
            stop=(lambda r, found: f"stop at {r}" if r == stop_at else None),
            until_steady=until_steady)


def test_the_stop_rule_ends_the_rounds_complete_with_steady_state_reported(tmp_path):
    rounds = Rounds(tmp_path)
    out = rounds(8, until_steady=False)
    assert (out.status, out.rounds, out.steady_round) == ("complete", 8, 5)
    assert out.message.startswith("stop at 8; steady state first met at round 5")
    out = rounds(3, until_steady=False)
    assert (out.status, out.rounds, out.steady_round) == ("complete", 3, None)
    out = rounds(8, until_steady=True)           # steady state ends it first
    assert (out.status, out.rounds) == ("steady", 5)
    out = rounds(None, until_steady=False, max_rounds=6)
    assert (out.status, out.rounds) == ("steady", 6)
    assert "stopped at max rounds (6) before its stop rule" in out.message


def test_stop_rule_drive_fills_or_time():
    stop = rwsw_wsat.Stop(capacity=1000, fills=2.0, hours=1 / 3600 * 10, seconds=1,
                          written=500)
    assert stop(1, {0: {"write_bytes": 1000}}) is None               # 1.5 fills
    assert "2.00 drive fills written (2,000 bytes, rule 2)" in stop(2, {0: {"write_bytes":
                                                                           500}})
    late = rwsw_wsat.Stop(capacity=10**9, fills=4.0, hours=10 / 3600, seconds=2)
    assert late(4, {0: {"write_bytes": 1}}) is None
    assert "time limit" in late(5, {0: {"write_bytes": 1}})


def settings_with(tmp_path: Path, text: str = ATW, **kw):
    return rwsw.settings_with(tmp_path, text, spec="pts-e-1.1", **kw)


DEVICE = SimpleNamespace(capacity_bytes=AR, logical_sector=512, path="/dev/x")


@pytest.mark.parametrize("module", [rwsw_wsat, rwsw_streams])
def test_the_parameters_are_the_rwsw_record_and_name_the_atw(tmp_path, module):
    s = settings_with(tmp_path)
    decl = module.declare(s, DEVICE)
    typed = parameters.typed(decl.test, decl.parameters)
    assert type(typed) is parameters.RwswParameters and typed.as_dict() == decl.parameters
    assert typed.atw.sha256 == s.workload.sha256 and typed.atw.oio == 16
    assert typed.atw.path == str(tmp_path / "w.toml")
    assert decl.point_seconds == 1 and decl.wipc_block_size is None


def test_rwsw_wsat_round_limit_is_its_time_limit(tmp_path):
    s = settings_with(tmp_path, wsat_hours=0.01)          # 36 s of 1 s rounds
    assert rwsw_wsat.declare(s, DEVICE).max_rounds == 5   # --max-rounds 5 < 25 (declared)
    s = make_settings(load_spec("pts-e-1.1"), device="/dev/x", destructive=True,
                      point_seconds=1, max_rounds=None, purge="trim", reports_dir=tmp_path,
                      wsat_hours=0.01)
    assert rwsw_wsat.declare(with_workload(s, str(tmp_path / "w.toml")),
                             DEVICE).max_rounds == 36


@pytest.mark.parametrize("bad, says", [
    (ATW.replace("share_pct = 10.0", "share_pct = 20.0"), "[[stream]] share_pct: the shares "
     "sum to 110, not 100 (within 0.1): normalise them (format: docs/workload.md)"),
    (ATW.replace("queue_depth = 8", "queue_depth = 8\nspeed = 3"), "workload.speed: unknown "
     "key (known: format, name, queue_depth, thread_count, version) (format: "
     "docs/workload.md)"),
    (ATW[:40], "not valid TOML (")])
def test_a_bad_workload_file_is_refused_naming_file_key_problem_and_fix(tmp_path, bad, says):
    """Every refusal whole: tests/unit/test_atw_refusals.py."""
    with pytest.raises(atw.WorkloadError) as exc:
        settings_with(tmp_path, bad)
    assert str(exc.value).startswith(f"{tmp_path / 'w.toml'}: {says}"), str(exc.value)


def test_no_workload_no_rwsw_test(tmp_path):
    s = make_settings(load_spec("pts-e-1.1"), device="/dev/x", destructive=True,
                      point_seconds=1, max_rounds=5, purge="trim", reports_dir=tmp_path)
    assert rwsw_common.plan_lines(s, DEVICE, rwsw_wsat.declare) == [
        f"skipped: {rwsw_common.NO_WORKLOAD}"]
    assert isinstance(sections(three()), JobSet)


def test_streams_a_device_cannot_issue_are_refused_before_anything_runs(tmp_path):
    # RocksDB reads 4.5 KiB blocks (tests/data/rwsw/): not whole 4 KiB sectors, so every
    # RWSW test on a 4Kn drive refuses the ATW when it is declared, before purge or WIPC.
    text = atw_text("rocks", (("RND", "R", "4KiB", 60.0), ("RND", "R", "4608B", 40.0)))
    s = settings_with(tmp_path, text)
    four_k = SimpleNamespace(capacity_bytes=AR, logical_sector=4096, path="/dev/x")
    for module in (rwsw_wsat, rwsw_streams, rwsw_replay, rwsw_dirth):
        with pytest.raises(runner.TestDefinitionError) as exc:
            module.declare(s, four_k)
        assert str(exc.value) == (
            "ATW rocks: RND 4.5K R (4608 bytes) not a whole number of this device's logical "
            "sectors (4096 bytes): the device cannot do such I/O. Nothing was written. Use a "
            "device formatted with smaller sectors, or edit the workload file: round these "
            "sizes up to a multiple of 4096 bytes, or drop those streams and normalise the "
            "shares again (docs/workload.md)"), module
    assert rwsw_wsat.declare(s, DEVICE).test == "rwsw-wsat"        # 512-byte sectors: fine
    with pytest.raises(runner.TestDefinitionError, match="4608 bytes"):
        rwsw_replay.declare_precondition(s, four_k)
