"""`--ioengine io_uring` runs every test type (issue 33 §2 acceptance): ONE run of every PTS
test of the default spec and the four RWSW tests on a tmpfs loop device, as short as they
go (1 s points, 5 rounds, one latency point, the DIRTH/CBW grid 32,1 x 32,1, spec durations
x 0.0003, WSAT to a time limit), and every fio job file and raw JSON of the run shows
io_uring with its fixed buffers and registered files, and every page's header says so.
No existing e2e run covers every test type; this is the smallest that does."""

from __future__ import annotations

import json

import pytest

from tests.support import headers
from tests.support.helpers import REPO, loop_device, pdf_text
from tests.support.ptsrun import run_pts
from tests.support.rwsw import atw_text

pytestmark = [pytest.mark.slow, pytest.mark.needs("root", "fio", "losetup", "blkdiscard",
                                                  "pdftotext")]

SIZE = 64 << 20
ATW = atw_text("two streams", (("RND", "R", "4KiB", 70.0), ("RND", "W", "4KiB", 30.0)),
              thread_count=1, queue_depth=4) + """
[[step]]
start_s = 0.0
seconds = 1.0
oio = 2
shares = { "RND 4K R" = 70.0, "RND 4K W" = 30.0 }

[provenance]
made_by = "hand, tests/e2e/test_ioengine.py"
"""
# exact texts of the spec files replaced: the IOPS and latency matrices cut to one tracked
# point each, HIR's preconditioning rounds to one interval, rwsw-dirth to one sweep round
CUTS = {"pts-2.0.2-enterprise.toml": {
            "precondition_round_intervals = 30": "precondition_round_intervals = 1",
            '    { rw_mix = "65/35", block_size = "64KiB" },\n'
            '    { rw_mix = "100/0", block_size = "1024KiB" },\n': "",
            'rw_mixes = ["100/0", "65/35", "0/100"]    # outer loop (§7.3)\n'
            'block_sizes = ["8KiB", "4KiB", "0.5KiB"]  # inner loop (§7.3)':
            'rw_mixes = ["0/100"]\nblock_sizes = ["4KiB"]'},
        "rwsw-1.0.7.toml": {"demand_to_steady_state = true": "demand_to_steady_state = false"}}
TYPES = {"iops", "throughput-1024k", "throughput-128k", "latency", "wsat",
         "dirth-precondition", "dirth", "cbw-precondition", "cbw", "hir", "xsr",
         "rwsw-wsat", "rwsw-streams", "rwsw-replay", "rwsw-dirth"}
URING = ("ioengine=io_uring", "fixedbufs=1", "registerfiles=1")


@pytest.fixture(scope="module")
def uring(tmp_path_factory):
    base = tmp_path_factory.mktemp("ioengine")
    specs = base / "specs"
    specs.mkdir()
    for path in (REPO / "specs").glob("*.toml"):
        text = path.read_text(encoding="utf-8")
        for old, new in CUTS.get(path.name, {}).items():
            assert old in text, (path.name, old)
            text = text.replace(old, new)
        (specs / path.name).write_text(text, encoding="utf-8")
    (base / "w.toml").write_text(ATW)
    with pytest.MonkeyPatch.context() as mp, loop_device(SIZE) as dev:
        mp.setenv("PTS_SPECS_DIR", str(specs))
        return run_pts(dev, base / "reports", "--ioengine", "io_uring", "--workload",
                       str(base / "w.toml"), "--point-seconds", "1", "--max-rounds", "5",
                       "--purge", "trim", "--no-purge-probe", "--iops-block-sizes", "4KiB",
                       "--iops-rw-mixes", "0/100", "--wsat-hours", "0.00125",
                       "--wsat-fills", "1000", "--host-ceiling", "off",
                       "--time-scale", "0.0003", "--hir-repetitions", "1",
                       "--dirth-thread-counts", "32,1", "--dirth-queue-depths", "32,1",
                       timeout=900)


def test_every_test_type_ran_with_io_uring(uring):
    """Every test ran to its end (steady or not: 5 rounds of 1 s on a RAM device need not
    settle) with no fio error; every job file of the run holds io_uring's options."""
    assert uring.run_json["options"]["ioengine"] == "io_uring"
    out = uring.proc.stdout
    assert "FioFailed" not in out and "FioError" not in out and "\nERROR " not in out, \
        out[-3000:]
    ended = {r["test"] for r in uring.of_type("test_end")}
    assert TYPES <= ended, TYPES - ended
    jobs = sorted(uring.folder.rglob("*.fio"))
    tests = {p.relative_to(uring.folder / "raw").parts[0] for p in jobs}
    assert TYPES <= tests, TYPES - tests
    wrong = [str(p) for p in jobs if _global(p) != _expected(p.read_text())]
    assert not wrong, wrong[:5]


def _global(path) -> list[str]:
    """The engine options of the job file's [global] section, in order."""
    head = path.read_text().split("\n\n", 1)[0].splitlines()
    return [g for g in head if g.split("=")[0] in ("ioengine", "fixedbufs", "registerfiles",
                                                   "hipri")]


def _expected(text: str) -> list[str]:
    """io_uring, fixed buffers, registered files; a replayed iolog (rwsw-replay) without
    registered files (fio refuses them there, pts.tools.fio.Fio.placed)."""
    return [o for o in URING if o != "registerfiles=1" or "\nread_iolog=" not in text]


def test_fio_json_of_every_run_says_io_uring(uring):
    """fio's own record of what ran: each job's options in its JSON output."""
    found = {}
    for path in uring.folder.rglob("*.json"):
        if path.with_suffix(".fio").exists():
            doc = json.loads(path.read_text()[path.read_text().find("{"):])
            found[path] = {doc["global options"].get("ioengine"),
                           doc["global options"].get("fixedbufs")}
    assert len(found) >= len(TYPES)
    assert {p: f for p, f in found.items() if f != {"io_uring", "1"}} == {}


def test_every_page_header_shows_io_uring(uring):
    """Every test page's Test platform column equals run.json's (the engine from its
    options; tests/support/headers.py)."""
    bad, seen = headers.mismatches(uring.folder / "report.pdf", uring.folder)
    assert set(seen) >= TYPES, TYPES - set(seen)
    platform = [b for b in bad if "Test platform" in b.split("\n")[0]]
    assert not platform, platform[:5]
    text = pdf_text(uring.folder / "report.pdf")
    assert text.count("io_uring (fixed buffers, registered files)") >= sum(seen.values())
