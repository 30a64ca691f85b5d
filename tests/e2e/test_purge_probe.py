"""The purge probe end to end on the emulated SSD (issue 16 acceptance): a drive filled
beforehand and run with --purge none writes no faster at the start than in steady state,
and the report and pytest's summary warn that no purge ran and the drive was not at FOB
(never that a purge ran, issue 21 §1); a normal run (the emulated SSD's purge: a
whole-device discard) does not warn. The normal run also has --fob-sweep: its FOB read
figures read LBAs the discard emptied, and the report and pytest's summary say they are not
device reads (issue 16 part 2 acceptance).

IOPS test only, PTS-E 1.1 (one tracking variable, RND 4 KiB 0/100; same TC/QD, purge,
WIPC and probe as PTS 2.0.2) with the matrix reduced to RND 4 KiB 100/0 and 0/100, 1 s
points, 5 rounds: each run takes about a minute."""

from __future__ import annotations

import re
import subprocess

import pytest

from pts.emulate import lifecycle
from tests.support.ptsrun import IOPS, run_pts, run_suite

pytestmark = [pytest.mark.slow,
              pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "fusermount3",
                                "pdftotext")]

SIZE = "32M"
REDUCED = ("--spec", "pts-e-1.1", "--point-seconds", "1", "--max-rounds", "5",
           "--iops-block-sizes", "4KiB", "--iops-rw-mixes", "100/0,0/100")
WARNING = "the purge appears not to have returned the drive to FOB"
NO_PURGE_WARNING = "no purge ran and the drive started near its steady state (not at FOB)"


def words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def fill(device: str) -> None:
    """One SEQ pass and one RND 4 KiB pass over the whole device: no longer FOB."""
    for rw, bs in (("write", "128k"), ("randwrite", "4k")):
        subprocess.run(["fio", "--name=fill", f"--filename={device}", "--direct=1",
                        f"--rw={rw}", f"--bs={bs}", "--iodepth=32", "--ioengine=libaio",
                        "--size=100%", "--randrepeat=0", "--norandommap"],
                       check=True, capture_output=True, timeout=600)


def run_filled(tmp_path_factory, profile: str, *args: str, size: str = SIZE):
    """The reduced IOPS run on an emulated SSD of `profile` filled beforehand."""
    reports = tmp_path_factory.mktemp(f"probe-{profile}") / "reports"
    inst = lifecycle.start(size, profile)
    try:
        fill(inst.device)
        return run_pts(inst.device, reports, *args, *REDUCED, target=IOPS)
    finally:
        lifecycle.stop(inst.device)


@pytest.fixture(scope="module")
def unpurged(tmp_path_factory):
    return run_filled(tmp_path_factory, "no-idle-gc", "--purge", "none")


@pytest.fixture(scope="module")
def kept_mapping(tmp_path_factory):
    """A filled drive whose purge (a whole-device discard) erases the data and keeps its
    mapping: the emulated SSD's 'purge-keeps-mapping' profile (issue 23 §4)."""
    return run_filled(tmp_path_factory, "purge-keeps-mapping", "--purge", "trim")


@pytest.fixture(scope="module")
def purged(tmp_path_factory):
    reports = tmp_path_factory.mktemp("probe-auto") / "reports"
    return run_pts(f"emulated:{SIZE}:default", reports, "--purge", "auto", "--fob-sweep",
                   *REDUCED, target=IOPS)


# FOB/SS as the report computes it: the 3 s probe over the mean of the window's RND 4 KiB
# writes (5 rounds of 1 s points, each a separate fio point: several measurements). The
# threshold 1.1 is the spec file's (fob_ss_min_ratio), not the test's, so the margins are
# the drive's: seen under load (CI's QEMU guest booting and two CPU hogs, 32M drives):
# purged 4695 / 1570 = 2.99 (>= 1.1); filled, --purge none 1552 / 1589 = 0.98 and filled,
# mapping kept 1689 / 1592 = 1.06 (< 1.1). The window holds round 1 (2217-2333 IOPS: random
# writes right after WIPC's sequential pass find cheap victims) and rounds 2-5 at 1361-1480.
# The filled drives have no idle GC ('no-idle-gc', 'purge-keeps-mapping'): with it the
# probe reads what idle GC gave the drive during the suite's start-up, so its verdict hung on
# how long that took ('default' filled, idle 60 s first: 1.10; mapping kept: 1.09).
def ratio(run) -> float:
    probe = run.of_type("purge_probe")[0]
    ss = [p["iops"] for p in run.of_type("point")
          if p["rw_mix"] == "0/100" and p["block_size"] == 4096 and p["round"] >= 1]
    end = run.of_type("test_end")[0]
    lo, hi = end["window"] or (1, end["rounds"])
    window = [p["iops"] for p in run.of_type("point") if p["rw_mix"] == "0/100"
              and p["block_size"] == 4096 and lo <= p["round"] <= hi]
    assert ss and window
    return probe["iops"] / (sum(window) / len(window))


