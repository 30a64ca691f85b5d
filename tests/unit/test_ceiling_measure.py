"""pts.procedure.ceiling.measure's branches (issue 38 §3) over a run and a host of fakes: a
test resumed with or without a recorded ceiling, no measured point, fio failing on the RAM
device, not root on the DUT's host, the RAM device made once per run and host, the "not
measured" deviation declared once per run, and ramdev's clean-up of a half-made device."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from pts.device import ramdev
from pts.procedure import ceiling
from pts.results import records
from pts.tools.commands import ToolFailed
from pts.tools.fio import FioFailed, random_job

SHAPES = [ceiling.Shape("RND 4KiB 0/100", 4096, 128, random_job("p00", 0, 4096, 32, 4, 1,
                                                                  1 << 30))]
RAM = ramdev.RamDevice("/dev/loop9", ramdev.TMPFS_LOOP, 256 << 20, backing="/dev/shm/x.img")


class FakeRun:
    def __init__(self, tmp_path: Path, resume=None, host_ceiling="auto"):
        self.settings = SimpleNamespace(host_ceiling=host_ceiling, point_seconds=1,
                                        host_bound_share=0.8, host_floor_margin=0.25,
                                        ioengine="libaio", io_poll=False, device="/dev/x")
        self.fio = SimpleNamespace(cpus_allowed=None)
        self.device = SimpleNamespace(remote=None)
        self.commands_log = tmp_path / "commands.log"
        self.resume, self.folder = resume, tmp_path
        self.records, self.lines, self.deviations = [], [], []
        self.ledger = SimpleNamespace(append=self.records.append)

    def write(self, line):
        self.lines.append(line)

    def deviation(self, test, text):
        self.deviations.append((test, text))

    def raw_dir(self, test, *parts):
        return self.folder.joinpath("raw", test, *parts)

    def relative(self, path):
        return str(Path(path).relative_to(self.folder))


class Summary:
    iops, mbps, lat_mean_ns = 250_000.0, 1024.0, 512_000.0


@pytest.fixture
def host(monkeypatch):
    """The DUT's host: ramdev.make / clean_leftovers / remove as calls kept, no device;
    fio's round on the RAM device answers Summary (or `fails`)."""
    calls = SimpleNamespace(made=0, cleaned=0, removed=[], rounds=0, fails=None,
                            make_error=None)
    monkeypatch.setattr(ceiling, "_MADE", {})
    monkeypatch.setattr(ceiling, "_STATES", {})

    def make(h, log_file=None):
        if calls.make_error:
            raise ramdev.RamDeviceError(calls.make_error)
        calls.made += 1
        return RAM

    def run_round(fio, path, jobs, out, mode, timeout):
        calls.rounds += 1
        if calls.fails:
            raise FioFailed(calls.fails)
        return [SimpleNamespace(summary=Summary, json_path=out / f"{j.name}.json")
                for j in jobs]
    monkeypatch.setattr(ceiling.ramdev, "make", make)
    monkeypatch.setattr(ceiling.ramdev, "clean_leftovers",
                        lambda h, log: setattr(calls, "cleaned", calls.cleaned + 1))
    monkeypatch.setattr(ceiling.atexit, "register",
                        lambda fn, h, dev, log: calls.removed.append(dev))
    monkeypatch.setattr(ceiling, "run_round", run_round)
    return calls


def test_measured_once_per_run_and_shape(tmp_path, host):
    run = FakeRun(tmp_path)
    c = ceiling.measure(run, "iops", SHAPES)
    assert c.error is None and c.device == ramdev.TMPFS_LOOP and c.seconds == 1
    assert c.points[0]["iops"] == 250_000.0 and c.points[0]["lat_mean_us"] == 512.0
    assert c.points[0]["raw"] == "raw/iops/host-ceiling/c00.json"
    assert ceiling.measure(run, "tp", SHAPES).points == c.points    # the shape known: not run
    assert (host.made, host.cleaned, host.rounds, host.removed) == (1, 1, 1, [RAM])
    assert [r.test for r in run.records] == ["iops", "tp"] and run.deviations == []
    assert ceiling.measure(run, "iops", SHAPES) is c and len(run.records) == 2   # kept


def test_a_resumed_test_keeps_the_ceiling_it_recorded(tmp_path, host):
    before = records.HostCeiling(test="iops", device=ramdev.NULL_BLK, engine="libaio",
                                 cpus=None, seconds=1, points=[{"label": "x"}], share=0.8,
                                 margin=0.25)
    failed = records.HostCeiling(test="lat", device=None, engine="libaio", cpus=None,
                                 seconds=None, points=[], share=0.8, margin=0.25,
                                 error="not root on this host")
    run = FakeRun(tmp_path, resume=SimpleNamespace(records=[before, failed]))
    assert ceiling.measure(run, "iops", SHAPES, going_on=True) is before
    assert ceiling.measure(run, "lat", SHAPES) is None           # recorded as not measured
    assert run.records == [] and run.deviations == [] and host.made == host.rounds == 0


