"""--dry-run: the plan is printed, the device is not touched."""

import hashlib
import os
import subprocess
import sys

import pytest

from pts.device import _disks_under
from tests.conftest import REPO

pytestmark = pytest.mark.needs("root", "losetup")


def dry_run(dev, *extra):
    return subprocess.run([sys.executable, "-m", "pytest", "pts/", "-p", "no:cacheprovider",
                           "--device", dev, "--dry-run", *extra], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def digest(dev):
    with open(dev, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def test_plan_printed_and_device_untouched(make_loop, tmp_path):
    dev = make_loop(64 << 20, sector=4096)
    with open(dev, "r+b") as fh:           # some content, so that a write would show
        fh.write(os.urandom(1 << 20))
    before = digest(dev)
    p = dry_run(dev, "--destructive", "--purge", "trim", "--point-seconds", "2",
                "--reports-dir", str(tmp_path / "r"))
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout
    assert f"DRY RUN on {dev}: nothing is written" in out
    assert "safety: not in use" in out
    assert f"purge: trim (declared deviation): blkdiscard -v {dev}" in out
    assert f"WIPC: {2 * (64 << 20):,} bytes of SEQ 128 KiB writes" in out
    assert "rounds: 56 points per round (49 measured, 7 N/A) x 2 s" in out
    assert out.count("[wipc") == 4 and out.count("rw=randrw") == 5 * 7   # 5 mixed mixes x 7 sizes
    assert "N/A: block size 0.5 KiB is smaller than the logical sector size (4096" in out
    assert "write cache: required WCD" in out
    assert "best case" in out and "worst case" in out and "(25 rounds)" in out
    assert digest(dev) == before
    assert not (tmp_path / "r").exists()


def test_root_filesystem_disk_dry_run_says_refused():
    root = os.stat("/").st_dev
    disks = _disks_under((os.major(root), os.minor(root)))
    if not disks:
        pytest.skip("/ is not on a block device here")
    major, minor = sorted(disks)[0]
    name = os.path.basename(os.path.realpath(f"/sys/dev/block/{major}:{minor}"))
    p = dry_run(f"/dev/{name}")
    assert p.returncode == 0, p.stderr
    assert "safety: REFUSED whatever the flags" in p.stdout
    assert "backs the root filesystem" in p.stdout
