"""HIR wait-state schedule: the exact seconds of write and idle per state, read back from
the fio job files the suite writes (pts.tools.fio.job_file), and the write intervals found
in constructed Unix-stamped IOPS logs."""

from __future__ import annotations

import re

import pytest

from pts.config.settings import make_settings
from pts.config.spec import load_spec
from pts.testdefs.hir_schedule import (
    LOG_WINDOW_MS,
    baseline_job,
    fixed_intervals,
    intervals_by_gaps,
    schedule,
    wait_job,
)
from pts.tools.fio import job_file


def settings(**kw):
    return make_settings(load_spec("pts-2.0.2-enterprise"), device="/dev/x", destructive=True,
                         point_seconds=None, max_rounds=None, purge="auto",
                         reports_dir="/tmp", **kw)


def options(text: str) -> dict[str, str]:
    section = text.split("\n\n", 1)[1]
    return dict(line.split("=", 1) for line in section.splitlines()[1:] if "=" in line)


def test_spec_schedule_is_five_states_of_5_s_writes_and_15_5_hours():
    states = schedule(settings())
    assert [(w.write_s, w.idle_s, w.repetitions, w.baseline_repetitions) for w in states] == [
        (5, 5, 360, 360), (5, 10, 360, 360), (5, 15, 360, 360), (5, 25, 360, 360),
        (5, 50, 360, 360)]
    # §7.5: 5400 + 7200 + 9000 + 12600 + 21600 s = 55 800 s, plus the suite's lead-in and
    # the last idle of each state.
    spec = sum(w.repetitions * (w.write_s + w.idle_s) + w.baseline_repetitions * w.write_s
               for w in states)
    assert spec == 55_800 == settings().spec.hir.total_seconds()


@pytest.mark.parametrize("kw, write, idles, reps", [
    ({}, 5, [5, 10, 15, 25, 50], 360),
    ({"hir_repetitions": 3}, 5, [5, 10, 15, 25, 50], 3),
    ({"hir_repetitions": 2, "time_scale": 0.2}, 1, [1, 2, 3, 5, 10], 2),
    ({"time_scale": 0.01}, 1, [1, 1, 1, 1, 1], 360),      # at least 1 s each
])
def test_job_files_hold_the_exact_write_and_idle_seconds(kw, write, idles, reps):
    s = settings(**kw)
    for ws, idle in zip(schedule(s), idles, strict=True):
        text = job_file("/dev/x", [wait_job(s, ws, "/run/ws", 1 << 30)])
        o = options(text)
        assert o["rw"] == "randwrite" and o["bs"] == "4096"
        assert o["thinktime"] == str(idle * 1_000_000)           # idle, microseconds
        assert o["thinktime_iotime"] == f"{write}s"              # write per repetition
        assert o["time_based"] == "1"
        # lead-in (write + idle) + repetitions x (idle + write)
        assert int(o["runtime"]) == (write + idle) * (reps + 1)
        assert o["log_unix_epoch"] == "1" and o["log_avg_msec"] == str(LOG_WINDOW_MS)
        assert (o["iodepth"], o["numjobs"]) == ("32", "4")
        base = options(job_file("/dev/x", [baseline_job(s, ws, "/run/b", 1 << 30)]))
        assert "thinktime" not in base                           # no idle in Access C
        assert int(base["runtime"]) == write * reps
        assert base["log_avg_msec"] == str(write * 1000)        # one window per interval


def test_bad_repetitions_are_refused_with_the_fix():
    from pts.config.settings import SettingsError
    with pytest.raises(SettingsError, match=r"--hir-repetitions 0: must be a whole number"):
        settings(hir_repetitions=0)


def test_hir_repetitions_is_a_declared_deviation():
    assert any(re.search(r"HIR: 3 repetitions", d) for d in
               settings(hir_repetitions=3).deviations())
    assert not any("HIR" in d for d in settings().deviations())


def write_log(path, rows):
    path.write_text("".join(f"{t}, {v}, 1, 4096, 0\n" for t, v in rows))


def test_intervals_by_gaps_measure_the_idle_across_threads(tmp_path):
    # Two threads, 10 ms windows: writes 0-1 s, idle 2 s, writes 3-4 s (thread 2 a bit late).
    t0 = 1_700_000_000_000
    th1 = [(t0 + 10 * k, 1000) for k in range(1, 101)] + \
          [(t0 + 3000 + 10 * k, 2000) for k in range(1, 101)]
    th2 = [(t0 + 5 + 10 * k, 1000) for k in range(1, 101)] + \
          [(t0 + 3007 + 10 * k, 2000) for k in range(1, 101)]
    write_log(tmp_path / "ws_iops.1.log", th1)
    write_log(tmp_path / "ws_iops.2.log", th2)
    found = intervals_by_gaps(tmp_path / "ws", LOG_WINDOW_MS, 1.0)
    assert len(found) == 2
    assert found[0].idle_before_s is None
    assert found[1].idle_before_s == pytest.approx(3.0 - 1.005, abs=0.001)
    assert found[0].ios == pytest.approx(2 * 100 * 1000 * 0.01)
    assert found[1].iops == pytest.approx(4000, rel=0.02)


