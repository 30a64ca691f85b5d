"""WSAT on a device that writes its fills within one sample interval: the error names the
remedy, and --dry-run warns when a fast drive would give fewer samples than a steady-state
window (estimated at 3 GB/s, the duration estimate's fast rate)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pts.config.settings import make_settings
from pts.config.spec import load_spec
from pts.device.identity import BlockDevice, Identity
from pts.testdefs import wsat

GIB = 1 << 30


def device(capacity: int) -> BlockDevice:
    return BlockDevice("/dev/loop9", "/dev/loop9", "loop9", (7, 9), capacity, 512, 512,
                       "loop", False, Identity("m", "s", "f", "sysfs"))


def settings(**options):
    return make_settings(load_spec(), device="/dev/loop9", destructive=True,
                         point_seconds=options.pop("point_seconds", None), max_rounds=None,
                         purge="trim", reports_dir="reports", **options)


def warnings(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("WARNING")]


@pytest.fixture(autouse=True)
def no_device_reads(monkeypatch):
    """The plan's set-up lines read the device (purge plan, write cache): not under test."""
    monkeypatch.setattr(wsat.plan, "setup_lines", lambda *a: ["(set-up lines)"])


def test_dry_run_warns_when_a_fast_drive_gives_fewer_than_five_samples():
    # 64 MiB x 4 fills = 268,435,456 bytes: 0.09 s at 3 GB/s, against 60 s samples.
    found = warnings(wsat.plan_lines(settings(), device(64 << 20)))
    assert found == [
        "WARNING: at 3 GB/s (a fast drive, the estimate's best case) the 4 drive fills "
        "(268,435,456 bytes) are written in 0.1 s, which is 0 complete 60 s samples, fewer "
        "than the 5 of one steady-state window (0: the run ends with nothing to report): "
        "raise --wsat-fills or lower --point-seconds"]


def test_dry_run_warning_counts_samples_and_names_the_time_limit():
    # 10 GiB x 4 fills at 3 GB/s: 14.3 s -> 2 samples of 6 s.
    found = warnings(wsat.plan_lines(settings(point_seconds=6), device(10 * GIB)))
    assert len(found) == 1 and "is 2 complete 6 s samples, fewer than the 5" in found[0]
    # The time limit ends the run first: raise --wsat-hours instead of --wsat-fills.
    found = warnings(wsat.plan_lines(settings(wsat_hours=0.001), device(10 * GIB)))
    assert found == [
        "WARNING: the time limit (0.001 h, fio runtime 4 s) ends the run after 0 complete "
        "60 s samples, fewer than the 5 of one steady-state window (0: the run ends with "
        "nothing to report): raise --wsat-hours or lower --point-seconds"]


def test_dry_run_quiet_when_enough_samples():
    # 1 TB x 4 fills at 3 GB/s: 1,333 s, 22 samples of 60 s.
    assert warnings(wsat.plan_lines(settings(), device(10 ** 12))) == []


def finish(seconds: float, io_bytes: int, p: wsat.Plan):
    run = SimpleNamespace(spec=load_spec())
    res = SimpleNamespace(summary=SimpleNamespace(write=SimpleNamespace(
        runtime_ms=seconds * 1000, io_bytes=io_bytes)))
    with pytest.raises(RuntimeError) as info:
        wsat._finish(run, p, res, [], [])
    return str(info.value)


def test_too_fast_run_names_the_remedy():
    p = wsat.wsat_plan(settings(), device(64 << 20))
    text = finish(0.4, p.bytes_planned, p)
    assert text == (
        "WSAT: fio wrote the 4 drive fills (268,435,456 bytes) in 0.4 s, shorter than one "
        "60 s sample: nothing to report. Make the run last at least 5 samples (one "
        "steady-state window): raise --wsat-fills (at this speed, --wsat-fills 3000 takes "
        "about 5 x 60 s); --point-seconds cannot help (its minimum, 1 s, is longer than the "
        "0.4 s run)")


def test_too_fast_run_suggests_point_seconds_when_it_can_help():
    p = wsat.wsat_plan(settings(point_seconds=60), device(10 * GIB))
    text = finish(30.0, p.bytes_planned, p)
    assert "raise --wsat-fills (at this speed, --wsat-fills 40 takes about 5 x 60 s)" in text
    assert "or lower --point-seconds (--point-seconds 6 gives 5 samples in the 30.0 s run)" \
        in text


def test_time_limit_shorter_than_a_sample_names_wsat_hours():
    p = wsat.wsat_plan(settings(wsat_hours=0.001), device(10 * GIB))
    text = finish(4.0, 10 ** 9, p)
    assert text.startswith("WSAT: fio ran 4.0 s (time limit 0.001 h), shorter than one 60 s "
                           "sample: nothing to report.")
    assert "raise --wsat-hours (at least 0.0834 h for 5 x 60 s)" in text


def test_dry_run_shows_the_host_ceiling_plan():
    """Issue 33 §1: --dry-run shows the ceiling's job (the WSAT's own: RND 4 KiB writes at TC
    x QD) before the purge, or that it is off."""
    w = load_spec().wsat
    lines = wsat.plan_lines(settings(point_seconds=3), device(10 * GIB))
    at = next(k for k, line in enumerate(lines) if line.startswith("host ceiling: "))
    assert lines[at].startswith("host ceiling: before the purge, 1 job(s) of 3 s in one fio")
    assert "engine libaio" in lines[at]
    assert lines[at + 1] == f"    [RND 4KiB 0/100] OIO {w.thread_count * w.queue_depth}, 4 KiB"
    assert at < next(k for k, line in enumerate(lines) if line.startswith("fio: ONE run"))
    off = wsat.plan_lines(settings(host_ceiling="off"), device(10 * GIB))
    assert "host ceiling: off (--host-ceiling off): not measured; declared on the report" in off
