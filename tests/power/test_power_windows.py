"""The run-time hook (issue 51 §3, §5: pts.procedure.power_windows): each source read at a
round's edges and on its thread, each point's window stored as a point_power record, each
source once as a power_source record; a source dying mid-run said once, the run going on,
its gap kept; the recorders stopped by Run.close. A lab meter simulated by
tests/data/meter_sim.py (a constant 12 W) is the source; the round's 'fio' sleeps."""

import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from pts.config.power_option import parse
from pts.procedure import power_windows
from pts.results import records
from pts.results.ledger import Ledger, read_records
from pts.run import Run
from tests.support import readings

METER = Path(__file__).resolve().parents[1] / "data" / "meter_sim.py"


def fake_run(tmp_path, power_text):
    said = []
    run = SimpleNamespace(settings=SimpleNamespace(power=tuple(parse(power_text))),
                          device=SimpleNamespace(path="/dev/null"), write=said.append,
                          ledger=Ledger(tmp_path / "ledger.jsonl"), power=None)
    return run, said


def a_round(seconds=(0.6, 0.6)):
    """Two points back to back, as a round's results: each with its Unix start and end."""
    def fio():
        out = []
        for s in seconds:
            start = time.time()
            time.sleep(s)
            out.append(SimpleNamespace(start=start, end=time.time()))
        return out
    return fio


def stored(tmp_path, kind):
    found, _ = read_records(tmp_path / "ledger.jsonl")
    return [r for r in found if isinstance(r, kind)]


def assert_as_the_readings_make_it(w, rec) -> None:
    """A stored window (point_power, round_power) as the readings the source gave make it
    (their own times; on a loaded host a meter's first line and its later ones come late),
    not as a share of the time slept: its covered seconds and its gaps are the window, no
    reading lies inside a gap (a gap is where readings were missing), it is never more
    covered than all the source's readings cover (those that came after the window was
    stored may close its last gap), and its energy is its mean W over what is covered."""
    offset = time.time() - time.monotonic()      # the stored Unix times back to monotonic
    good = [s.mono + offset for s in rec.samples() if s.value is not None]
    span = w.end - w.start
    assert 0 < w.covered_s <= readings.covered_s(
        rec.samples(), w.start - offset, w.end - offset, rec.source.info.max_gap_s) + 1e-3
    assert w.energy_j == pytest.approx(w.mean_w * w.covered_s)
    assert w.covered_s + sum(b - a for a, b in w.gaps) == pytest.approx(span, abs=1e-3)
    for a, b in w.gaps:
        assert not [t for t in good if w.start + a + 1e-3 < t < w.start + b - 1e-3], (a, b)
    assert w.samples >= 2


def test_each_point_gets_its_window_and_each_source_is_recorded_once(tmp_path):
    run, said = fake_run(tmp_path, f"meter:{sys.executable} {METER} --watts 12 --period 0.05,"
                                   f"interval=0.05,measures=the drive")
    try:
        results = power_windows.measured(run, "iops", 1, [3, 4], a_round())
        power_windows.measured(run, "iops", 2, [3, 4], a_round())
    finally:
        Run.close(run)
    sources = stored(tmp_path, records.PowerSourceInfo)
    assert [(s.name, s.measures, s.kind) for s in sources] == \
        [(f"meter:{sys.executable} {METER} --watts 12 --period 0.05,interval=0.05,"
          f"measures=the drive", "the drive", "power")]
    windows = stored(tmp_path, records.PointPower)
    assert [(w.round, w.index) for w in windows] == [(1, 3), (1, 4), (2, 3), (2, 4)]
    assert (windows[0].start, windows[0].end) == (results[0].start, results[0].end)
    (_, rec), = run.power
    for w in windows:
        assert w.mean_w == pytest.approx(12.0)
        assert_as_the_readings_make_it(w, rec)
    whole = stored(tmp_path, records.RoundPower)
    assert [w.round for w in whole] == [1, 2]
    assert whole[0].start <= results[0].start and whole[0].end >= results[-1].end
    for w in whole:       # the round's fio run, read at its edges
        assert w.mean_w == pytest.approx(12.0) and w.end - w.start >= 1.2
        assert_as_the_readings_make_it(w, rec)
    assert not said
    assert all(not r._thread.is_alive() for _, r in run.power)      # stopped by Run.close


def test_a_source_dying_mid_run_is_said_once_the_run_goes_on_and_its_gap_is_kept(tmp_path):
    # 20 readings 0.05 s apart, then the meter exits with status 3: the second point's
    # window is (mostly) a gap
    run, said = fake_run(tmp_path, f"meter:{sys.executable} {METER} --count 20 --period 0.05 "
                                   f"--exit 3,interval=0.05")
    try:
        power_windows.measured(run, "iops", 1, [0, 1], a_round((0.5, 1.5)))
        power_windows.measured(run, "iops", 2, [0, 1], a_round((0.3, 0.3)))
    finally:
        Run.close(run)
    first, second, *later = stored(tmp_path, records.PointPower)
    (_, rec), = run.power
    assert_as_the_readings_make_it(first, rec)
    assert_as_the_readings_make_it(second, rec)
    assert second.gaps
    assert second.gaps[-1][1] == pytest.approx(second.end - second.start, abs=1e-6)
    assert [(w.round, w.covered_s, w.mean_w) for w in later] == [(2, 0.0, None), (2, 0.0, None)]
    assert len([s for s in said if "failed" in s]) == 1, said


def test_a_password_file_is_not_stored(tmp_path):
    assert power_windows.stored_name("ipmi:10.0.0.5,user=admin,password-file=/root/bmc.pw,"
                                     "interval=2") == "ipmi:10.0.0.5,user=admin,interval=2"


def test_without_power_nothing_is_read_nor_recorded(tmp_path):
    run, _ = fake_run(tmp_path, "none")
    power_windows.measured(run, "iops", 1, [0, 1], a_round((0.01, 0.01)))
    run.ledger.append(records.Deviation(test="iops", text="the one record"))
    assert run.power is None
    assert [r.TYPE for r in read_records(tmp_path / "ledger.jsonl")[0]] == ["deviation"]
