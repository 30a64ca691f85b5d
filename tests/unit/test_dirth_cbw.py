"""DIRTH / CBW without a device: spec tables, options, operating-point selection, the
confidence levels' resolvability, the CBW fio job, the before-round hook of the one round
loop, and the --dry-run duration estimate at spec settings."""

from __future__ import annotations

import re

import pytest

from pts.config.settings import SettingsError, make_settings
from pts.config.spec import SpecError, available_specs, load_spec
from pts.device.identity import BlockDevice, Identity
from pts.procedure.plan import hms
from pts.procedure.progress import Progress
from pts.procedure.rounds import run_rounds
from pts.testdefs import dirth_cbw_jobs, dirth_cbw_plan
from pts.testdefs.dirth_cbw_select import MAX, MID, MIN, GridPoint, select
from pts.testdefs.qos_levels import needed_ios, percentile_rows
from pts.tools import histogram
from pts.tools.fio import job_file
from tests.support.ptsrun import spec_variant


def settings(**kw):
    base = dict(device=None, destructive=False, point_seconds=None, max_rounds=None,
                purge="trim", reports_dir="r")
    return make_settings(load_spec(kw.pop("spec", "pts-2.0.2-enterprise")), **(base | kw))


def device(sector: int = 512, capacity: int = 3_840_000_000_000) -> BlockDevice:
    return BlockDevice("/dev/nvme9n1", "/dev/nvme9n1", "nvme9n1", (259, 99), capacity, sector,
                       sector, "nvme", False, Identity("M", "S", "F", "nvme id-ctrl"))


# --- spec -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", available_specs())
def test_every_shipped_spec_has_dirth_and_cbw(name):
    spec = load_spec(name)
    for q in (spec.dirth, spec.cbw):
        assert q.thread_counts == q.queue_depths == (32, 16, 8, 6, 4, 2, 1)
        assert (q.tracking_thread_count, q.tracking_queue_depth) == (32, 32)
        assert (q.prewrite_seconds, q.operating_prewrite_seconds, q.capture_seconds) == \
            (300, 3600, 600)
        assert q.art_ceiling_us == 5000 and q.percentiles == (99.9, 99.99, 99.999, 99.9999)
    assert str(spec.dirth.rw_mix) == "65/35" and spec.dirth.workload == "8KiB"
    assert str(spec.cbw.rw_mix) == "40/60" and spec.cbw.mixed_sizes
    assert [(s.block_size, s.pct) for s in spec.cbw.block_size_mix] == [
        (512, 4), (1024, 1), (1536, 1), (2048, 1), (2560, 1), (3072, 1), (3584, 1),
        (4096, 67), (8192, 10), (16384, 7), (32768, 3), (65536, 3)]
    assert [(z.io_pct, z.lba_pct) for z in spec.cbw.access_zones] == [(50, 5), (30, 15),
                                                                      (20, 80)]


@pytest.mark.parametrize("old,new,needle", [
    ('{ block_size = "64KiB", pct = 3 },', '{ block_size = "64KiB", pct = 4 },',
     "[cbw.block_size_mix]: the shares add up to 101 %"),
    ("{ io_pct = 20, lba_pct = 80 }", "{ io_pct = 20, lba_pct = 70 }",
     "[cbw.access_zones]: the zones' lba_pct add up to 90"),
    ("art_ceiling_us = 5000                   # MaxIOPS", "art_ceiling_us = 0 #",
     "[dirth.art_ceiling_us]: 0.0 is out of range"),
    ("thread_counts = [32, 16, 8, 6, 4, 2, 1] # outer", "thread_counts = [32, 16] #",
     "[dirth.thread_counts]: the grid must hold TC1/QD1"),
    ("tracking_thread_count = 32              # SS", "tracking_thread_count = 12 #",
     "[dirth.tracking_thread_count]: TC12/QD32 is not in"),
    ("[cbw]", "[cbx]", "unknown table [cbx]"),
])
def test_dirth_cbw_spec_errors_name_file_and_key(tmp_path, old, new, needle):
    path = spec_variant(tmp_path, {old: new}, count=1)
    with pytest.raises(SpecError) as err:
        load_spec(str(path))
    assert str(path) in str(err.value) and needle in str(err.value)


# --- options --------------------------------------------------------------------------

def test_reduced_grid_is_kept_in_spec_order_and_declared():
    s = settings(dirth_thread_counts="1,2,32", dirth_queue_depths="4,32,1")
    assert s.dirth_thread_counts == (32, 2, 1) and s.dirth_queue_depths == (32, 4, 1)
    assert "DIRTH/CBW demand-variation grid reduced to thread counts 32, 2, 1 (spec: 32, 16, " \
           "8, 6, 4, 2, 1)." in s.deviations()
    assert s.as_dict()["dirth_queue_depths"] == ["32", "4", "1"]
    assert settings().dirth_thread_counts is None
    assert not [d for d in settings().deviations() if "DIRTH" in d]


