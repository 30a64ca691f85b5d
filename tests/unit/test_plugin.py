"""The pytest plugin: skipping without a device, option errors before anything runs,
deviations implied by options. (Without --destructive on a real device: the header, and
nothing written, in tests/e2e/test_device_safety.py.)"""


import pytest

from pts.config.settings import SettingsError, make_settings
from pts.config.spec import load_spec
from tests.support.ptsrun import run_suite


def pts_pytest(*args):
    return run_suite("-rs", *args)


def test_without_device_every_pts_test_is_skipped_with_reason():
    p = pts_pytest()
    assert p.returncode == 0, p.stdout + p.stderr
    assert "no --device given" in p.stdout and "skipped" in p.stdout
    assert "error" not in p.stdout.lower().replace("stderr", "")


@pytest.mark.parametrize("args,needle", [
    (["--point-seconds", "-1"], "--point-seconds -1: must be a whole number of seconds >= 1"),
    (["--max-rounds", "3"], "--max-rounds 3: must be at least the steady-state window of 5"),
    (["--spec", "nope"], "unknown spec 'nope'"),
    (["--iops-block-sizes", "3KiB"], "--iops-block-sizes: 3KiB is not one of the spec's"),
    (["--iops-block-sizes", "4KiB,64KiB"], "must keep the tracking variable RND 1024KiB 100/0"),
    (["--device", "/etc/hostname"], "is a regular file, not a block device"),
    (["--device", "/nonexistent"], "no such device"),
])
def test_bad_options_fail_before_anything_runs(args, needle):
    p = pts_pytest("--device", "/dev/null", *args) if "--device" not in args else pts_pytest(*args)
    assert p.returncode == 4, p.stdout + p.stderr       # pytest usage error
    assert needle in p.stderr


def test_deviations_from_options():
    spec = load_spec()
    s = make_settings(spec, device="/dev/x", destructive=True, point_seconds=1, max_rounds=8,
                      purge="trim", reports_dir="r", iops_block_sizes="4KiB,64KiB,1024KiB",
                      iops_rw_mixes="0/100,65/35,100/0")
    devs = s.deviations()
    assert "Test point duration 1 s instead of 60 s." in devs
    assert "At most 8 rounds instead of 25." in devs
    assert any(d.startswith("Purge replaced by TRIM") for d in devs)
    assert any("IOPS matrix reduced to block sizes 1024 KiB, 64 KiB, 4 KiB x R/W mixes "
               "100/0, 65/35, 0/100" in d for d in devs)
    assert [str(m) for m in s.iops_rw_mixes] == ["100/0", "65/35", "0/100"]   # spec order kept
    full = make_settings(spec, device="/dev/x", destructive=True, point_seconds=None,
                         max_rounds=None, purge="auto", reports_dir="r")
    assert full.deviations() == [] and full.point_seconds == 60 and full.max_rounds == 25
    assert full.wsat_stop == (4, 24)
    short = make_settings(spec, device="/dev/x", destructive=True, point_seconds=None,
                          max_rounds=None, purge="auto", reports_dir="r", wsat_fills=1,
                          wsat_hours=0.5)
    assert short.wsat_stop == (1, 0.5) and short.deviations() == [
        "WSAT stops after 1 drive fill(s) instead of 4 (or at its time limit).",
        "WSAT time limit 0.5 h instead of 24 h."]
    with pytest.raises(SettingsError, match="--wsat-hours 0: must be a number > 0"):
        make_settings(spec, device=None, destructive=False, point_seconds=None,
                      max_rounds=None, purge="auto", reports_dir="r", wsat_hours=0)
    with pytest.raises(SettingsError, match="--purge"):
        make_settings(spec, device=None, destructive=False, point_seconds=None,
                      max_rounds=None, purge="erase", reports_dir="r")


@pytest.mark.parametrize("scale", [0, -0.5, 1.5])
def test_time_scale_out_of_range_is_refused(scale):
    with pytest.raises(SettingsError, match=r"--time-scale .*: must be a factor with 0 < F <= 1"):
        make_settings(load_spec(), device=None, destructive=False, point_seconds=None,
                      max_rounds=None, purge="auto", reports_dir="r", time_scale=scale)


def test_time_scale_is_declared_and_kept_for_resume():
    s = make_settings(load_spec(), device="/dev/x", destructive=True, point_seconds=None,
                      max_rounds=None, purge="auto", reports_dir="r", time_scale=0.01)
    assert s.as_dict()["time_scale"] == 0.01
    assert any("scaled by 0.01 (--time-scale)" in d for d in s.deviations())
