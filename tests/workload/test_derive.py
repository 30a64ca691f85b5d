"""The ATW derived from a characterisation: top N renormalised, OIO rules, replay steps,
provenance."""

from __future__ import annotations

import dataclasses

import pytest

from pts.config.spec import load_rwsw
from pts.workload import atw
from pts.workload.atw import StreamKey
from pts.workload.characterise import characterise
from pts.workload.derive import derive, normalise, oio_split
from tests.support.synthetic_capture import R, W, rows, write


def test_normalise_sums_to_100_in_hundredths():
    got = normalise({"a": 1, "b": 1, "c": 1})
    assert sorted(got.values()) == [33.33, 33.33, 33.34]
    assert sum(got.values()) == pytest.approx(100, abs=1e-9)
    tiny = normalise({"big": 10**7, "small": 1})
    assert tiny["small"] == 0.01 and sum(tiny.values()) == pytest.approx(100)


@pytest.mark.parametrize("oio, split", [(1, (1, 1)), (3, (3, 1)), (8, (4, 2)), (9, (4, 3)),
                                        (0, (1, 1))])
def test_oio_split(oio, split):
    assert oio_split(oio) == split


@pytest.fixture()
def ch(tmp_path):
    # 6 RND 4K reads, 3 RND 8K writes, 1 RND 64K write; I/Os 0-9 ms each 2 ms long, one
    # every ms: 2 outstanding most of the time; step 5 ms
    ios = [(i, i + 2, 10_000 * i, 4096, R) for i in range(6)]
    ios += [(6 + i, 8 + i, 10_000 * (6 + i), 8192, W) for i in range(3)] + \
        [(9, 11, 500_000, 65536, W)]
    return characterise(write(tmp_path / "d.capture", rows(*ios), seconds=0.011,
                              host="db1", lost_events=0), step_s=0.005)


def test_top_n_renormalised_and_coverage(ch):
    w = derive(ch, top_n=2)
    assert [(s.key.label, s.share_pct) for s in w.streams] == [("RND 4K R", 66.67),
                                                              ("RND 8K W", 33.33)]
    assert w.provenance["coverage_pct"] == pytest.approx(90.0)
    assert w.provenance["top_n"] == 9 and w.provenance["streams"] == 2


def test_coverage_minimum_adds_streams_past_n(ch):
    spec = load_rwsw()
    sections = dict(spec.sections)
    sections["rwsw_atw"] = dict(spec["rwsw_atw"], coverage_min_pct=95.0)
    w = derive(ch, spec=dataclasses.replace(spec, sections=sections), top_n=1)
    assert [s.key.label for s in w.streams] == ["RND 4K R", "RND 8K W", "RND 64K W"]


def test_oio_rules(ch):
    fixed = derive(ch, oio_rule="fixed")
    assert (fixed.thread_count, fixed.queue_depth) == (4, 32)     # the spec's T4Q32
    assert ch.oio_median == 2
    median = derive(ch, oio_rule="median")
    assert (median.thread_count, median.queue_depth) == (2, 1)
    wide = dataclasses.replace(ch, oio_median=2, oio_p95=9)
    assert (derive(wide, oio_rule="median").oio, derive(wide, oio_rule="median").queue_depth) \
        == (2, 1)
    p95 = derive(wide, oio_rule="p95")
    assert (p95.thread_count, p95.queue_depth) == (4, 3)      # TC min(9, 4), QD ceil(9/4)
    with pytest.raises(ValueError, match="OIO rule"):
        derive(ch, oio_rule="p99")


def test_replay_steps(ch):
    w = derive(ch, top_n=2)
    assert [(s.start_s, s.seconds, s.oio) for s in w.steps] == \
        [(0.0, 0.005, 2), (0.005, 0.005, 2)]
    assert w.provenance["steps_left_out"] == 1       # 10-11 ms: no I/O issued in it
    assert w.steps[0].shares == {StreamKey("RND", "R", 4096): 100.0}
    assert w.steps[1].shares == {StreamKey("RND", "R", 4096): 25.0,      # 64K W: not in the ATW
                                 StreamKey("RND", "W", 8192): 75.0}
    assert w.steps[0].iops == pytest.approx(1000) and w.steps[0].rt_mean_ms == \
        pytest.approx(2)


def test_written_and_loaded_back_equal(ch, tmp_path):
    w = derive(ch, top_n=2)
    path = tmp_path / "w.toml"
    path.write_text(atw.dumps(w))
    back = atw.load(path)
    assert (back.streams, back.steps, back.thread_count, back.queue_depth) == \
        (w.streams, w.steps, w.thread_count, w.queue_depth)
    assert back.provenance["capture_sha256"] == ch.sha256
    assert back.provenance["host"] == "db1" and back.provenance["lost_events"] == 0