def test_fixed_intervals_one_window_each(tmp_path):
    t0 = 1_700_000_000_000
    write_log(tmp_path / "b_iops.1.log", [(t0 + 5000, 1500), (t0 + 10000, 1400)])
    write_log(tmp_path / "b_iops.2.log", [(t0 + 5001, 1500), (t0 + 10001, 1600)])
    found = fixed_intervals(tmp_path / "b", 5000)
    assert [round(f.iops) for f in found] == [3000, 3000]


# --- preconditioning rounds (issue 21 §3): 30 intervals, the last one tracked ----------

def hir_device():
    from types import SimpleNamespace
    return SimpleNamespace(capacity_bytes=1 << 30, logical_sector=512)


def test_spec_round_is_30_intervals_the_last_tracked_and_no_deviation():
    from pts.testdefs import hir
    s = settings()                      # the spec's 60 s points
    assert s.spec.hir.precondition_round_intervals == 30
    decl = hir.precondition(s, hir_device(), write_rest=lambda r: None)
    assert decl.before_round is not None and decl.after_points is None   # rest, then point
    assert hir.rest_seconds(s) == 29 * 60
    p = decl.parameters
    assert (p["precondition_round_intervals"], p["round_seconds"],
            p["precondition_sample"]) == (30, 1800, "last")
    assert decl.purge_probe and hir.round_deviation(s) is None


@pytest.mark.parametrize("intervals, rest", [(3, 2 * 7), (1, 0)])
def test_other_round_lengths_follow_point_seconds_and_are_declared(tmp_path, intervals, rest):
    from pts.testdefs import hir
    from tests.support.ptsrun import spec_variant
    path = spec_variant(tmp_path, {"precondition_round_intervals = 30":
                         f"precondition_round_intervals = {intervals}"}, count=1)
    s = make_settings(load_spec(str(path)), device="/dev/x", destructive=True,
                      point_seconds=7, max_rounds=None, purge="auto", reports_dir="/tmp")
    assert hir.rest_seconds(s) == rest
    decl = hir.precondition(s, hir_device(), write_rest=lambda r: None)
    # one interval per round: nothing to write before the measured point
    assert (decl.before_round is None) == (intervals == 1)
    assert decl.parameters["round_seconds"] == intervals * 7
    text = hir.round_deviation(s)
    assert f"rounds of {intervals} interval(s) of 7 s, the last tracked, instead of 30" in text


def test_bad_round_intervals_name_the_key(tmp_path):
    from pts.config.spec import SpecError
    from tests.support.ptsrun import spec_variant
    path = spec_variant(tmp_path, {"precondition_round_intervals = 30":
                         "precondition_round_intervals = 0"}, count=1)
    with pytest.raises(SpecError, match=r"\[hir.precondition_round_intervals\]: 0 is out of "
                                        r"range"):
        load_spec(str(path))


# --- the lead-in interval: declared only when measured (issue 21 §3) --------------------

@pytest.mark.parametrize("seconds, declared", [(5.0, False), (5.4, False), (7.4, False),
                                               (7.6, True), (10.02, True)])
def test_lead_in_is_declared_only_when_the_logs_show_it(seconds, declared):
    from pts.testdefs.hir import lead_in_deviation
    from pts.testdefs.hir_schedule import WaitState, WriteInterval
    ws = WaitState(1, 5, 5, 360, 360)
    t0 = 1_700_000_000.0
    text = lead_in_deviation(ws, WriteInterval(t0, t0 + seconds, 1000.0, None))
    assert (text is not None) == declared
    if declared:
        assert f"lasted {seconds:.1f} s instead of 5 s" in text
        assert f"{seconds - 5:.1f} s of writes where the schedule has idle" in text
    assert lead_in_deviation(ws, None) is None


def test_lead_in_from_constructed_logs(tmp_path):
    """fio 3.33's lead-in as its logs show it: 1 s write + 2 s idle -> first interval 3 s."""
    from pts.testdefs.hir import lead_in_deviation
    from pts.testdefs.hir_schedule import WaitState
    t0 = 1_700_000_000_000
    rows = [(t0 + 10 * k, 1000) for k in range(1, 301)] + \
           [(t0 + 5000 + 10 * k, 1000) for k in range(1, 101)]
    write_log(tmp_path / "ws_iops.1.log", rows)
    waits = intervals_by_gaps(tmp_path / "ws", LOG_WINDOW_MS, 1.0)
    text = lead_in_deviation(WaitState(1, 1, 2, 1, 1), waits[0])
    assert "lasted 3.0 s instead of 1 s" in text
    assert lead_in_deviation(WaitState(1, 1, 2, 1, 1), waits[1]) is None
