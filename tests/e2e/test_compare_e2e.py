"""Two short IOPS runs on two tiny loop devices (real fio, PTS-E 1.1 with a 2 x 2 matrix,
1 s points, at most 5 rounds), then `python -m pts compare` and `export --json` on their run
folders, and the junit properties the IOPS item recorded (--junitxml). The first run also
runs a short WSAT (11 s) with a datasheet (--datasheet): one requirement met, one not met.
The second runs with `--ioengine io_uring` (issue 33 §2: the IOPS test with io_uring; compare
refuses runs of different engines unless --allow-mixed, then says so on page 1). Both runs
keep their rows in a lab's index as their ledgers grow (PTS_INDEX: a real PostgreSQL 15
database, issue 41 §1/§3), the server stopped after run b's first round and started after it:
b completes, says once that its index is behind, and `pts index` levels it; then `compare
--where ... --index URL` chooses both runs from it."""

import csv
import json
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET

import pytest

from pts.index import target
from tests.support.engine import IO_URING_ARGS, check_io_uring
from tests.support.helpers import REPO, loop_device, pdf_text
from tests.support.ptsrun import IOPS, check_outcomes, run_pts

pytestmark = [pytest.mark.slow,     # ~3 min: two IOPS runs and an 11 s WSAT
              pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "pdftotext")]

SIZE = 64 << 20
DATASHEET = """
[[require]]
test = "wsat"
metric = "ss_iops"
at_least = 1

[[require]]
test = "wsat"
metric = "ss_iops"
at_least = 1e12

[[require]]
test = "iops"
cell = "RND 4KiB 0/100"
metric = "iops"
at_least = 1
"""
# the same settings for both runs (compare refuses runs whose settings differ)
# (PTS-E 1.1: one tracking cell, so a 2 x 2 matrix is a valid reduction; 4 points a round)
ARGS = ("--spec", "pts-e-1.1", "--point-seconds", "1", "--purge", "trim", "--max-rounds", "5",
        "--iops-rw-mixes", "100/0,0/100", "--iops-block-sizes", "1024KiB,4KiB",
        "--wsat-hours", "0.003", "--wsat-fills", "1000")
CELLS = 4


@pytest.fixture(scope="module")
def lab_index(pg_server):
    """The lab's database both runs index themselves into (PTS_INDEX)."""
    return pg_server.database()


def stop_after_round_1(reports, server, stopped: threading.Event, give_up: threading.Event):
    """Stop the PostgreSQL server once the run under `reports` has recorded its first round
    (the run then goes on without its index)."""
    while not give_up.wait(0.1):
        if any('"type": "round"' in f.read_text() for f in reports.glob("*/*/ledger.jsonl")):
            server.stop()
            stopped.set()
            return


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory, lab_index, pg_server):
    root = tmp_path_factory.mktemp("compare")
    (root / "datasheet.toml").write_text(DATASHEET)
    runs = []
    with pytest.MonkeyPatch.context() as env, loop_device(SIZE) as dev:
        env.setenv("PTS_INDEX", lab_index)       # the suites inherit it
        runs.append(run_pts(dev, root / "a", *ARGS, "--junitxml", str(root / "a.xml"),
                            "--datasheet", str(root / "datasheet.toml"),
                            "-k", "iops or saturation or requirement", "-rA", timeout=600))
    # the lab's server stopped mid-run (issue 41 §3): run b completes, its folder whole
    stopped, give_up = threading.Event(), threading.Event()
    stopper = threading.Thread(target=stop_after_round_1,
                               args=(root / "b", pg_server, stopped, give_up))
    with pytest.MonkeyPatch.context() as env, loop_device(SIZE) as dev:
        env.setenv("PTS_INDEX", lab_index)
        stopper.start()
        try:
            runs.append(run_pts(dev, root / "b", *ARGS, *IO_URING_ARGS, target=IOPS,
                                timeout=600))
        finally:
            give_up.set()
            stopper.join()
            pg_server.start()
    assert stopped.is_set(), "run b recorded no round: the server was never stopped"
    return root, runs