def test_probe_recorded_after_purge_before_wipc(purged):
    kinds = [r["type"] for r in purged.records]
    assert kinds.index("purge") < kinds.index("purge_probe") < kinds.index("wipc")
    probe = purged.of_type("purge_probe")[0]
    assert (probe["block_size"], probe["rw_mix"], probe["thread_count"],
            probe["queue_depth"]) == (4096, "0/100", 4, 32)
    assert probe["fob_ss_min_ratio"] == 1.1 and probe["iops"] > 0 and probe["seconds"] >= 2
    assert (purged.folder / probe["raw"]).is_file()


def test_normal_run_does_not_warn(purged):
    r = ratio(purged)
    print(f"purged: FOB/SS {r:.2f}, {purged.wall:.0f} s wall")
    assert r >= 1.1
    assert WARNING not in purged.proc.stdout
    text = words(purged.pdf_text())
    assert WARNING not in text and "purge effective" in text


def test_fob_sweep_read_figures_are_not_device_reads(purged):
    warning = ("iops: the --fob-sweep FOB figures of R/W mix 100/0 are not device "
               "reads: they read LBAs the purge emptied")
    assert f"PTS WARNING: {warning}" in purged.proc.stdout
    text = words(purged.pdf_text())
    assert f"WARNING: {warning}" in text
    assert text.count("NOT a device read *") == 1      # RND 4 KiB 100/0
    kinds = [r["type"] for r in purged.records]
    assert kinds.index("purge_probe") < kinds.index("fob_point") < kinds.index("wipc")


def test_unpurged_filled_drive_warns(unpurged):
    r = ratio(unpurged)
    print(f"--purge none on a filled drive: FOB/SS {r:.2f}, {unpurged.wall:.0f} s wall")
    assert r < 1.1
    # no purge ran: the warning and the setup row say the drive was found near its steady
    # state, never that a purge ran (issue 21 §1)
    assert f"PTS WARNING: iops: {NO_PURGE_WARNING}" in unpurged.proc.stdout
    assert WARNING not in unpurged.proc.stdout
    text = words(unpurged.pdf_text())
    assert f"WARNING: iops: {NO_PURGE_WARNING}" in text
    assert "at the start of the test (NO purge ran: --purge none)" in text
    assert f"start/SS {r:.2f}, threshold 1.1: near steady state: NOT at FOB" in text
    assert "right after the purge" not in text and "purge effective" not in text
    assert "PURGE NOT EFFECTIVE" not in text


def test_dry_run_plans_the_probe_and_no_purge_probe_removes_it(make_loop, tmp_path):
    """The plan declares the probe for IOPS and HIR (extra writes; HIR's against its
    preconditioning baseline) and WSAT (its first sample), not for the other tests;
    --no-purge-probe says it is off. A dry run writes nothing."""
    dev = make_loop(64 << 20)
    common = ("--device", dev, "--dry-run", "--destructive", "--purge", "trim",
              "--reports-dir", str(tmp_path / "r"))
    p = run_suite(*common)
    assert p.returncode == 0, p.stdout + p.stderr
    probe = ("purge probe (an addition to the PTS flow; --no-purge-probe removes it): 3 s "
             "of RND 4 KiB writes at TC 4 / QD 32 right after the purge, before WIPC; at the "
             "end FOB/SS below 1.1 warns that ")
    assert p.stdout.count(probe + "the purge did not return the drive to FOB") == 1   # IOPS
    assert p.stdout.count(probe + "the preconditioning baseline may be the FOB plateau") == 1
    assert p.stdout.count("purge probe: the first WSAT sample (writes on the purged drive; "
                          "no extra writes)") == 1
    p = run_suite(*common, "--no-purge-probe")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count("purge probe: off (--no-purge-probe)") == 3
    assert "purge probe (an addition" not in p.stdout


def test_a_purge_that_keeps_the_mapping_warns(kept_mapping):
    """The purge ran and erased the data (its marker check passed), but the drive stayed in
    steady state: the probe sees it, and the warning says the purge did not return it to
    FOB (not that no purge ran)."""
    r = ratio(kept_mapping)
    print(f"purge keeping the mapping: FOB/SS {r:.2f}, {kept_mapping.wall:.0f} s wall")
    assert r < 1.1
    purge = kept_mapping.of_type("purge")[0]
    assert purge["method"] == "trim"
    assert f"PTS WARNING: iops: {WARNING}" in kept_mapping.proc.stdout
    assert NO_PURGE_WARNING not in kept_mapping.proc.stdout
    text = words(kept_mapping.pdf_text())
    assert f"WARNING: iops: {WARNING}" in text
    assert "right after the purge" in text and "PURGE NOT EFFECTIVE?" in text
