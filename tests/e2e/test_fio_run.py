"""The fio wrapper against the real fio: WIPC bytes, kept files, and typed errors."""

import json
import os
import stat

import pytest

from pts.conditioning.wipc import plan_wipc, run_wipc
from pts.tools import commands
from pts.tools.fio import Fio, FioFailed, FioOutputError, Job

pytestmark = pytest.mark.needs("root", "fio", "losetup")


def test_wipc_writes_exactly_twice_the_active_range_in_separate_regions(make_loop, tmp_path):
    size = 64 << 20
    dev = make_loop(size)
    plan = plan_wipc(size, 128 << 10, 2, 4, 32)
    regions = [(j.offset, j.offset + j.size) for j in plan.jobs]
    assert regions[0][0] == 0 and regions[-1][1] == size
    assert all(a[1] == b[0] for a, b in zip(regions, regions[1:], strict=False))  # no overlap
    fio = Fio(log_file=tmp_path / "commands.log")
    res = run_wipc(fio, dev, plan, tmp_path)
    assert res.summary.write.io_bytes == plan.bytes_expected == 2 * size
    job = (tmp_path / "wipc.fio").read_text()
    assert job.count("rw=write") == 4 and job.count("loops=2") == 4
    assert json.loads((tmp_path / "wipc.cmd").read_text())[0].endswith("fio")
    assert "wipc.fio" in (tmp_path / "commands.log").read_text()


def test_wipc_plan_uneven_split_and_tail():
    plan = plan_wipc(10 * 131072 + 4096, 131072, 2, 4, 32)
    assert [j.size // 131072 for j in plan.jobs] == [3, 3, 2, 2]
    assert plan.bytes_expected == 2 * 10 * 131072 and plan.tail_bytes == 4096


def test_nonzero_exit_is_fio_failed_with_stderr(tmp_path):
    fio = Fio()
    with pytest.raises(FioFailed, match="(?s)exited with status 1.*failed parsing rw=bogus"):
        fio.run("/dev/null", [Job("a", "bogus", 4096, 1, runtime=1, size=4096)],
                tmp_path, "bad")
    assert (tmp_path / "bad.fio").exists() and (tmp_path / "bad.cmd").exists()


def fake_fio(tmp_path, body):
    path = tmp_path / "fio"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_garbage_output_is_fio_output_error(tmp_path):
    # A stand-in binary: the real fio never prints garbage on purpose.
    binary = fake_fio(tmp_path, 'case "$1" in --version) echo fio-x;; *) '
                                'for a; do case "$a" in '
                                '--output=*) echo garbage > "${a#--output=}";; '
                                'esac; done; echo oops >&2;; esac\n')
    fio = Fio(binary=binary)
    with pytest.raises(FioOutputError, match="printed no JSON.*fio stderr: oops"):
        fio.run("/dev/null", [Job("a", "read", 4096, 1, size=4096)], tmp_path, "g")


def test_fio_missing_names_the_package(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(commands.ToolMissing, match="apt-get install fio"):
        Fio()
    assert os.environ["PATH"] == "/nonexistent"
