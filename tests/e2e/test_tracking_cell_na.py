"""A tracking variable whose cell this device cannot measure (a 0.5 KiB tracking cell on a
4Kn drive) is a clear error before anything is written, in the run and in --dry-run —
never a KeyError after a round."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.support.helpers import REPO
from tests.support.ptsrun import IOPS, run_suite

pytestmark = pytest.mark.needs("root", "fio", "losetup", "blkdiscard")


def spec_with_half_kib_tracking(tmp_path: Path) -> Path:
    text = (REPO / "specs" / "pts-e-1.1.toml").read_text()
    old = 'tracking = [\n    { rw_mix = "0/100", block_size = "4KiB" },\n]'
    assert old in text, "the spec file's layout changed: update this test"
    text = text.replace(old, 'tracking = [{ rw_mix = "0/100", block_size = "0.5KiB" }]')
    path = tmp_path / "half-kib-tracking.toml"
    path.write_text(text)
    return path


def suite(dev, spec, tmp_path, *extra):
    return run_suite("--device", dev, "--spec", str(spec), "--purge", "trim",
                     "--point-seconds", "1", "--max-rounds", "5", "--reports-dir",
                     str(tmp_path / "r"), *extra, target=IOPS, timeout=600)


def test_tracking_cell_smaller_than_the_sector_is_a_clear_error(make_loop, tmp_path):
    dev = make_loop(64 << 20, sector=4096)
    with open(dev, "r+b") as fh:
        fh.write(b"precious" * 512)
    before = hashlib.sha256(Path(dev).read_bytes()).hexdigest()
    spec = spec_with_half_kib_tracking(tmp_path)
    plan = suite(dev, spec, tmp_path, "--dry-run")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert "REFUSED at run time: iops: the tracking variable RND 0.5KiB 0/100 cannot be " \
           "measured on this device" in plan.stdout
    p = suite(dev, spec, tmp_path, "--destructive")
    out = p.stdout + p.stderr
    assert p.returncode != 0 and "KeyError:" not in out, out[-3000:]
    assert "TestDefinitionError" in out
    assert "the tracking variable RND 0.5KiB 0/100 cannot be measured on this device " \
           "(block size 0.5 KiB is smaller than the logical sector size (4096 bytes))" in out
    assert hashlib.sha256(Path(dev).read_bytes()).hexdigest() == before   # nothing written
