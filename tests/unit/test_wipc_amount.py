"""WIPC writes 2 x USER CAPACITY over the ActiveRange (pts-digest §11 item 6, reading A: the
spec's "Write 2X User Capacity ... to the entire ActiveRange"), not 2 x the ActiveRange. With
PTS-C's ActiveRange of 75 % that is 2.67 passes over the ActiveRange. The code, the dry-run,
the spec files and the report's set-up table say the same."""

from __future__ import annotations

import dataclasses
import re

from pts.conditioning.wipc import plan_wipc
from pts.config.settings import make_settings
from pts.config.spec import available_specs, load_spec, specs_dir
from pts.device.identity import BlockDevice, Identity, active_range_bytes
from pts.procedure import plan
from pts.report.pages.summary import wipc_text
from pts.stored.data import load_run
from pts.testdefs import iops
from tests.support.synthetic.runfactory import build_run

MIB = 1 << 20
READING = "2 x user capacity, written sequentially within the ActiveRange, not 2 x the " \
          "ActiveRange"


def device(capacity: int, sector: int = 512) -> BlockDevice:
    return BlockDevice("/dev/loop9", "/dev/loop9", "loop9", (7, 9), capacity, sector, sector,
                       "loop", False, Identity("m", "s", "f", "sysfs"))


def test_client_plan_is_twice_the_user_capacity():
    cap = 64 * MIB
    ar = active_range_bytes(device(cap), 75)                  # 48 MiB
    p = plan_wipc(ar, 128 << 10, 2, 2, 16, cap)
    assert p.bytes_expected == 2 * cap                       # not 2 x 48 MiB = 1.5 x cap
    assert [(j.offset, j.size, j.io_size) for j in p.jobs] == [
        (0, 24 * MIB, 64 * MIB), (24 * MIB, 24 * MIB, 64 * MIB)]   # 2.67 passes per slice
    assert p.amount_text(75) == "2 x user capacity (2.67 passes over the 75 % ActiveRange)"


def test_enterprise_plan_unchanged_whole_passes_as_loops():
    p = plan_wipc(10 * 131072 + 4096, 131072, 2, 4, 32, 10 * 131072 + 4096)
    assert [j.loops for j in p.jobs] == [2, 2, 2, 2] and all(j.io_size is None for j in p.jobs)
    assert p.bytes_expected == 2 * 10 * 131072 and p.tail_bytes == 4096


def test_dry_run_plan_of_the_client_spec(monkeypatch):
    monkeypatch.setattr(plan, "setup_lines", lambda *a: [])   # reads the device otherwise
    dev = device(64 * MIB)
    settings = make_settings(load_spec("pts-2.0.2-client"), device=dev.path, destructive=True,
                             point_seconds=None, max_rounds=None, purge="trim",
                             reports_dir="reports")
    lines = plan.round_test_plan(settings, dev, iops.declare(settings, dev))
    text = "\n".join(lines)
    assert f"WIPC: {2 * 64 * MIB:,} bytes of SEQ 128 KiB writes" in text
    assert "io_size=67108864" in text and text.count("[wipc") == 2
    amount = next(line for line in lines if line.startswith("WIPC amount:"))
    assert amount.startswith("WIPC amount: 2 x user capacity (2.67 passes over the 75 % "
                             "ActiveRange); reading: ")
    assert READING in amount


def test_spec_files_say_user_capacity_not_active_range():
    for path in sorted(specs_dir() / f"{name}.toml" for name in available_specs()):
        text = path.read_text()
        assert "2x ActiveRange" not in text, path
        assert re.search(r"capacity_multiple = 2 +# WIPC: 2x user capacity", text), path


def client_run(tmp_path, bytes_expected):
    run = load_run(build_run(tmp_path))
    test = run.tests[0]
    cap = run.device.capacity_bytes
    params = {**test.parameters, "active_range_pct": 75,
              "active_range_bytes": cap // 4096 * 75 // 100 * 4096,
              "wipc_capacity_multiple": 2}
    wipc = dataclasses.replace(test.wipc, bytes_expected=bytes_expected,
                               bytes_written=bytes_expected)
    return run, dataclasses.replace(test, parameters=params, wipc=wipc)


def test_report_setup_table_states_the_reading(tmp_path):
    run, test = client_run(tmp_path, 2 * 960197124096 // 131072 * 131072)
    text = wipc_text(run, test)
    assert "= 2 x user capacity (2.67 passes over the 75 % ActiveRange)" in text
    assert READING in text and "§3.3" in text
    assert "LESS" not in text


def test_report_flags_a_run_that_wrote_only_twice_the_active_range(tmp_path):
    run, test = client_run(tmp_path, 2 * (960197124096 * 3 // 4) // 131072 * 131072)
    text = wipc_text(run, test)
    assert "= 1.5 x user capacity (2 passes over the 75 % ActiveRange)" in text
    assert "LESS than the 2 x user capacity this reading asks" in text


def test_dry_run_shows_the_engine_the_jobs_run_with(monkeypatch):
    """--dry-run's job files carry --ioengine's options, as the run's will (Fio.placed)."""
    monkeypatch.setattr(plan, "setup_lines", lambda *a: [])
    dev = device(64 * MIB)
    for engine, shown in (("libaio", "ioengine=libaio"), ("io_uring", "ioengine=io_uring")):
        settings = make_settings(load_spec("pts-2.0.2-client"), device=dev.path,
                                 destructive=True, point_seconds=None, max_rounds=None,
                                 purge="trim", reports_dir="reports", ioengine=engine)
        text = "\n".join(plan.round_test_plan(settings, dev, iops.declare(settings, dev)))
        assert shown in text and ("fixedbufs=1" in text) == (engine == "io_uring")
