"""Integration tests of the emulated SSD on real kernel devices (loop over FUSE, real fio).

Needs root, fio, fuse3 (fusermount3, /dev/fuse), util-linux and mfusepy. Without them the
module is skipped with the reasons, except with --require-all or CI=true, where it fails.
Run with -s to see the measured numbers.
"""

from __future__ import annotations

import contextlib
import errno
import json
import mmap
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from pts.emulate import lifecycle, system
from pts.emulate.power_model import model_for
from pts.emulate.throttle import DEFAULT_BURST_S
from pts.power.emulated import EmulatedSource
from pts.power.source import Recorder
from tests.support.helpers import REPO

pytestmark = pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "fusermount3",
                              "/dev/fuse", "mfusepy")

FIO_RND_WRITE = ["--ioengine=libaio", "--direct=1", "--rw=randwrite", "--bs=4k",
                 "--iodepth=32", "--numjobs=4", "--group_reporting", "--norandommap",
                 "--randrepeat=0"]


# ------------------------------------------------------------------------- helpers

@contextlib.contextmanager
def emulated(size: str, profile: str):
    inst = lifecycle.start(size, profile)
    try:
        yield inst
    finally:
        with contextlib.suppress(lifecycle.EmulateError):
            lifecycle.stop(inst.device)


def fio(device: str, *options: str) -> dict:
    argv = ["fio", "--name=job", f"--filename={device}", "--output-format=json", *options]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(argv)}\n{done.stdout[-2000:]}\n{done.stderr}"
    return json.loads(done.stdout[done.stdout.index("{"):])


def rnd_write_iops(device: str, seconds: int) -> float:
    out = fio(device, *FIO_RND_WRITE, "--time_based", f"--runtime={seconds}")
    return out["jobs"][0]["write"]["iops"]


def blkdiscard(device: str) -> None:
    subprocess.run(["blkdiscard", device], check=True, timeout=60)


def leftovers(inst: lifecycle.Instance) -> list[str]:
    """Everything of `inst` still present on the host (empty list: fully cleaned up)."""
    found = []
    losetup = subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout
    found += [f"loop: {line}" for line in losetup.splitlines()
              if inst.image in line or inst.serial in line]
    found += [f"loop (sysfs): {d}" for d in system.loops_backed_by(inst.image)]
    mounts = Path("/proc/mounts").read_text()
    found += [f"mount: {line}" for line in mounts.splitlines() if inst.mount in line]
    if system.process_alive(inst.pid, inst.pid_start):
        found.append(f"daemon pid {inst.pid}")
    found += [f"process {pid}" for pid in _processes_mentioning(inst.state_dir)]
    found += [f"file: {p}" for p in (inst.backing, inst.state_dir) if os.path.exists(p)]
    return found


def _processes_mentioning(text: str) -> list[int]:
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if text.encode() in (proc / "cmdline").read_bytes():
                pids.append(int(proc.name))
    return pids


def wait_until_clean(inst: lifecycle.Instance, timeout: float) -> list[str]:
    deadline = time.monotonic() + timeout
    while (left := leftovers(inst)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def explain(inst: lifecycle.Instance) -> str:
    """For a failed cleanup: the instance's daemon.log, its start and its end (the watchdog
    logs each teardown step there), and who holds the emulator's lock, per /proc/locks."""
    try:
        lines = (Path(inst.state_dir) / "daemon.log").read_text(errors="replace").splitlines()
        tail = lines if len(lines) <= 50 else [*lines[:10], "[...]", *lines[-40:]]
    except OSError as exc:
        tail = [f"(no daemon.log: {exc})"]
    holders = system.lock_holders(lifecycle.STATE_ROOT / ".lock")
    return "\n".join([f"daemon.log of {inst.serial}:", *tail, "emulator lock:", *holders])


def daemon_log(inst: lifecycle.Instance) -> str:
    return (Path(inst.state_dir) / "daemon.log").read_text(errors="replace")


def reap_own(inst: lifecycle.Instance) -> None:
    """Tear down what is left of `inst`, this test's, and nothing else: lifecycle.reap_stale
    would take every dead owner's instance on the machine, another test's too (the slow tier
    runs two at a time), made dead on purpose and not yet checked (issue 47 §1)."""
    with lifecycle.locked():
        if Path(inst.state_dir).exists():
            lifecycle.teardown(Path(inst.state_dir))


def start_in_child() -> tuple[subprocess.Popen, lifecycle.Instance]:
    """A separate Python process starts an emulated SSD (it is the owner) and then idles."""
    code = ("import json, time; from pts.emulate import lifecycle; "
            "i = lifecycle.start('32M', 'fast'); print(json.dumps(i.as_dict()), flush=True); "
            "time.sleep(600)")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                             cwd=REPO)
    line = child.stdout.readline()
    child.stdout.close()
    return child, lifecycle.Instance.from_dict(json.loads(line))


