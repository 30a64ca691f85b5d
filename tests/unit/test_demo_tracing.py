"""`demo --rwsw` starts db_bench once its capture traces (pts.cli.demo.run_db_bench): the
capture's spool meta file is written right after tracing_on, however long the capture took to
get there. It waited 0.3 s after the capture's tracefs instance appeared, which a loaded host
can outlast, and db_bench's first I/O went untraced. Here the capture is a stand-in whose
tracing turns on LATE_S after its instance appears (a loaded host's); db_bench a stand-in
that notes whether the capture traced when it ran; the demo's code is real."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from pts.cli import demo
from pts.tools import commands
from pts.workload.capture import spool, tracefs

LATE_S = 0.6          # twice the old fixed wait


def test_db_bench_runs_once_the_capture_traces(tmp_path, monkeypatch):
    root = tmp_path / "tracefs"
    monkeypatch.setattr(tracefs, "find_tracefs", lambda: root)      # the stand-in's instance
    capture = tmp_path / "db_bench.parquet"
    meta = spool.spool_of(capture) / spool.META
    cap = subprocess.Popen([sys.executable, "-c", (
        "import os, sys, time\nfrom pathlib import Path\nfrom pts.workload.capture import tracefs\n"
        f"inst = Path({str(root)!r}) / 'instances' / tracefs.instance_name(os.getpid())\n"
        "inst.mkdir(parents=True)\n(inst / 'trace_pipe').touch()\n"
        f"time.sleep({LATE_S})\n"                     # ... then tracing on, the meta written
        f"Path({str(meta.parent)!r}).mkdir()\nPath({str(meta)!r}).write_text('{{}}')\n"
        "time.sleep(60)\n")], cwd=Path(demo.__file__).parents[2],
        preexec_fn=commands.on_parent_death(signal.SIGKILL))     # never outlives the suite
    db_bench = tmp_path / "db_bench"
    ran = tmp_path / "ran"
    db_bench.write_text(f"#!/bin/sh\n[ -f {meta} ] && echo traced >> {ran} || "
                        f"echo untraced >> {ran}\n")
    db_bench.chmod(0o755)
    try:
        demo.run_db_bench(str(db_bench), cap, "/dev/loop-none", tmp_path, capture)
    finally:
        cap.kill()
        cap.wait()
    assert ran.read_text() == "traced\n" * 2          # fillrandom, readrandomwriterandom