def pts(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pts", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=300)


def test_compare_two_real_runs(two_runs):
    root, (a, b) = two_runs
    out = root / "out"
    refused = pts("compare", str(a.folder), str(b.folder), "-o", str(root / "refused"))
    assert refused.returncode == 2 and "I/O engine" in refused.stderr, refused.stderr
    assert not (root / "refused" / "compare.pdf").exists()
    proc = pts("compare", str(a.folder), str(b.folder), "-o", str(out), "--allow-mixed")
    assert proc.returncode == 0, proc.stderr
    with (out / "compare.csv").open() as fh:
        rows = [r for r in csv.DictReader(fh) if r["metric"] == "iops"]
    assert len(rows) == 2 * CELLS
    first = {r["cell"]: float(r["value"]) for r in rows if r["run"] == "1"}
    for r in (r for r in rows if r["run"] == "2"):
        # the difference is the one the two measured values make
        ref = first[r["cell"]]
        assert float(r["diff_pct_vs_run1"]) == pytest.approx(
            100 * (float(r["value"]) - ref) / ref, abs=1e-3)
    text = pdf_text(out / "compare.pdf")
    for words in ("Drive comparison", "Tests compared (present in every run): iops",
                  "Not compared: wsat (not in run 2)",
                  "IOPS by block size, per R/W mix", "Steady-state convergence"):
        assert words in text
    assert a.run_json["device"]["serial"] in text and b.run_json["device"]["serial"] in text
    assert "io_uring" in text and "libaio" in text          # the engines, on page 1
    check_io_uring(b)                                       # the IOPS test ran io_uring


def test_export_json_holds_the_measured_iops_table(two_runs):
    _, (a, _) = two_runs
    proc = pts("export", str(a.folder), "--json")
    assert proc.returncode == 0, proc.stderr
    tests = json.loads(proc.stdout)["tests"]
    assert [t["name"] for t in tests] == ["iops", "wsat"]
    iops = tests[0]
    end = a.of_type("test_end", "iops")[0]
    assert iops["window"] == end["window"] and len(iops["cells"]) == CELLS
    first, last = end["window"]
    cell = next(c for c in iops["cells"] if c["label"] == "RND 4KiB 0/100")
    measured = [p["iops"] for p in a.of_type("point", "iops") if p["rw_mix"] == "0/100"
                and p["block_size"] == 4096 and first <= p["round"] <= last]
    assert cell["metrics"]["iops"] == pytest.approx(sum(measured) / len(measured))


def test_junit_properties_of_the_iops_item(two_runs):
    root, (a, _) = two_runs
    case = next(c for c in ET.parse(root / "a.xml").getroot().iter("testcase")
                if c.get("name") == "test_iops")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    end = a.of_type("test_end", "iops")[0]
    assert props["pts.status"] == end["status"]
    assert props["pts.rounds"] == str(end["rounds"])
    assert props["pts.window"] == f"{end['window'][0]}..{end['window'][1]}"
    assert props["pts.run_folder"] == str(a.folder)
    ev = a.of_type("round")[-1]["steady_state"]["RND 4KiB 0/100"]
    assert float(props["pts.window_average[RND 4KiB 0/100]"]) == pytest.approx(
        ev["average"], rel=1e-5)


def test_datasheet_one_met_one_unmet_requirement(two_runs):
    root, (a, _) = two_runs
    out = a.proc.stdout
    assert "PASSED pts/suite/test_datasheet.py::test_requirement[wsat ss_iops >= 1]" in out
    assert "FAILED pts/suite/test_datasheet.py::test_requirement[wsat ss_iops >= 1e+12]" in out
    assert "measured" in out and "required >= 1,000,000,000,000" in out
    judged = {(r["required"], r["verdict"]) for r in a.of_type("requirement")}
    assert (1, "met") in judged and (1e12, "not met") in judged
    # the IOPS requirement: met only if the IOPS test reached steady state
    iops = next(r for r in a.of_type("requirement") if r["test"] == "iops")
    steady = check_outcomes(a.folder, a.records)["iops"].passed
    assert iops["verdict"] == ("met" if steady else "not met"), iops
    # each requirement item ran right after its test
    kinds = [(r["type"], r.get("test")) for r in a.records
             if r["type"] in ("test_end", "requirement")]
    assert kinds.index(("requirement", "iops")) == kinds.index(("test_end", "iops")) + 1
    text = a.pdf_text()
    assert "Qualification" in text and f"{2 if steady else 1} of 3 datasheet" in text
    # the stored run judged again without a device: same verdicts, exit 1 (one not met)
    proc = pts("qualify", str(a.folder), "--datasheet", str(root / "datasheet.toml"))
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.count("NOT MET") == (1 if steady else 2)


@pytest.mark.needs("pgbench")       # tests/support/postgres.NEEDS_POSTGRESQL: postgresql-15
def test_both_runs_indexed_themselves_and_compare_chooses_them_by_query(two_runs, lab_index):
    """Each suite kept its run's rows in the lab's PostgreSQL as it ran (no `pts index`
    here): finished, with its run.json's serial and the IOPS window means its export gives;
    `compare --where model=M --index URL` picks the same two runs and writes the CSV that
    comparing their folders writes."""
    root, (a, b) = two_runs
    # run b lost its index after round 1 (two_runs): said once, its end says how to level it,
    # its row is not finished until `pts index` catches up from the folder
    said = b.proc.stdout + b.proc.stderr
    assert said.count("snia-pts index: cannot keep") == 1, said[-3000:]
    assert "is not level with this run" in said and \
        f"python -m pts index {root / 'b'}" in said, said[-3000:]
    expected = check_outcomes(b.folder, b.records)["iops"]      # its folder is whole
    assert b.proc.returncode == (0 if expected.passed else 1), said[-3000:]
    conn = target.connect(lab_index)
    try:
        row = conn.rows("SELECT state FROM runs WHERE folder = ?", [str(b.folder)])
    finally:
        conn.close()
    assert row in ([], [{"state": "unfinished"}]), row
    assert pts("index", str(root / "b"), "--index", lab_index).returncode == 0
    conn = target.connect(lab_index)
    try:
        got = {r["folder"]: r for r in conn.rows("SELECT folder, state, serial FROM runs")}
        figures = conn.rows("SELECT folder, cell, value FROM figures WHERE test = 'iops' "
                            "AND metric = 'iops'")
    finally:
        conn.close()
    for run in (a, b):
        row = got[str(run.folder)]
        assert (row["state"], row["serial"]) == ("finished", run.run_json["device"]["serial"])
        exported = json.loads(pts("export", str(run.folder), "--json").stdout)["tests"][0]
        means = {c["label"]: c["metrics"]["iops"] for c in exported["cells"]}
        indexed = {f["cell"]: f["value"] for f in figures if f["folder"] == str(run.folder)}
        assert indexed == pytest.approx(means, rel=1e-9), (indexed, means)
    model = a.run_json["device"]["model"]
    assert b.run_json["device"]["model"] == model
    by_folder, by_query = root / "by-folder", root / "by-query"
    assert pts("compare", str(a.folder), str(b.folder), "--allow-mixed", "-o",
               str(by_folder)).returncode == 0
    chosen = pts("compare", "--where", f"model={model}", "--index", lab_index,
                 "--allow-mixed", "-o", str(by_query))
    assert chosen.returncode == 0, chosen.stderr
    assert str(a.folder) in chosen.stdout + chosen.stderr
    assert (by_query / "compare.csv").read_text() == (by_folder / "compare.csv").read_text()