# ------------------------------------------------------------------------- (a) FOB -> SS

@dataclass
class Window:
    """One fio run of RND 4 KiB writes: fio's IOPS (wall clock: what the host managed), the
    model's (the pages written over the die time the throttle charged for them: what the
    modelled drive allows, whatever the host's load), that die time and the run's wall time."""
    fio_iops: float
    model_iops: float
    relocations: int
    busy_s: float
    wall_s: float
    # issue 51: the window's energy as the power source recorded it (pts.power.emulated, read
    # at the window's edges as a round is), and the power model's truth from these stats
    energy_j: float = 0.0
    truth_j: float = 0.0
    pages: float = 0.0


def rnd_write_window(inst: lifecycle.Instance, seconds: int,
                     power: Recorder | None = None) -> Window:
    before = lifecycle.read_stats(inst)
    t0 = time.monotonic()
    if power:
        power.read_now()
    fio_iops = rnd_write_iops(inst.device, seconds)
    if power:
        power.read_now()
    wall = time.monotonic() - t0
    after = lifecycle.read_stats(inst)
    t1 = time.monotonic()
    pages = (after["host_write_bytes"] - before["host_write_bytes"]) / 4096
    busy = after["throttle"]["busy_s"] - before["throttle"]["busy_s"]
    energy = power.window(t0, t1).energy_j if power else 0.0
    truth = model_for(after["profile"]).energy_j(before, after, t1 - t0)
    return Window(fio_iops, pages / busy, after["relocations"] - before["relocations"], busy,
                  wall, energy, truth, pages)


# The device's pace is the throttle's virtual clock (pts/emulate/throttle.py); the host's CPU
# only caps it from above. The FOB and after-discard figures are CPU-bound on a loaded 2-core
# machine (the Python daemon serves every command), so fio's own ratios are not asserted here
# but printed, and measured by benchmarks/emulated_ssd.py (fob_iops, steady_state_iops,
# after_discard_over_fob). Seen under load (CI's QEMU guest booting and two CPU hogs, 64M
# default profile, 3 s runs): fio FOB 4876, steady 1380, after discard 2644 IOPS (54 % of
# FOB, where the old 'recovered >= 0.8 x FOB' failed); the model's figures do not move with it.
FOB_OVER_SS = 2.5         # the default profile: 6.7k FOB -> ~1.5k steady (pts/emulate/README)
# 2 s windows: at the model's FOB pace (6.7k IOPS) 13.3k of the 64M drive's 16,384 pages,
# so no FOB window reaches garbage collection even on an idle host
SECONDS = 2


