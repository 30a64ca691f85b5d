"""The capture's trace parsing and pairing, on trace_pipe text recorded for real
(tests/data/capture/README.md), the rwbs mapping, the process filter and the tracefs
instance's leftover cleanup."""

from __future__ import annotations

import os
import signal
import subprocess

import numpy as np
import pytest

from pts.workload.capture import local, tracefs
from pts.workload.capture.events import NO_TIME, Op
from pts.workload.capture.loop import process_filter
from pts.workload.capture.pairing import STALE_NS, Pairing, op_of, parse_text
from tests.support.helpers import DATA
from tests.support.tracefs_mount import ensure_tracefs

TRACE = DATA / "capture" / "trace_pipe.txt"
P2_START = 67584          # the recorded loop device's partition 2 starts at this sector


def pair(text: bytes, keep=lambda comm: True, chunks: int = 1):
    """All rows of `text` fed in `chunks` whole-line pieces, as numpy columns."""
    out = []
    pairing = Pairing(0, keep, lambda cols: out.append(dict(cols)))
    lines = text.splitlines(keepends=True)
    step = -(-len(lines) // chunks)
    for i in range(0, len(lines), step):
        evs, unparsed = parse_text(b"".join(lines[i:i + step]))
        pairing.counts.unparsed_lines += unparsed
        pairing.feed(evs)
    pairing.finish()
    cols = {k: np.concatenate([np.asarray(c[k]) for c in out]) for k in out[0]} if out else {}
    return cols, pairing.counts


def naive_issues(text: str) -> list[tuple[str, str, int]]:
    """The issue lines read the slow obvious way: (comm, rwbs, nr_sector)."""
    rows = []
    for line in text.splitlines():
        if "block_rq_issue:" in line:
            fields = line.split("block_rq_issue:")[1].split()
            rows.append((line.rsplit("[", 1)[1].rstrip("]"), fields[1], int(fields[6])))
    return rows


@pytest.mark.parametrize("rwbs, op", [
    ("R", Op.READ), ("RA", Op.READ), ("RM", Op.READ), ("RAM", Op.READ), ("RS", Op.READ),
    ("W", Op.WRITE), ("WS", Op.WRITE), ("WSM", Op.WRITE), ("FWS", Op.WRITE),
    ("WFS", Op.WRITE), ("FWFS", Op.WRITE), ("F", Op.FLUSH), ("FF", Op.FLUSH),
    ("FN", Op.FLUSH), ("FS", Op.FLUSH), ("D", Op.DISCARD), ("DS", Op.DISCARD),
    ("DE", Op.OTHER), ("N", Op.OTHER), ("", Op.OTHER)])
def test_rwbs_maps_to_the_operation(rwbs, op):
    assert op_of(rwbs) is op


def test_recorded_trace_pairs_into_one_row_per_request():
    text = TRACE.read_bytes()
    issues = naive_issues(text.decode())
    cols, counts = pair(text)
    assert len(cols["issue_ns"]) == len(issues) == 130
    expect = {op: sum(op_of(rwbs) is op for _, rwbs, _ in issues) for op in Op}
    assert {op: int((cols["op"] == op).sum()) for op in Op} == expect
    assert expect[Op.FLUSH] == 15 and expect[Op.DISCARD] == 1
    # every request completed, after it was issued; rows in issue order
    assert counts.incomplete == 0 and (cols["complete_ns"] >= cols["issue_ns"]).all()
    assert (np.diff(cols["issue_ns"]) >= 0).all()
    # the flush machinery's second completions ("WS ... + 0") have no issue: 28 "+ 0"
    # completions, 15 of them the flushes'
    assert counts.unmatched_completions == 28 - 15
    assert counts.unparsed_lines == 0
    # sizes from nr_sector, the issuing task's comm and pid
    assert sorted(cols["bytes"] // 512) == sorted(nr for _, _, nr in issues)
    fio = cols["comm"] == "fio"
    assert fio.sum() == 40 and len(set(cols["pid"][fio])) == 1 and cols["pid"][fio][0] > 0
    # partition 2's I/O is reported on the whole disk, at absolute sectors
    assert (cols["sector"][fio] >= P2_START).all()
    assert counts.kworker == sum(c.startswith("kworker/") for c, _, _ in issues) == 21
    assert counts.seen == counts.kept == 130
    assert set(np.unique(cols["error"])) == {0}


def test_pairing_does_not_depend_on_where_reads_cut_the_text():
    text = TRACE.read_bytes()
    whole, _ = pair(text)
    cut, _ = pair(text, chunks=7)
    for name in whole:
        assert (whole[name] == cut[name]).all(), name


def test_times_are_relative_to_the_start_in_ns():
    line = (b"  fio-7 [001] ..... 100.000250: block_rq_issue: 7,0 WS 8192 () 64 + 16 "
            b"be,0,4 [fio]\n  <idle>-0 [000] d.h1. 100.001250: block_rq_complete: 7,0 WS () "
            b"64 + 16 be,0,4 [-5]\n")
    pairing, out = Pairing(100 * 10**9, lambda c: True, None), []
    pairing.emit = out.append
    pairing.feed(parse_text(line)[0])
    pairing.finish()
    row = {k: v[0] for k, v in out[0].items()}
    assert (row["issue_ns"], row["complete_ns"]) == (250_000, 1_250_000)
    assert (row["sector"], row["bytes"], row["op"], row["pid"], row["comm"], row["error"]) \
        == (64, 8192, Op.WRITE, 7, "fio", -5)


def test_a_request_whose_completion_never_comes_is_written_without_one():
    issue = b"  fio-7 [001] ..... 1.000000: block_rq_issue: 7,0 R 4096 () 8 + 8 [fio]\n"
    later = b"  fio-7 [001] ..... 1.000010: block_rq_issue: 7,0 R 4096 () 16 + 8 [fio]\n"
    done = b"  x-0 [000] ..s.. 1.000020: block_rq_complete: 7,0 R () 16 + 8 [0]\n"
    out = []
    pairing = Pairing(0, lambda c: True, out.append)
    pairing.feed(parse_text(issue + later + done)[0])
    pairing.feed(parse_text(b"")[0], now_ns=10**9 + STALE_NS - 1)
    assert out == []        # the first is not overdue yet: both held, in issue order
    pairing.feed(parse_text(b"")[0], now_ns=10**9 + STALE_NS + 1)
    assert list(out[0]["complete_ns"]) == [NO_TIME, 1_000_020_000]
    assert list(out[0]["sector"]) == [8, 16] and pairing.counts.incomplete == 1
    # its late completion is then unmatched (after one batch's grace), never paired with
    # another request
    late = b"  x-0 [000] ..s.. 40.000000: block_rq_complete: 7,0 R () 8 + 8 [0]\n"
    pairing.feed(parse_text(late)[0])
    pairing.feed(parse_text(b"")[0])
    pairing.finish()
    assert pairing.counts.unmatched_completions == 1 and len(out) == 1


def test_a_completion_read_before_its_issue_still_pairs():
    """Each CPU's buffer is read in turn: a completion (CPU 0) can arrive one batch before
    its issue (CPU 1)."""
    done = b"  x-0 [000] ..s.. 1.000020: block_rq_complete: 7,0 W () 16 + 8 [0]\n"
    issue = b"  fio-7 [001] ..... 1.000010: block_rq_issue: 7,0 W 4096 () 16 + 8 [fio]\n"
    out = []
    pairing = Pairing(0, lambda c: True, out.append)
    pairing.feed(parse_text(done)[0])
    pairing.feed(parse_text(issue)[0])
    pairing.finish()
    assert list(out[0]["complete_ns"]) == [1_000_020_000]
    assert pairing.counts.unmatched_completions == 0


def test_same_key_requests_pair_first_in_first_out():
    text = b"".join(
        b"  %s [000] ..... 1.0000%02d: block_rq_%s: 7,0 FF %s() 0 + 0 [%s]\n" % row
        for row in ((b"kworker/0:1H-44", 10, b"issue", b"0 ", b"kworker/0:1H"),
                    (b"kworker/0:1H-44", 11, b"issue", b"0 ", b"kworker/0:1H"),
                    (b"x-0", 20, b"complete", b"", b"0"),
                    (b"x-0", 30, b"complete", b"", b"0")))
    text = text.replace(b"() 0 + 0 [0]", b"() 18446744073709551615 + 0 [0]")
    cols, counts = pair(text)
    assert list(cols["op"]) == [Op.FLUSH, Op.FLUSH]
    assert list(cols["complete_ns"] - cols["issue_ns"]) == [10_000, 19_000]
    assert counts.unmatched_completions == 0


def test_process_filter_keeps_the_named_tasks_and_counts_what_it_drops():
    text = TRACE.read_bytes()
    cols, counts = pair(text, keep=process_filter(("fio",)))
    assert set(cols["comm"]) == {"fio"} and len(cols["comm"]) == 40
    assert counts.seen == 130 and counts.kept == 40 and counts.kworker == 21
    cols, _ = pair(text, keep=process_filter(("fio", "kworker/*")))
    assert len(cols["comm"]) == 40 + 21
    assert process_filter(())("anything")


def test_kernel_dev_t_is_major_shifted_by_20():
    assert local.kernel_dev_t(7, 1) == 7340033          # rwsw-digest §7
    assert local.kernel_dev_t(259, 3) == 259 << 20 | 3


def test_missing_tracefs_names_the_mount_command(tmp_path):
    mounts = tmp_path / "mounts"
    mounts.write_text("proc /proc proc rw 0 0\nsysfs /sys sysfs rw 0 0\n")
    with pytest.raises(tracefs.TracefsError, match="mount -t tracefs nodev /sys/kernel/tracing"):
        tracefs.find_tracefs(mounts)


def test_only_instances_of_dead_captures_are_stale():
    """Ours: this pid namespace's captures whose pid is gone. A capture in another pid
    namespace sharing tracefs (a container: its pid 100 is not ours) and a name without a
    namespace (made before it was in the name) are never judged (issue 47 §1)."""
    mark = tracefs.namespace_mark()
    assert mark.isdigit() and mark != "0"
    assert tracefs.instance_name(100) == f"{tracefs.PREFIX}{mark}-100"
    names = [tracefs.instance_name(100), tracefs.instance_name(200), "someone-elses",
             f"{tracefs.PREFIX}{mark}-x", f"{tracefs.PREFIX}1-100", f"{tracefs.PREFIX}100"]
    assert tracefs.stale_instances(names, alive=lambda pid: pid == 200) == [
        tracefs.instance_name(100)]


@pytest.mark.needs("root")
def test_clean_leftovers_removes_a_dead_captures_instance_for_real():
    root = ensure_tracefs()
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = root / "instances" / tracefs.instance_name(dead.pid)
    mine = root / "instances" / tracefs.instance_name()
    stale.mkdir()
    mine.mkdir()
    try:
        # judged by pid_alive, but only ours: other tests' killed captures (beside this one,
        # -n auto) are theirs to check and remove
        ours = {dead.pid, os.getpid()}
        assert tracefs.clean_leftovers(
            root, alive=lambda pid: pid not in ours or tracefs.pid_alive(pid)) == [stale.name]
        assert not stale.exists() and mine.exists()
    finally:
        for path in (stale, mine):
            if path.exists():
                os.rmdir(path)


def test_signals_raise_during_the_capture_and_are_restored():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(tracefs.Interrupted) as caught, tracefs.signals_raise():
        os.kill(os.getpid(), signal.SIGTERM)
    assert caught.value.signum == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) == before



def test_a_completion_after_the_read_horizon_waits_for_the_other_cpus():
    """CPU 0 has been read to t=5, CPU 1 only to t=1.5: CPU 0's completion at t=5 belongs to
    a second request of the same sector whose issue (t=4) is still unread on CPU 1; it must
    not pair with the first request (t=1), whose completion (t=2) is unread too."""
    def ev(t_us, kind, comm_or_error):
        name = b"fio-7" if kind == b"issue" else b"x-0"
        size = b"4096 " if kind == b"issue" else b""
        return (b"  %s [000] ..... 1.%06d: block_rq_%s: 7,0 R %s() 8 + 8 [%s]\n"
                % (name, t_us, kind, size, comm_or_error))
    out = []
    pairing = Pairing(0, lambda c: True, out.append)
    pairing.feed(parse_text(ev(1, b"issue", b"fio") + ev(5, b"complete", b"0"))[0],
                 horizon_ns=1_000_001_500)
    pairing.feed(parse_text(ev(2, b"complete", b"0") + ev(4, b"issue", b"fio"))[0],
                 horizon_ns=1_000_010_000)
    pairing.finish()
    cols = {k: np.concatenate([np.asarray(o[k]) for o in out]) for k in out[0]}
    assert list(cols["issue_ns"]) == [1_000_001_000, 1_000_004_000]
    assert list(cols["complete_ns"] - cols["issue_ns"]) == [1000, 1000]
    assert pairing.counts.unmatched_completions == 0