@pytest.mark.parametrize("option,value,needle", [
    ("dirth_thread_counts", "16,1", "must keep 32 (the tracking point TC32/QD32)"),
    ("dirth_queue_depths", "32,4", "must keep 1 (MinIOPS = TC1/QD1)"),
    ("dirth_queue_depths", "32,5,1", "5 is not one of the spec's queue depths"),
    ("dirth_thread_counts", "32,x,1", "'x' is not a whole number"),
])
def test_bad_grid_options_say_what_to_keep(option, value, needle):
    with pytest.raises(SettingsError) as err:
        settings(**{option: value})
    assert needle in str(err.value) and "--" + option.replace("_", "-") in str(err.value)


def test_time_scale_gives_at_least_one_second():
    s = settings(time_scale=0.001)
    assert (s.scaled(3600), s.scaled(300), s.scaled(600)) == (4, 1, 1)


# --- operating points -----------------------------------------------------------------

def gp(tc, qd, iops, art):
    return GridPoint(tc, qd, iops, art)


def test_operating_points_on_constructed_data():
    pts = [gp(32, 32, 9000, 9000), gp(32, 4, 8000, 4000), gp(4, 4, 6000, 900),
           gp(2, 1, 3000, 300), gp(1, 1, 1000, 100)]
    got = {c.name: c for c in select(pts, 5000)}
    assert (got[MAX].point.thread_count, got[MAX].point.queue_depth) == (32, 4)  # 9000: ART over
    assert (got[MIN].point.thread_count, got[MIN].point.queue_depth) == (1, 1)
    # (8000 + 1000) / 2 = 4500: 3000 is 1500 away, 6000 is 1500 away -> the smaller TOIO
    assert (got[MID].point.thread_count, got[MID].point.queue_depth) == (2, 1)
    assert "4,500" in got[MID].rule


def test_equal_iops_goes_to_the_least_demand():
    pts = [gp(8, 4, 5000, 700), gp(4, 8, 5000, 700), gp(2, 16, 5000, 700), gp(1, 1, 900, 90)]
    best = {c.name: c for c in select(pts, 5000)}[MAX].point
    assert (best.thread_count, best.queue_depth) == (2, 16)   # TOIO 32 each: smaller TC
    assert select([gp(32, 32, 5000, 4999.9), gp(1, 1, 5000, 1)], 5000)[0].point.toio == 1


def test_no_point_under_the_ceiling_is_declared_not_a_crash():
    chosen = select([gp(32, 32, 9000, 90000), gp(1, 1, 100, 6000)], 5000)
    assert [c.name for c in chosen] == [MAX, MID, MIN]
    assert chosen[0].point is None and chosen[1].point is None
    assert "no point has an ART below the ceiling of 5,000 µs" in chosen[0].rule
    assert "TC1/QD1, 6,000.0 µs" in chosen[0].rule
    assert chosen[2].point.iops == 100


def test_no_tc1_qd1_is_an_error_naming_it():
    with pytest.raises(ValueError, match="TC1/QD1"):
        select([gp(32, 32, 1, 1)], 5000)


def test_confidence_levels_name_the_ios_behind_them():
    assert [needed_ios(p) for p in (99.9, 99.99, 99.999, 99.9999)] == \
        [1000, 10_000, 100_000, 1_000_000]
    hist = {1000: 2990, 50_000: 9, 90_000: 1}      # 3,000 I/Os
    rows = percentile_rows(hist, (99.9, 99.99, 99.9999), 88_000, histogram.percentile)
    assert [r["resolvable"] for r in rows] == [True, False, False]
    assert rows[0]["us"] == 50.0 and rows[0]["ios"] == 3000
    assert rows[1]["us"] is None and rows[2]["ios_needed"] == 1_000_000
    big = {1000: 999_998, 7000: 2}
    assert percentile_rows(big, (99.9999,), 6500, histogram.percentile)[0]["us"] == 6.5


# --- workload and jobs ----------------------------------------------------------------