@pytest.mark.slow
def test_fob_falls_to_steady_state_and_discard_restores_it():
    """RND 4 KiB QD32 writes for 3 s: FOB, after writing 2x capacity, after a whole discard.

    The 2x capacity is written the PTS way (one sequential 128 KiB pass, like a WIPC
    pass, then one capacity of random 4 KiB writes) so that every LBA is mapped. Asserted on
    the model's clock (robust to a loaded host): steady state at most 1/2.5 of FOB, the
    discard giving back FOB's cost per page; and the throttle held: no run took less wall
    time than the die time charged for it (at steady state the host could go faster).
    """
    with emulated("64M", "default") as inst:
        blkdiscard(inst.device)
        said: list[str] = []
        power = Recorder(EmulatedSource(inst.device), say=said.append)
        power.start()
        fob = rnd_write_window(inst, SECONDS, power)
        t0 = time.monotonic()
        fio(inst.device, "--ioengine=libaio", "--direct=1", "--rw=write", "--bs=128k",
            "--iodepth=32", "--size=100%")
        fio(inst.device, *FIO_RND_WRITE, f"--io_size={inst.size // 4}")  # 4 jobs x 1/4
        fill_s = time.monotonic() - t0
        stats = lifecycle.read_stats(inst)
        steady = rnd_write_window(inst, SECONDS, power)
        power.stop()
        after_ss = lifecycle.read_stats(inst)
        blkdiscard(inst.device)
        discarded = lifecycle.read_stats(inst)
        recovered = rnd_write_window(inst, SECONDS)
    print(f"\nfio IOPS: FOB {fob.fio_iops:.0f}, steady state {steady.fio_iops:.0f} (ratio "
          f"{fob.fio_iops / steady.fio_iops:.2f}), after discard {recovered.fio_iops:.0f} "
          f"({recovered.fio_iops / fob.fio_iops:.0%} of FOB); model IOPS: FOB "
          f"{fob.model_iops:.0f}, steady state {steady.model_iops:.0f} (ratio "
          f"{fob.model_iops / steady.model_iops:.2f}), after discard {recovered.model_iops:.0f}"
          f"; relocations {fob.relocations}/{steady.relocations}/{recovered.relocations}; "
          f"2x capacity written in {fill_s:.1f} s; WAF after fill {stats['waf']:.2f}")
    assert stats["host_write_bytes"] >= 2 * inst.size
    assert after_ss["gc_runs"] > 0 and after_ss["relocations"] > 0 and steady.relocations > 0
    assert fob.model_iops / steady.model_iops >= FOB_OVER_SS
    assert discarded["free_blocks"] == discarded["blocks"] and discarded["valid_pages"] == 0
    assert discarded["formats"] >= 1
    # after the discard as at FOB: no page relocated, the same die time per page
    assert (fob.relocations, recovered.relocations) == (0, 0)
    assert recovered.model_iops == pytest.approx(fob.model_iops, rel=0.01)
    for w in (fob, steady, recovered):
        assert w.busy_s <= w.wall_s + DEFAULT_BURST_S, w
    # issue 51: the power source's energy per window within 1 % of the model's truth, and
    # a host page written at steady state costs more than at FOB (GC's reads, programs and
    # erases)
    print(f"energy: FOB {fob.energy_j:.3f} J (truth {fob.truth_j:.3f}), steady state "
          f"{steady.energy_j:.3f} J (truth {steady.truth_j:.3f})")
    assert not said
    for w in (fob, steady):
        assert w.energy_j == pytest.approx(w.truth_j, rel=0.01), w
    idle = model_for("default").idle_w
    assert (steady.energy_j - idle * steady.wall_s) / steady.pages > \
        (fob.energy_j - idle * fob.wall_s) / fob.pages


# ------------------------------------------------------------------------- (b) integrity

def read_direct(device: str, offset: int, length: int) -> bytes:
    """Read with O_DIRECT (an mmap buffer is page-aligned), bypassing any page cache."""
    buf = mmap.mmap(-1, length)
    fd = os.open(device, os.O_RDONLY | os.O_DIRECT)
    try:
        assert os.preadv(fd, [buf], offset) == length
    finally:
        os.close(fd)
    return bytes(buf)