def test_a_test_going_on_after_resume_without_one_is_not_paused_for_it(tmp_path, host):
    run = FakeRun(tmp_path, resume=SimpleNamespace(records=[]))
    assert ceiling.measure(run, "iops", SHAPES, going_on=True) is None
    (rec,) = run.records
    assert rec.error == ceiling.RESUMED and rec.device is None and rec.points == []
    assert host.made == host.rounds == 0
    assert run.deviations == [(None, f"{ceiling.NOT_MEASURED}{ceiling.RESUMED} (host-bound "
                                     "points cannot be marked)")]


def test_no_measured_point(tmp_path, host):
    run = FakeRun(tmp_path)
    assert ceiling.measure(run, "xsr", []) is None
    assert run.records[0].error == "the test has no measured point" and host.made == 0


def test_fio_failing_on_the_ram_device_is_recorded_not_raised(tmp_path, host):
    host.fails = "fio: engine libaio init failed"
    run = FakeRun(tmp_path)
    assert ceiling.measure(run, "iops", SHAPES) is None
    (rec,) = run.records
    assert rec.error == "fio failed on the RAM device: fio: engine libaio init failed"
    assert (rec.device, rec.seconds, rec.points) == (None, None, [])
    assert run.lines[-1] == (f"[pts iops] WARNING {ceiling.NOT_MEASURED}fio failed on the RAM "
                             "device: fio: engine libaio init failed (host-bound points cannot "
                             "be marked)")


def test_not_root_on_the_duts_host(tmp_path, monkeypatch):
    """ramdev.make on a host where `id -u` is not 0: refused before anything is made, the
    run records why, and every later test of the run says the same without trying again."""
    monkeypatch.setattr(ceiling, "_MADE", {})
    ran = []

    class User:
        remote, name = "dut", "dut7"

        def run(self, argv, log_file=None, check=True, timeout=None):
            ran.append(argv)
            return SimpleNamespace(stdout="1000\n" if argv == ["id", "-u"] else "")

        def listdir(self, path):
            return []
    monkeypatch.setattr(ceiling, "host_for", lambda remote: User())
    run = FakeRun(tmp_path)
    assert ceiling.measure(run, "iops", SHAPES) is None
    assert ceiling.measure(run, "tp", SHAPES) is None
    assert [r.error for r in run.records] == [
        "not root on dut7 (losetup and null_blk need root)"] * 2
    assert [a for a in ran if a[0] not in ("losetup",)] == [["id", "-u"]]   # asked once
    assert len(run.deviations) == 1


def test_the_deviation_is_declared_once_per_run(tmp_path, host):
    host.make_error = "too little memory for a tmpfs loop device"
    run = FakeRun(tmp_path)
    for test in ("iops", "tp", "lat"):
        assert ceiling.measure(run, test, SHAPES) is None
    assert [r.error for r in run.records] == ["too little memory for a tmpfs loop device"] * 3
    assert run.deviations == [(None, f"{ceiling.NOT_MEASURED}too little memory for a tmpfs "
                                     "loop device (host-bound points cannot be marked)")]
    assert len([line for line in run.lines if "WARNING" in line]) == 1
    other = FakeRun(tmp_path)                                   # another run: its own
    ceiling.measure(other, "iops", SHAPES)
    assert len(other.deviations) == 1


class Failing:
    """A root host on which the commands `fails(argv)` picks fail; what ran is kept."""
    remote, name = "dut", "dut7"

    def __init__(self, fails):
        self.fails, self.ran = fails, []

    def run(self, argv, log_file=None, check=True, timeout=None):
        self.ran.append(argv)
        if self.fails(argv):
            raise ToolFailed(f"{argv[0]} failed")
        return SimpleNamespace(stdout={"id": "0\n", "losetup": "/dev/loop5\n"}.get(argv[0], ""))

    def read(self, path, default=""):
        return default

    def exists(self, path):
        return True


def test_a_half_made_tmpfs_loop_device_is_removed(monkeypatch):
    """The file was written, losetup failed: the file goes, nothing else is touched."""
    host = Failing(lambda argv: argv[0] == "losetup")
    with pytest.raises(ToolFailed):
        ramdev._tmpfs_loop(host, None, 256 << 20)
    backing = f"{ramdev.SHM}/{ramdev.tag()}.img"
    assert host.ran[-1] == ["rm", "-f", backing]
    assert [a[0] for a in host.ran] == ["dd", "losetup", "rm"]


def test_a_half_made_null_blk_device_is_powered_off_and_removed():
    """Its folder made and configured, its power=1 failed: power 0 and rmdir."""
    host = Failing(lambda argv: argv[-2:-1] == ["1"] and argv[-1].endswith("/power"))
    with pytest.raises(ToolFailed):
        ramdev._null_blk(host, None, 256 << 20)
    folder = f"{ramdev.NULLB}/{ramdev.tag()}"
    assert host.ran[0] == ["mkdir", folder]
    assert host.ran[-2:] == [["sh", "-c", 'printf 0 > "$1"', "sh", f"{folder}/power"],
                             ["rmdir", folder]]
