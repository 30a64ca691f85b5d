"""What fio really ran with, read back from a run folder (issue 33 §2: `--ioengine io_uring`
runs every test type): the engine options of every job file's [global] section, and each fio
JSON output's own "global options". The per-type e2e runs (throughput, latency, WSAT, HIR,
XSR, DIRTH/CBW, RWSW) run with io_uring and call `mismatches`; the IOPS run and the demo keep
the default libaio."""

from __future__ import annotations

import json
from pathlib import Path

URING = ("ioengine=io_uring", "fixedbufs=1", "registerfiles=1")
ENGINE_KEYS = ("ioengine", "fixedbufs", "registerfiles", "hipri")
IO_URING_ARGS = ("--ioengine", "io_uring")


def job_engine(path: Path) -> list[str]:
    """The engine options of a job file's [global] section, in order."""
    head = path.read_text().split("\n\n", 1)[0].splitlines()
    return [g for g in head if g.split("=")[0] in ENGINE_KEYS]


def expected_uring(text: str) -> list[str]:
    """io_uring with fixed buffers and registered files; a replayed iolog (rwsw-replay)
    without registered files (fio 3.33 refuses them there: pts.tools.fio.Fio.placed)."""
    return [o for o in URING if o != "registerfiles=1" or "\nread_iolog=" not in text]


def mismatches(folder: Path) -> tuple[list[str], int]:
    """(what did not run with io_uring, how many fio runs were looked at): every job file
    whose [global] engine options are not io_uring's, and every fio JSON output (beside its
    job file) whose own global options do not say io_uring with fixed buffers."""
    bad, seen = [], 0
    for job in sorted(folder.rglob("*.fio")):
        seen += 1
        if job_engine(job) != expected_uring(job.read_text()):
            bad.append(f"{job}: {job_engine(job)}")
        out = job.with_suffix(".json")
        if out.exists():
            text = out.read_text()
            opts = json.loads(text[text.find("{"):])["global options"]
            if (opts.get("ioengine"), opts.get("fixedbufs")) != ("io_uring", "1"):
                bad.append(f"{out}: {opts.get('ioengine')}, fixedbufs {opts.get('fixedbufs')}")
    return bad, seen


def check_io_uring(run) -> None:
    """A PtsRun (tests.support.ptsrun) ran every fio job with io_uring."""
    assert run.run_json["options"]["ioengine"] == "io_uring"
    bad, seen = mismatches(run.folder)
    assert seen > 0 and not bad, bad[:5]