def test_cbw_job_file_has_bssplit_and_zoned_distribution():
    s = settings()
    decl = dirth_cbw_jobs.declare_demand(s, device(), "cbw")
    text = job_file("/dev/nvme9n1", [decl.job(decl.points[0])])
    assert "bssplit=512/4:1k/1:1536/1:2k/1:2560/1:3k/1:3584/1:4k/67:8k/10:16k/7:32k/3:" \
           "64k/3" in text
    assert "random_distribution=zoned:50/5:30/15:20/80" in text
    assert "rwmixread=40" in text and "numjobs=32" in text and "iodepth=32" in text
    assert decl.points[0].label == "RND JESD219-mix 40/60 TC32/QD32"
    dirth = dirth_cbw_jobs.declare_demand(s, device(), "dirth")
    text = job_file("/dev/x", [dirth.job(dirth.points[-1])])
    assert "bssplit" not in text and "random_distribution" not in text
    assert "bs=8192" in text and "rwmixread=65" in text and "numjobs=1\n" in text


def test_cbw_on_a_4kn_drive_leaves_sub_4k_sizes_out_and_says_so():
    w = dirth_cbw_jobs.workload(load_spec().cbw, 4096)
    assert w.bssplit == "4k/75:8k/11:16k/8:32k/3:64k/3"
    assert sum(s.pct for s in w.shares) == 100
    text = w.deviation("cbw")
    assert "0.5KiB:4%" in text and "3.5KiB:1%" in text and "N/A on this device" in text
    assert dirth_cbw_jobs.workload(load_spec().cbw, 512).deviation("cbw") is None


def test_grid_and_tracking_follow_the_reduced_grid():
    s = settings(dirth_thread_counts="32,2,1", dirth_queue_depths="32,4,1")
    decl = dirth_cbw_jobs.declare_demand(s, device(), "dirth")
    assert [(p.thread_count, p.queue_depth) for p in decl.points] == [
        (tc, qd) for tc in (32, 2, 1) for qd in (32, 4, 1)]
    assert list(decl.tracking) == ["RND 8KiB 65/35 TC32/QD32"]
    pre = dirth_cbw_jobs.declare_precondition(s, device(), "dirth")
    assert [str(p.rw_mix) for p in pre.points] == ["0/100"] and pre.wipc_block_size is None


def test_before_round_runs_before_each_rounds_points(tmp_path):
    from pts.results.ledger import Ledger
    s = settings()
    decl = dirth_cbw_jobs.declare_precondition(s, device(), "dirth")
    calls = []

    def measure(points, round_no):
        calls.append(("measure", round_no))
        return {p.index: {"iops": 100.0} for p in points}
    run_rounds(test="t", points=list(decl.points), measure=measure, tracking=decl.tracking,
               rule=s.spec.steady_state, max_rounds=6, ledger=Ledger(tmp_path / "l.jsonl"),
               progress=Progress(lambda _: None, "t", 1, 1, 5, 6),
               before_round=lambda r: calls.append(("before", r)))
    assert calls == [(k, r) for r in range(1, 6) for k in ("before", "measure")]


# --- --dry-run estimate ---------------------------------------------------------------

def test_full_spec_estimate_for_a_384_tb_drive():
    """DIRTH/CBW are timed, not sized: no WIPC, so a 3.84 TB drive at 3 GB/s takes what
    any drive takes (the purge aside): 10.5 h when both phases are steady at round 5,
    38.5 h at 25 rounds each."""
    e = dirth_cbw_plan.estimate(settings(), "dirth")
    print(f"DIRTH full-spec estimate (3.84 TB, any speed): best {hms(e.best_s)}, worst "
          f"{hms(e.worst_s)}")
    assert hms(e.precondition_round_s) == "0:30:01" and hms(e.demand_round_s) == "0:54:01"
    assert hms(e.operating_points_s) == "3:30:02"
    # 5 min pre-write + 49 x (60 s + the pipelined rounds' 10 ms gap) + fio start-ups
    assert hms(e.best_s) == "10:30:10" and hms(e.worst_s) == "38:30:44"
    assert dirth_cbw_plan.estimate(settings(), "cbw") == e


def test_measured_fields_are_documented():
    from pts.tools.fio import parse_output, summarize
    from tests.support.records_doc import DOC, RECORDED, TIMING, top_level_names
    row = next(line for line in DOC.read_text(encoding="utf-8").splitlines()
               if line.startswith("| DIRTH/CBW | the IOPS fields"))
    iops = next(line for line in DOC.read_text(encoding="utf-8").splitlines()
                if line.startswith("| IOPS | "))
    documented = top_level_names(row) | top_level_names(iops) | set(
        re.findall(r"`(lat_99_[0-9_]+_us)`", row))     # top_level_names: no digits
    s = summarize(parse_output(RECORDED.read_text()))
    written = set(dirth_cbw_jobs.point_fields(s, load_spec().dirth.percentiles)) | TIMING | {
        "thread_count", "queue_depth"}
    assert documented == written


