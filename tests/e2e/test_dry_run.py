"""--dry-run: the plan is printed, the device is not touched."""

import hashlib
import os
import re
import subprocess

import pytest

from pts.device.safety import _disks_under
from pts.tools.fio_engine import IO_URING_EXACT_DEPTH, version_tuple
from tests.support.ptsrun import run_suite

pytestmark = pytest.mark.needs("root", "losetup")


def dry_run(dev, *extra):
    return run_suite("--device", dev, "--dry-run", *extra)


def digest(dev):
    with open(dev, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def filled_loop(make_loop, sector):
    """A 64 MiB loop device with some content (so that a write would show) and its digest."""
    dev = make_loop(64 << 20, sector=sector)
    with open(dev, "r+b") as fh:
        fh.write(os.urandom(1 << 20))
    return dev, digest(dev)


def plans(out):
    """Each test's plan: {pytest node id: its lines}."""
    found, current = {}, None
    for line in out.splitlines():
        if line.startswith("--- "):
            current = found.setdefault(line[4:], [])
        elif current is not None:
            current.append(line)
    return found


def sections(lines, pattern=r"p\d\d"):
    """Job section names in a plan (indented fio job file lines)."""
    return [m[1] for line in lines if (m := re.fullmatch(rf"    \[({pattern})\]", line))]


def test_plan_printed_and_device_untouched(make_loop, tmp_path):
    dev, before = filled_loop(make_loop, 4096)
    p = dry_run(dev, "--destructive", "--purge", "trim", "--point-seconds", "2",
                "--reports-dir", str(tmp_path / "r"))
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout
    assert f"DRY RUN on {dev}: nothing is written" in out
    assert "safety: not in use" in out
    assert f"purge: trim (declared deviation) [--purge trim]: blkdiscard -v {dev}" in out
    assert f"WIPC: {2 * (64 << 20):,} bytes of SEQ 128 KiB writes" in out
    assert "rounds: 56 points per round (49 measured, 7 N/A) x 2 s" in out
    iops = "\n".join(plans(out)["pts/suite/test_iops.py::test_iops"])
    assert iops.count("[wipc") == 4 and iops.count("rw=randrw") == 5 * 7   # 5 mixed x 7 sizes
    assert "N/A: block size 0.5 KiB is smaller than the logical sector size (4096" in out
    assert "write cache: required WCD" in out
    assert "best case" in out and "worst case" in out and "(25 rounds)" in out
    assert digest(dev) == before
    assert not (tmp_path / "r").exists()


def test_plans_of_throughput_latency_and_wsat(make_loop, tmp_path):
    dev, before = filled_loop(make_loop, 512)
    p = dry_run(dev, "--destructive", "--purge", "trim", "--point-seconds", "2",
                "--reports-dir", str(tmp_path / "r"))
    assert p.returncode == 0, p.stdout + p.stderr
    found = plans(p.stdout)
    assert "(this test has no dry-run plan yet)" not in p.stdout
    # the registry's order (pts.session.plugin), not pytest's file order
    assert list(found) == ["pts/suite/test_iops.py::test_iops",
                           "pts/suite/test_throughput.py::test_throughput[throughput-1024k]",
                           "pts/suite/test_throughput.py::test_throughput[throughput-128k]",
                           "pts/suite/test_latency.py::test_latency",
                           "pts/suite/test_write_saturation.py::test_wsat",
                           "pts/suite/test_dirth.py::test_dirth", "pts/suite/test_cbw.py::test_cbw",
                           "pts/suite/test_hir.py::test_hir", "pts/suite/test_xsr.py::test_xsr",
                           "pts/suite/test_rwsw.py::test_rwsw_wsat",
                           "pts/suite/test_rwsw.py::test_rwsw_streams",
                           "pts/suite/test_rwsw.py::test_rwsw_replay",
                           "pts/suite/test_rwsw.py::test_rwsw_dirth"]
    hir = "\n".join(found["pts/suite/test_hir.py::test_hir"])
    assert "WIPC: none" in hir and "thinktime=50000000" in hir
    assert "wait states + baselines: 15:33:55 after preconditioning (spec: 15:30:00)" in hir
    xsr = "\n".join(found["pts/suite/test_xsr.py::test_xsr"])
    assert "estimated duration: 22:00:00 (spec: 22:00:00)" in xsr
    assert "runtime=28800" in xsr and "runtime=21600" in xsr
    common = [f"purge: trim (declared deviation) [--purge trim]: blkdiscard -v {dev}",
              "write cache: required WCD; device reports "]
    wipc = f"WIPC: {2 * (64 << 20):,} bytes of SEQ "

    iops = found["pts/suite/test_iops.py::test_iops"]
    assert len(sections(iops)) == 56 and len(sections(iops, r"wipc\d")) == 4   # 512 B: no N/A

    lat = found["pts/suite/test_latency.py::test_latency"]
    text = "\n".join(lat)
    for needle in [*common, "ActiveRange: 100 % = 67,108,864 bytes; TC 1 / QD 1",
                   wipc + "128 KiB writes at TC 1 / QD 1; fio job file:",
                   "rounds: 9 points per round (9 measured, 0 N/A) x 2 s, until steady "
                   "(RND 4KiB 0/100 ART) or 25 rounds", "best case", "worst case"]:
        assert needle in text, needle
    assert sections(lat, r"wipc\d") == ["wipc0"] and text.count("    [global]") == 1
    assert sections(lat) == [f"p{i:02d}" for i in range(9)]
    assert text.count("lat_percentiles=1") == 9 and text.count("percentile_list=99.999") == 9
    assert text.count("iodepth=1\n") == 10 and "bs=131072" in text    # WIPC + 9 points

    for bs, name in ((1 << 20, "1024k"), (128 << 10, "128k")):
        tp = found[f"pts/suite/test_throughput.py::test_throughput[throughput-{name}]"]
        text = "\n".join(tp)
        for needle in [*common, "ActiveRange: 100 % = 67,108,864 bytes; TC 1 / QD 32",
                       f"{wipc}{bs >> 10} KiB writes (this test's block size)",
                       "rounds: 2 points per round (2 measured, 0 N/A) x 2 s, until steady "
                       f"(SEQ {bs >> 10}KiB 0/100 MB/s) or 25 rounds", "best case",
                       "worst case"]:
            assert needle in text, needle
        assert sections(tp, r"wipc\d") == ["wipc0"] and sections(tp) == ["p00", "p01"]
        assert text.count(f"\n    bs={bs}\n") == 3 and text.count("\n    bs=") == 3  # WIPC+2
        assert "rw=read\n" in text and text.count("rw=write\n") == 2

    ws = found["pts/suite/test_write_saturation.py::test_wsat"]
    text = "\n".join(ws)
    for needle in [*common, "ActiveRange: 100 % = 67,108,864 bytes; TC 4 / QD 32",
                   "WIPC: none: the test starts fresh out of the box (FOB)",
                   "stop: 4 drive fills = 268,435,456 bytes (fio io_size 67,108,864 bytes per "
                   "thread x TC 4; capacity 67,108,864 bytes) or 24 h (fio runtime 86400 s), "
                   "whichever first", "samples: one per 2 s", "log_avg_msec=2000",
                   "best case 0:00:00 (the fills, written at 3 GB/s)",
                   "worst case 0:00:01 (the fills, written at 0.5 GB/s)"]:
        assert needle in text, needle
    assert sections(ws, r"(?!global)[a-z0-9]+") == ["wsat"] and text.count("    [global]") == 1
    assert "rw=randwrite" in text and "io_size=67108864" in text
    assert digest(dev) == before
    assert not (tmp_path / "r").exists()


def test_plan_of_the_selected_items_only(make_loop, tmp_path):
    """-k throughput-128k: one plan, at 128 KiB only; WSAT stopped by its time limit."""
    dev, before = filled_loop(make_loop, 4096)
    p = dry_run(dev, "-k", "throughput-128k or (wsat and not rwsw)", "--wsat-fills", "100",
                "--wsat-hours", "0.001", "--point-seconds", "1",
                "--reports-dir", str(tmp_path / "r"))
    assert p.returncode == 0, p.stdout + p.stderr
    found = plans(p.stdout)
    assert list(found) == ["pts/suite/test_throughput.py::test_throughput[throughput-128k]",
                           "pts/suite/test_write_saturation.py::test_wsat"]
    text = "\n".join(found["pts/suite/test_throughput.py::test_throughput[throughput-128k]"])
    assert "Throughput 128 KiB test" in text and "1024 KiB" not in text
    assert text.count("\n    bs=131072\n") == 3 and "bs=1048576" not in text
    ws = "\n".join(found["pts/suite/test_write_saturation.py::test_wsat"])
    assert "stop: 100 drive fills = 6,710,886,400 bytes" in ws
    assert "or 0.001 h (fio runtime 4 s)" in ws and "at most 4 complete samples" in ws
    assert "worst case 0:00:04 (the time limit: at 0.5 GB/s the fills would take 0:00:13)" \
        in ws
    assert digest(dev) == before


@pytest.mark.needs("root-on-block-device")
def test_root_filesystem_disk_dry_run_says_refused():
    root = os.stat("/").st_dev
    disks = _disks_under((os.major(root), os.minor(root)))
    assert disks, "/ is on a block device (checked by the needs marker) but has no disk"
    major, minor = sorted(disks)[0]
    name = os.path.basename(os.path.realpath(f"/sys/dev/block/{major}:{minor}"))
    p = dry_run(f"/dev/{name}")
    assert p.returncode == 0, p.stderr
    assert "safety: REFUSED whatever the flags" in p.stdout
    assert "backs the root filesystem" in p.stdout


HMS = r"(\d+):(\d\d):(\d\d)"


def _s(m, at: int = 1) -> int:
    return int(m[at]) * 3600 + int(m[at + 1]) * 60 + int(m[at + 2])


def estimates_in_text(lines) -> tuple[int, int, int]:
    """(best, worst, how many) read from the plan's own estimate texts, each test's way."""
    best = worst = n = 0
    for line in lines:
        if m := re.search(rf"WIPC {HMS} at 0.5 GB/s, {HMS} at 3 GB/s .* best case {HMS} .* "
                          rf"worst case {HMS}", line):          # a round-based test
            best += _s(m, 4) + _s(m, 7)
            worst += _s(m, 1) + _s(m, 10)
        elif m := re.search(rf"whichever first: best case {HMS} .* worst case {HMS}", line):
            best, worst = best + _s(m), worst + _s(m, 4)        # WSAT
        elif m := re.search(rf"^estimated duration \(without purge\): .* best case {HMS} .* "
                            rf"worst case {HMS}", line):        # DIRTH, CBW
            best, worst = best + _s(m), worst + _s(m, 4)
        elif m := re.search(rf"^(?:estimated duration|wait states \+ baselines): {HMS} ",
                            line):                              # XSR; HIR after its rounds
            best, worst = best + _s(m), worst + _s(m)
        else:
            continue
        n += 1
    return best, worst, n


def test_the_whole_runs_estimate_adds_up_every_tests_estimate(make_loop, tmp_path):
    dev = make_loop(64 << 20)
    p = dry_run(dev, "--destructive", "--purge", "trim", "--reports-dir", str(tmp_path / "r"))
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    total = [line for line in lines if line.startswith("estimated duration of this run:")]
    assert len(total) == 1, total
    m = re.match(rf"estimated duration of this run: best {HMS}, worst {HMS} \((\d+) "
                 r"estimates of the plans above added; purges not included\)", total[0])
    best, worst, n = estimates_in_text(lines)
    assert n == int(m[7]) == 10      # IOPS, TP x 2, LAT, WSAT, DIRTH, CBW, HIR x 2, XSR
    # each estimate is rounded to whole seconds in its text
    assert abs(_s(m) - best) <= n and abs(_s(m, 4) - worst) <= n, (total[0], best, worst)


@pytest.mark.needs("fio")      # its premise is this host's fio version (fio --version)
def test_io_uring_depth_six_refused_at_session_start_run_and_dry_run(make_loop, tmp_path):
    """The full DIRTH and CBW grids have QD 6: under io_uring, fio before 3.39 runs it as 8
    (pts.tools.fio_engine). Refused at session start, from the plans, in --dry-run and in a
    real run alike: nothing written, no run folder, the depths, tests and fix named."""
    version = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout
    assert version_tuple(version) < IO_URING_EXACT_DEPTH, \
        f"this test's premise: Debian 12's fio 3.33 (README command 2), not {version}"
    dev, before = filled_loop(make_loop, 4096)
    args = ("--destructive", "--purge", "trim", "--ioengine", "io_uring",
            "--reports-dir", str(tmp_path / "r"))
    for extra in (["--dry-run"], []):
        p = run_suite("--device", dev, *args, *extra, target="pts/suite/test_dirth.py")
        assert p.returncode == 4, p.stdout + p.stderr
        assert ("6 as 8 in test_dirth; fixed in fio 3.39), so the drive would see more I/Os "
                "in flight than the test asks: run with --ioengine libaio, or install fio 3.39 "
                "or later (refused before anything is written)") in p.stderr, p.stderr
        assert "DRY RUN" not in p.stdout and "--- pts/" not in p.stdout    # no plan printed
    p = run_suite("--device", dev, *args, "--dry-run", target="pts/suite/test_iops.py")
    # TC 4 / QD 32 only: runs as asked
    assert p.returncode == 0 and "ioengine=io_uring" in p.stdout, p.stdout + p.stderr
    assert digest(dev) == before
    # no run folder: the real run's start made --reports-dir (its write check) and no more
    assert list((tmp_path / "r").iterdir()) == []