def test_data_integrity_through_gc_trim_and_sub_4k_io():
    mib = 1 << 20
    with emulated("64M", "fast") as inst:
        # Age the drive first: 2x capacity of random writes, so that GC is running.
        fio(inst.device, *FIO_RND_WRITE, f"--io_size={inst.size // 2}")
        gc_before = lifecycle.read_stats(inst)["gc_runs"]
        assert gc_before > 0
        # Random writes of 512 B..64 KiB (sub-page writes included) over the whole device,
        # then every block read back and checked with crc32c.
        out = fio(inst.device, "--ioengine=libaio", "--direct=1", "--rw=randwrite",
                  "--bsrange=512-64k", "--iodepth=16", "--size=100%", "--verify=crc32c",
                  "--verify_fatal=1", "--do_verify=1", "--randrepeat=0",
                  "--verify_state_save=0")
        job = out["jobs"][0]
        assert job["error"] == 0
        assert job["read"]["io_bytes"] > 0 and job["write"]["io_bytes"] > 0
        # A ranged discard (not page-aligned at its end) zeroes exactly its range.
        before = read_direct(inst.device, 0, 32 * mib)
        subprocess.run(["blkdiscard", "--offset", str(16 * mib), "--length",
                        str(8 * mib + 512), inst.device], check=True, timeout=60)
        after = read_direct(inst.device, 0, 32 * mib)
        # Write-zeroes (blkdiscard -z) arrives as fallocate(ZERO_RANGE).
        subprocess.run(["blkdiscard", "-z", "--offset", str(40 * mib), "--length", str(mib),
                        inst.device], check=True, timeout=60)
        zeroed = read_direct(inst.device, 39 * mib, 3 * mib)
        stats = lifecycle.read_stats(inst)
    trimmed = slice(16 * mib, 24 * mib + 512)
    assert after[trimmed] == bytes(8 * mib + 512)
    assert after[:trimmed.start] == before[:trimmed.start]
    assert after[trimmed.stop:] == before[trimmed.stop:]
    assert zeroed[mib:2 * mib] == bytes(mib)
    assert zeroed[:mib] != bytes(mib) and zeroed[2 * mib:] != bytes(mib)
    assert stats["gc_runs"] > gc_before and stats["trims"] > 0
    assert stats["trimmed_pages"] >= 8 * mib // 4096


# --------------------------------------------- (b2) the profiles of real drives' behaviours
# ('purge-keeps-mapping' is run through the suite: tests/e2e/test_purge_probe.py; 'cliff'
# is the FTL model's: tests/unit/test_emulate_ftl.py)

def test_4kn_profile_is_a_4096_byte_sector_device():
    with emulated("32M", "4kn") as inst:
        name = Path(inst.device).name
        sizes = [Path(f"/sys/block/{name}/queue/{q}").read_text().strip()
                 for q in ("logical_block_size", "physical_block_size")]
        fd = os.open(inst.device, os.O_RDWR | os.O_DIRECT)
        buf = mmap.mmap(-1, 4096)
        try:
            with pytest.raises(OSError) as refused:
                os.pwritev(fd, [memoryview(buf)[:512]], 0)       # a 512 B write: refused
            assert os.pwritev(fd, [buf], 4096) == 4096
        finally:
            os.close(fd)
    assert sizes == ["4096", "4096"]
    assert refused.value.errno == errno.EINVAL


# ------------------------------------------------------------------------- (c) lifecycle

def test_start_stop_leaves_nothing_behind():
    inst = lifecycle.start("32M", "fast")
    try:
        assert inst.device.startswith("/dev/loop")
        assert system.loop_backing_file(inst.device) == inst.image
        assert Path(f"/sys/block/{Path(inst.device).name}/loop/dio").read_text().strip() == "1"
        assert lifecycle.find(inst.device) == inst
        assert inst.identity == {"model": "snia-pts emulated SSD", "serial": inst.serial,
                                 "firmware": lifecycle.pts.__version__}
        assert lifecycle.identity(inst.device) == inst.identity
        stats = lifecycle.read_stats(inst)
        assert stats["profile"] == "fast" and stats["size"] == inst.size
        assert stats["identity"] == inst.identity
        assert inst in lifecycle.list_instances()
        assert leftovers(inst)                       # sanity: the checker sees it
        assert "Traceback" not in daemon_log(inst)   # its threads alive (watchdog included)
    finally:
        lifecycle.stop(inst.device)
    assert leftovers(inst) == [], explain(inst)
    assert lifecycle.find(inst.device) is None