def test_fio_jobs_align_random_offsets_as_the_spec_declares():
    """[cbw] block_align (a reading: 4 KiB as fio's examples/jesd219.fio) is fio's
    blockalign in every CBW job; [dirth] "bs" leaves fio's default (issue 21 §2)."""
    from pts.config.spec import RwMix, load_spec
    from pts.testdefs import dirth_cbw_jobs
    spec = load_spec("pts-2.0.2-enterprise")
    cbw = dirth_cbw_jobs.workload(spec.cbw, 512)
    assert cbw.block_align == 4096
    opts = dirth_cbw_jobs.job(cbw, "p", RwMix(40), 32, 32, 1, 1 << 20).options()
    assert opts["blockalign"] == "4096" and opts["bssplit"].startswith("512/4:")
    dirth = dirth_cbw_jobs.workload(spec.dirth, 512)
    assert "blockalign" not in dirth_cbw_jobs.job(dirth, "p", RwMix(65), 1, 1, 1, 1 << 20).options()


# --- readings chosen in the spec file (issue 21 §2) -----------------------------------

def test_midiops_candidates_under_the_ceiling_or_all():
    """Target (8000 + 1000) / 2 = 4500: TC16/QD32 has exactly 4500 IOPS but an ART over the
    5 ms ceiling; under the ceiling the nearest is TC4/QD4 (6000)."""
    pts = [gp(32, 32, 9000, 9000), gp(16, 32, 4500, 6000), gp(32, 4, 8000, 4000),
           gp(4, 4, 6000, 900), gp(1, 1, 1000, 100)]
    under = {c.name: c for c in select(pts, 5000)}[MID]
    assert (under.point.thread_count, under.point.queue_depth) == (4, 4)
    assert "among the points with ART below 5,000 µs" in under.rule
    every = {c.name: c for c in select(pts, 5000, "all")}[MID]
    assert (every.point.thread_count, every.point.queue_depth) == (16, 32)
    assert "among all points" in every.rule
    with pytest.raises(ValueError, match="'under_ceiling' or 'all'"):
        select(pts, 5000, "some")


def test_readings_are_in_the_spec_and_in_the_stored_parameters(tmp_path):
    s = settings()
    assert (s.spec.dirth.precondition_sample, s.spec.dirth.midiops_candidates) == \
        ("first", "under_ceiling")
    pre = dirth_cbw_jobs.declare_precondition(s, device(), "dirth", after_points=lambda r: None)
    assert pre.parameters["precondition_sample"] == "first"
    assert pre.after_points is not None and pre.before_round is None
    assert "the first 60 s measured" in pre.measures
    assert dirth_cbw_jobs.declare_demand(s, device(), "cbw").parameters["midiops_candidates"] == \
        "under_ceiling"
    path = spec_variant(tmp_path, {'midiops_candidates = "under_ceiling"':
                         'midiops_candidates = "all"'}, count=1)
    s2 = settings(spec=str(path))
    assert dirth_cbw_jobs.declare_demand(s2, device(), "dirth").parameters["midiops_candidates"] \
        == "all"


@pytest.mark.parametrize("old,new,needle", [
    ('precondition_sample = "first"', 'precondition_sample = "middle"',
     '[dirth.precondition_sample]: \'middle\' is out of range (one of "first", "last")'),
    ('midiops_candidates = "under_ceiling"', 'midiops_candidates = 3',
     "[dirth.midiops_candidates]: 3 must be str"),
])
def test_reading_keys_name_the_choices(tmp_path, old, new, needle):
    with pytest.raises(SpecError) as err:
        load_spec(str(spec_variant(tmp_path, {old: new}, count=1)))
    assert needle in str(err.value)


@pytest.mark.parametrize("sample, order", [
    ("first", ["measure", "rest"]), ("last", ["rest", "measure"])])
def test_round_sample_puts_the_rest_of_the_round_before_or_after_the_point(tmp_path, sample,
                                                                           order):
    from pts.procedure import preconditioning
    from pts.results.ledger import Ledger
    calls = []
    hooks = preconditioning.hooks(sample, lambda r: calls.append(("rest", r)))

    def measure(points, round_no):
        calls.append(("measure", round_no))
        return {p.index: {"iops": 100.0} for p in points}
    decl = dirth_cbw_jobs.declare_precondition(settings(), device(), "dirth", **hooks)
    run_rounds(test="t", points=list(decl.points), measure=measure, tracking=decl.tracking,
               rule=settings().spec.steady_state, max_rounds=6,
               ledger=Ledger(tmp_path / "l.jsonl"),
               progress=Progress(lambda _: None, "t", 1, 1, 5, 6),
               before_round=decl.before_round, after_round=decl.after_points)
    assert calls == [(k, r) for r in range(1, 6) for k in order]
    assert preconditioning.hooks(sample, None) == {}
