"""XSR: every access group must log the intervals it was planned to (issue 21 §3). Checked
on constructed fio logs (PREFIX_iops.N.log: "time_ms, iops, ddir, 0, 0"): a complete group
has no problem; a short log, a gap and a 0 MB/s group are each an ERROR naming the group."""

from __future__ import annotations

import pytest

from pts.config.settings import make_settings
from pts.config.spec import load_spec
from pts.procedure import ceiling
from pts.testdefs.xsr import ceiling_shapes, group_problems, groups, logged_intervals

SECS = 2


def plans():
    s = make_settings(load_spec("pts-2.0.2-enterprise"), device="/dev/x", destructive=True,
                      point_seconds=SECS, max_rounds=None, purge="trim", reports_dir="/tmp",
                      time_scale=0.0015)
    return groups(s)          # 43, 32 and 43 s: 21, 16 and 21 intervals of 2 s


def write_logs(folder, name: str, stamps_ms: list[int], iops: list[int], threads: int = 1):
    for t in range(1, threads + 1):
        (folder / f"{name}_iops.{t}.log").write_text(
            "".join(f"{s}, {v}, 1, 0, 0\n" for s, v in zip(stamps_ms, iops, strict=True)))
        (folder / f"{name}_lat.{t}.log").write_text(
            "".join(f"{s}, 900000, 1, 0, 0\n" for s in stamps_ms))


def problems(tmp_path, gp, stamps, iops, threads=1):
    write_logs(tmp_path, f"g{gp.number}", stamps, iops, threads)
    return group_problems(gp, logged_intervals(tmp_path / f"g{gp.number}", gp, SECS), SECS)


def test_plan_counts():
    assert [(g.seconds, g.seconds // SECS) for g in plans()] == [(43, 21), (32, 16), (43, 21)]


def test_a_complete_group_has_no_problem(tmp_path):
    gp = plans()[0]
    stamps = [SECS * 1000 * k + 3 for k in range(1, 22)] + [43_500]   # + the drain window
    assert problems(tmp_path, gp, stamps, [300] * 22, threads=2) == []


def test_a_short_log_is_named(tmp_path):
    gp = plans()[1]
    stamps = [SECS * 1000 * k for k in range(1, 15)]              # 14 of 16
    (found,) = problems(tmp_path, gp, stamps, [900] * 14)
    assert found == ("access group 2 (RND 8KiB W): 14 intervals logged of the 16 planned "
                     "(a short fio log)")


def test_the_window_that_ends_with_the_run_may_be_missing(tmp_path):
    """32 s of 2 s intervals: fio's IOPS log may leave out the 16th window (it ends with the
    run; seen on a real run); 43 s of 2 s: the 21st ends before the run, it must be there."""
    gp2, gp3 = plans()[1], plans()[2]
    assert problems(tmp_path, gp2, [SECS * 1000 * k for k in range(1, 16)], [900] * 15) == []
    assert problems(tmp_path, gp3, [SECS * 1000 * k for k in range(1, 21)], [300] * 20) == [
        "access group 3 (SEQ 1024KiB W): 20 intervals logged of the 21 planned (a short fio "
        "log)"]


def test_a_gap_is_named(tmp_path):
    gp = plans()[2]
    stamps = [SECS * 1000 * k for k in range(1, 23) if k != 8]   # 21 windows, 7 -> 9 s apart
    found = problems(tmp_path, gp, stamps, [300] * 21)
    assert found == ["access group 3 (SEQ 1024KiB W): a gap of 2.0 s after interval 7 "
                     "(logged at 14.0 s, the next at 18.0 s)"]


def test_a_zero_group_is_named(tmp_path):
    gp = plans()[0]
    stamps = [SECS * 1000 * k for k in range(1, 22)]
    found = problems(tmp_path, gp, stamps, [0] * 21)
    assert found == ["access group 1 (SEQ 1024KiB W): 0 MB/s in every interval: no write "
                     "completed"]
    # one slow interval is data, not an error
    assert problems(tmp_path, gp, stamps, [0] + [300] * 20) == []


def test_no_log_at_all_is_an_error_not_a_pass(tmp_path):
    from pts.tools.fio_logs import FioLogError
    with pytest.raises(FioLogError, match="no fio IOPS log"):
        logged_intervals(tmp_path / "g1", plans()[0], SECS)


def test_host_ceiling_jobs_are_the_groups_patterns():
    """Issue 33 §1: XSR's ceiling runs one job per access pattern of its groups (group 3
    repeats group 1's), at the groups' own shape; --dry-run shows them."""
    settings = make_settings(load_spec(), device=None, destructive=False, point_seconds=2,
                             max_rounds=None, purge="auto", reports_dir="reports")
    x = settings.spec.xsr
    shapes = ceiling_shapes(settings, 1 << 30)
    assert [(s.label, s.block_size, s.oio) for s in shapes] == [
        ("SEQ 1024KiB W", 1 << 20, x.thread_count * x.queue_depth),
        ("RND 8KiB W", 8192, x.thread_count * x.queue_depth)]
    assert [(s.job.rw, s.job.iodepth, s.job.numjobs) for s in shapes] == [
        ("write", x.queue_depth, x.thread_count), ("randwrite", x.queue_depth, x.thread_count)]
    lines = ceiling.shapes_plan_lines(settings, shapes)
    assert lines[0].startswith("host ceiling: before the purge, 2 job(s) of 2 s")
    assert lines[1:] == [f"    [SEQ 1024KiB W] OIO {x.thread_count * x.queue_depth}, 1024 KiB",
                         f"    [RND 8KiB W] OIO {x.thread_count * x.queue_depth}, 8 KiB"]