def test_failed_start_leaves_nothing_behind():
    """A start whose daemon cannot start (its python is /bin/false) removes what it made. It
    runs in a child process: patching this process's sys.executable would also fail the QEMU
    guest's start, which may run in a thread of this session at the same moment."""
    lifecycle.STATE_ROOT.mkdir(parents=True, exist_ok=True)
    before = set(os.listdir(lifecycle.STATE_ROOT))
    code = ("import json, os, sys; from pts.emulate import lifecycle; sys.executable = "
            "'/bin/false'\ntry:\n    lifecycle.start('32M', 'fast')\nexcept lifecycle.EmulateError"
            " as exc:\n    print(json.dumps({'pid': os.getpid(), 'error': str(exc)}))\n")
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=REPO, timeout=120)
    failed = json.loads(child.stdout or "{}")
    assert "daemon failed to start" in failed.get("error", ""), child.stdout + child.stderr
    assert not [i for i in lifecycle.list_instances() if i.owner_pid == failed["pid"]]
    after = set(os.listdir(lifecycle.STATE_ROOT))
    assert not [f for f in os.listdir(lifecycle.BACKING_DIR)
                if f.startswith("snia-pts-EMU") and f[9:-4] not in after | before]


def test_stop_refuses_a_loop_device_it_did_not_create(tmp_path):
    backing = Path("/dev/shm") / f"snia-pts-test-foreign-{os.getpid()}.img"
    backing.write_bytes(b"")
    os.truncate(backing, 16 << 20)
    device = system.attach_loop(str(backing))       # ours (this test's), not the emulator's
    try:
        with pytest.raises(lifecycle.EmulateError, match="left alone"):
            lifecycle.stop(device)
        assert system.loop_backing_file(device) == str(backing)
        lifecycle.reap_stale()
        assert system.loop_backing_file(device) == str(backing)
    finally:
        assert system.detach_loop(device, str(backing))
        backing.unlink()


def test_killed_owner_and_daemon_are_reaped_by_the_next_start():
    child, old = start_in_child()
    try:
        assert leftovers(old)
        # under the emulator's lock until checked: a start in another test beside this one
        # (-n 2) reaps every instance whose owner or daemon is gone, this one as soon as
        # its daemon is killed, and the check that the kill alone left it would fail
        with lifecycle.locked():
            os.kill(old.pid, signal.SIGKILL)         # daemon first: no self-cleanup possible
            child.kill()
            child.wait(timeout=10)
            assert leftovers(old)                    # dead mount + bound loop remain...
        new = lifecycle.start("32M", "fast")         # ...until the next start reaps them
        try:
            assert leftovers(old) == [], explain(old)
            assert new.device and leftovers(new)
        finally:
            lifecycle.stop(new.device)
        assert leftovers(new) == []
    finally:
        child.kill()
        reap_own(old)


def test_killed_owner_makes_the_daemon_clean_up_by_itself():
    child, old = start_in_child()
    try:
        # its watchdog thread alive: it died at start in 8 of 40 daemons when it imported
        # modules while the main thread did (see pts/emulate/daemon.py)
        assert "Traceback" not in daemon_log(old), explain(old)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        # The teardown takes < 1 s; it waits for the emulator's lock, which a start
        # elsewhere in the session (the QEMU guest's, in the background) may hold while it
        # reaps a stale instance (up to ~12 s each: 5 s loop release + 7 s terminate).
        left = wait_until_clean(old, timeout=30)
        assert left == [], f"{left}\n{explain(old)}"
    finally:
        child.kill()
        reap_own(old)


def test_cli_start_list_stats_stop():
    def cli(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pts", "emulate", *argv], cwd=REPO,
                              capture_output=True, text=True, timeout=60)

    started = cli("start", "--size", "32MiB", "--profile", "fast",
                  "--owner-pid", str(os.getpid()))
    assert started.returncode == 0, started.stderr
    data = json.loads(started.stdout)
    try:
        assert data["device"].startswith("/dev/loop") and data["profile"] == "fast"
        assert data["size"] == 32 << 20 and data["identity"]["serial"] == data["serial"]
        assert data["serial"].startswith("EMU") and len(data["serial"]) == 11
        listed = json.loads(cli("list").stdout)
        assert [i["device"] for i in listed if i["serial"] == data["serial"]] == [data["device"]]
        stats = json.loads(cli("stats", data["device"]).stdout)
        assert stats["serial"] == data["serial"] and "waf" in stats
    finally:
        stopped = cli("stop", data["device"])
    assert stopped.returncode == 0, stopped.stderr
    inst = lifecycle.Instance.from_dict(data)
    assert leftovers(inst) == [], explain(inst)
