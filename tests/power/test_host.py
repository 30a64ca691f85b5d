"""pts.power.host: RAPL on a constructed sysfs tree (a wrap included: this machine has no
powercap), a lab meter through its command (a meter simulated by tests/data/meter_sim.py),
and the recorder around them (pts.power.source): a failure said once, the run going on,
its gap kept."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pts.power.energy import ENERGY, POWER
from pts.power.host import MeterSource, RaplSource, header_columns, parse_meter_line
from pts.power.source import CPU_PACKAGE, PowerSource, PowerSourceError, Recorder
from tests.support import readings

METER = Path(__file__).resolve().parents[1] / "data" / "meter_sim.py"


def meter(*args: str) -> str:
    return shlex.join([sys.executable, str(METER), *args])


def rapl_tree(root: Path, energy_uj: int, range_uj: int = 10_000_000) -> Path:
    zone = root / "intel-rapl:0"
    zone.mkdir(parents=True, exist_ok=True)
    (zone / "name").write_text("package-0\n")
    (zone / "max_energy_range_uj").write_text(f"{range_uj}\n")
    (zone / "energy_uj").write_text(f"{energy_uj}\n")
    return zone


def test_rapl_reads_the_package_counter_and_takes_its_wrap(tmp_path):
    zone = rapl_tree(tmp_path, 9_000_000)
    source = RaplSource(0, root=tmp_path)
    assert isinstance(source, PowerSource)
    source.start()
    assert source.info.kind == ENERGY and source.info.range_j == pytest.approx(10.0)
    assert source.info.measures == f"{CPU_PACKAGE} (package-0)"
    samples = []
    for uj in (9_000_000, 9_500_000, 1_000_000, 2_000_000):     # wraps at 10 J after 9.5 J
        (zone / "energy_uj").write_text(f"{uj}\n")
        samples += source.read()
    assert [s.value for s in samples] == [9.0, 9.5, 1.0, 2.0]
    rec = Recorder(source, say=lambda m: None)
    rec._samples = samples          # noqa: SLF001  (the recorder's window over these reads)
    win = rec.window(samples[0].mono, samples[-1].mono)
    assert win.energy_j == pytest.approx(0.5 + 1.5 + 1.0)
    assert win.coverage == pytest.approx(1.0)


def test_rapl_where_the_host_has_none_says_so(tmp_path):
    with pytest.raises(PowerSourceError, match="no RAPL zone there.*drop 'rapl'"):
        RaplSource(0, root=tmp_path).start()


def test_rapl_on_this_host():
    """The real powercap where this host has it; where it has none (this VM, CI), the
    start says so and names the fix (no skip: each host checks what it has)."""
    source = RaplSource(0)
    if Path("/sys/class/powercap/intel-rapl:0/energy_uj").exists():
        source.start()
        assert source.read()[0].value >= 0 and source.info.range_j > 0
    else:
        with pytest.raises(PowerSourceError, match="intel-rapl:0/energy_uj does not exist"):
            source.start()


def test_meter_lines_and_csv_header():
    assert parse_meter_line("1700000000.5 12.25", None) == (1700000000.5, 12.25)
    assert parse_meter_line("1700000000.5,12.25", None) == (1700000000.5, 12.25)
    assert parse_meter_line("# comment", None) is None and parse_meter_line("  ", None) is None
    cols = header_columns("channel,timestamp,voltage,power_w")
    assert cols == (1, 3)
    assert parse_meter_line("A,1700000001,12.0,7.5", cols) == (1700000001.0, 7.5)
    assert header_columns("1700000000 5") is None
    with pytest.raises(ValueError, match="not '<unix seconds> <watts>'"):
        parse_meter_line("overload!", None)


@pytest.mark.parametrize("fmt", [[], ["--csv"]], ids=["plain", "csv"])
def test_a_meter_that_dies_mid_run_is_said_once_and_leaves_a_gap(fmt):
    said = []
    source = MeterSource(meter(*fmt, "--count", "8", "--period", "0.05", "--watts", "10",
                               "--step", "1", "--exit", "3"), interval_s=0.1)
    rec = Recorder(source, say=said.append)
    t0 = time.monotonic()
    rec.start()
    # until the recorder has found the meter gone (not a fixed sleep: a loaded host starts
    # the meter late), then one read more, which fails too
    deadline = time.monotonic() + 10
    while not rec.failures and time.monotonic() < deadline:
        time.sleep(0.05)
    rec.read_now()
    t1 = time.monotonic()
    rec.stop()
    good = [s for s in rec.samples() if s.value is not None]
    assert [s.value for s in good] == [10.0 + i for i in range(8)]
    # its timestamps (wall clock) are put on the monotonic clock: inside the run
    assert t0 - 0.5 < good[0].mono < good[-1].mono < t1
    assert len(said) == 1, said
    assert "ended (status 3)" in said[0] and "link lost" in said[0] and "run goes on" in said[0]
    assert rec.failures >= 2                    # failing at each read, said once
    # The window as the 8 readings recorded make it (their timestamps: the meter's period
    # stretches on a loaded host): covered from the first to the last, the rest a gap
    # (the meter is gone after its 8th line); the mean W their trapezoid, between 10 and 17.
    win = rec.window(t0, t1)
    assert win.samples == 8
    assert win.gaps and win.gaps[-1] == (pytest.approx(good[-1].mono), pytest.approx(t1))
    assert win.coverage == pytest.approx(
        readings.covered_s(rec.samples(), t0, t1, source.info.max_gap_s) / (t1 - t0))
    assert 0 < win.coverage <= (good[-1].mono - good[0].mono) / (t1 - t0) < 1
    assert win.mean_w == pytest.approx(readings.trapezoid_mean_w(good, source.info.max_gap_s))
    assert 10.0 < win.mean_w < 17.0
    assert source.info.kind == POWER


def test_a_meter_line_that_is_no_sample_is_a_failure_not_the_end():
    said = []
    # read every 0.35 s, the meter's lines 0.1 s apart: each read takes several lines, the
    # bad one beside good ones (as any read does that comes late on a loaded host)
    rec = Recorder(MeterSource(meter("--garbage", "--period", "0.1"), interval_s=0.35),
                   say=said.append)
    rec.start()
    deadline = time.monotonic() + 10         # not a fixed sleep: the meter may start late
    while time.monotonic() < deadline and not (
            said and sum(1 for s in rec.samples() if s.value is not None) >= 3):
        time.sleep(0.05)
    rec.stop()
    assert any("overload!" in m for m in said), said
    assert sum(1 for s in rec.samples() if s.value is not None) >= 3      # it read on


def test_the_meter_command_is_stopped_with_the_source():
    source = MeterSource(meter("--period", "0.05"))
    source.start()
    deadline, got = time.monotonic() + 10, []
    while not got and time.monotonic() < deadline:     # its first line, however late
        time.sleep(0.05)
        got = source.read()
    assert got
    source.stop()
    assert source._proc.poll() is not None          # noqa: SLF001


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state == "Z"                          # dead, not yet reaped by its new parent


def test_a_meter_deaf_to_sigterm_does_not_outlive_a_suite_killed_9():
    """The suite killed -9 while its meter runs: the meter (a CLI that ignores SIGTERM and
    waits 30 s between samples, so no broken pipe ends it first) dies with it (its
    parent-death signal is SIGKILL), though it is in its own session. The kill comes once
    the meter's first sample was read (it runs, deaf already), however slowly it started."""
    owner = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pts.power.host import MeterSource\n"
         f"s = MeterSource({meter('--deaf', '--period', '30')!r})\ns.start()\n"
         "while not s.read():\n    time.sleep(0.01)\n"
         "print(s._proc.pid, flush=True)\ntime.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    pid = None
    try:
        pid = int(owner.stdout.readline())
        assert not gone(pid)
        owner.kill()
        owner.wait()
        deadline = time.monotonic() + 20        # a hang bound: it would wait 30 s
        while not gone(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert gone(pid), f"the meter {pid} outlived its suite"
    finally:
        owner.kill()
        if pid is not None and not gone(pid):
            os.kill(pid, signal.SIGKILL)         # ours: started by the owner above


def test_a_meter_command_that_cannot_start():
    with pytest.raises(PowerSourceError, match="cannot start"):
        MeterSource("/nonexistent/meter --csv").start()
