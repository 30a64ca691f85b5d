"""The IOPS test end to end, as a user runs it: pytest pts/ on a real loop device (4096-byte
sectors, so the 0.5 KiB cells must come out N/A), real fio, short points, a reduced matrix
(declared). Checks the ledger, the raw fio output, and the PDF's text."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from pts.config.spec import load_spec
from tests.support.helpers import loop_device
from tests.support.ptsrun import IOPS, check_outcomes, fio_job, fio_mix, run_pts

pytestmark = [pytest.mark.slow,
              pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "pdftotext")]

SIZE = 128 << 20
MIXES = ["100/0", "65/35", "0/100"]
SIZES = ["1024KiB", "64KiB", "4KiB", "0.5KiB"]
OPERATOR = "E2E Operator"
# A tmpfs loop device as the DUT is host-bound by construction (issue 33 §1); 0.2 and not the
# default 0.8: the ceiling is one 1 s run before the purge and the points come minutes later,
# so a loaded 2-core CI host's load at those two moments, not the product, sets their ratio
# (one 1 s point swings by up to 2x between rounds; at load average 24 more than half the
# window's 4 KiB points fell below a 0.5 share: failed, a926494's note). Judged over the
# window's 15 RND 4 KiB points (5 rounds x 3 mixes, more than half marked), not one. Seen
# under two CPU hogs: ceiling 204,202 IOPS, the points at 0.94-1.36 of it (median 1.09).
# Whether each point is marked is checked against its own stored figures (both ways), so
# the share only decides how many are; 0.2 leaves a 5x fall of the host between the ceiling
# and the window before "more than half" is not met.
HOST_SHARE = "0.2"
REPORT_INFO = 'sponsor = "E2E Lab"\nform_factor = "file on tmpfs"\n'


def words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.fixture(scope="module")
def iops_run(tmp_path_factory):
    reports = tmp_path_factory.mktemp("iops") / "reports"
    info = reports.parent / "report-info.toml"
    info.write_text(REPORT_INFO)
    with loop_device(SIZE, sector=4096) as dev:
        return run_pts(dev, reports, "--point-seconds", "1", "--purge", "trim",
                       "--max-rounds", "10", "--iops-rw-mixes", ",".join(MIXES),
                       "--iops-block-sizes", ",".join(SIZES), "--operator", OPERATOR,
                       "--report-info", str(info), "--host-ceiling", "auto",
                       "--host-bound-share", HOST_SHARE,
                       target=IOPS)


def test_outcome_matches_pytest_result(iops_run):
    end = iops_run.of_type("test_end")[0]
    p = iops_run.proc
    print(f"IOPS integration: {iops_run.wall:.0f} s wall, status {end['status']}, "
          f"rounds {end['rounds']}, steady at {end['steady_round']}")
    # the outcome the recorded rounds give, in the ledger, the report and the exit status
    expected = check_outcomes(iops_run.folder, iops_run.records)["iops"]
    assert p.returncode == (0 if expected.passed else 1), p.stdout + p.stderr
    assert f"PTS report: {iops_run.folder / 'report.pdf'}" in p.stdout
    rounds = iops_run.of_type("round")
    assert len(rounds) == end["rounds"]
    assert rounds[-1]["steady"] == (expected.status == "steady")
    assert all(e["steady"] for e in rounds[-1]["steady_state"].values()) == rounds[-1]["steady"]


def test_ledger_flow_and_wipc_bytes(iops_run):
    kinds = [r["type"] for r in iops_run.records]
    assert kinds[0] == "test_start" and kinds[-1] == "test_end"
    assert kinds.index("purge") < kinds.index("wipc") < kinds.index("point")
    purge = iops_run.of_type("purge")[0]
    assert purge["method"] == "trim" and purge["deviation"] and purge["command"][-1].startswith(
        "/dev/loop")
    wipc = iops_run.of_type("wipc")[0]
    assert wipc["bytes_written"] == wipc["bytes_expected"] == 2 * SIZE
    assert iops_run.notes == []


def test_points_in_spec_order_with_na_cells_and_raw_json(iops_run):
    points = [r for r in iops_run.of_type("point") if r["round"] == 1]
    assert [(p["rw_mix"], p["block_size"]) for p in points] == [
        (m, b) for m in MIXES for b in (1048576, 65536, 4096, 512)]
    for p in points:
        if p["block_size"] == 512:
            assert p["na"] and "smaller than the logical sector size (4096" in p["reason"]
            assert "iops" not in p
        else:
            assert not p["na"] and p["iops"] > 0
            raw = json.loads((iops_run.folder / p["raw"]).read_text())
            assert raw["jobs"][0]["job options"]["bs"] == str(p["block_size"])
            assert p["start"] < p["end"]
    tracked = iops_run.of_type("round")[0]["tracking"]
    assert set(tracked) == {"RND 4KiB 0/100", "RND 64KiB 65/35", "RND 1024KiB 100/0"}


def check_points_are_fios(folder, recs: list[dict]) -> int:
    """Every measured point of every round: its IOPS (read, write and their sum) are fio's
    own in the raw JSON the run folder keeps, from a job that ran the point's block size and
    R/W mix. Returns how many points were checked (never none)."""
    points = [r for r in recs if r["type"] == "point" and not r["na"]]
    assert points
    for p in points:
        job = fio_job(folder, p)
        where = (p["round"], p["rw_mix"], p["block_size"], p["raw"])
        assert (job["job options"]["bs"], fio_mix(job)) == (str(p["block_size"]),
                                                            p["rw_mix"]), where
        read, write = job["read"]["iops"], job["write"]["iops"]
        assert (p["read_iops"], p["write_iops"], p["iops"]) == pytest.approx(
            (read, write, read + write), rel=1e-9), where
    return len(points)


def check_tracking_is_its_rounds_points(recs: list[dict]) -> int:
    """Every round's tracking values are the IOPS of its own points at the spec's tracking
    cells (the points recorded for that round before its round record). Returns how many
    rounds were checked (never none)."""
    cells = load_spec("pts-2.0.2-enterprise").iops.tracking
    points: dict[tuple, dict] = {}
    checked = 0
    for r in recs:
        if r["type"] == "point" and not r["na"]:
            points[(r["round"], r["rw_mix"], r["block_size"])] = r
        elif r["type"] == "round":
            assert r["tracking"] == {c.label: points[(r["round"], str(c.rw_mix), c.block_size)][
                "iops"] for c in cells}, r["round"]
            checked += 1
    assert checked
    return checked


def test_every_point_is_fios_and_every_tracking_value_its_point(iops_run):
    points = check_points_are_fios(iops_run.folder, iops_run.records)
    rounds = check_tracking_is_its_rounds_points(iops_run.records)
    assert rounds == iops_run.of_type("test_end")[0]["rounds"]
    assert points == rounds * (len(MIXES) * (len(SIZES) - 1))     # 0.5 KiB: N/A


def test_run_json_identity_tools_and_deviations(iops_run):
    run = iops_run.run_json
    assert run["device"]["logical_sector"] == 4096 and run["device"]["capacity_bytes"] == SIZE
    assert run["tools"]["fio"].startswith("fio-")
    assert run["spec"]["name"] == "pts-2.0.2-enterprise"
    assert "Test point duration 1 s instead of 60 s." in run["deviations"]


def test_platform_of_a_loop_device(iops_run):
    """A loop device: no PCI function, so link, NUMA node and IRQs are null / "n/a"; the
    block queue and the kernel are real values."""
    plat = iops_run.run_json["platform"]
    assert plat["pcie_link"] is None and plat["device_numa_node"] is None
    assert plat["irq_affinity"] is None
    assert plat["io_scheduler"] and plat["nr_requests"] > 0 and plat["fio_cpus"]
    assert isinstance(plat["warnings"], list)
    text = words(iops_run.pdf_text())
    assert "PCIe link n/a" in text and "IRQ affinity (irq: CPUs) n/a" in text
    assert f"I/O scheduler {plat['io_scheduler']}" in text
    for w in plat["warnings"]:
        assert f"snia-pts platform WARNING: {w}" in iops_run.proc.stdout
        assert f"WARNING: Platform: {w}" in text


def test_report_fields_in_run_json_and_on_page_1(iops_run):
    """--operator and --report-info land in run.json and on page 1 as stored; the loop
    device's adapter and interface are declared as none, not left out."""
    info, system = iops_run.run_json["report_info"], iops_run.run_json["system"]
    assert (info["operator"], info["sponsor"], info["form_factor"]) == (
        OPERATOR, "E2E Lab", "file on tmpfs")
    assert info["file"] == str(iops_run.folder.parents[2] / "report-info.toml")
    assert system["host_adapter"] == {"none": "none (loop device: I/O goes to a file, no "
                                              "adapter)"}
    assert not any("No Test Operator named" in d for d in iops_run.run_json["deviations"])
    page1 = words(subprocess.run(["pdftotext", "-f", "1", "-l", "1", str(
        iops_run.folder / "report.pdf"), "-"], check=True, capture_output=True,
        text=True).stdout)
    assert f"Test Operator {OPERATOR}" in page1 and "Test Sponsor E2E Lab" in page1
    assert "DUT form factor file on tmpfs (given in report info, form_factor)" in page1
    assert f"DUT host adapter {system['host_adapter']['none']}" in page1
    assert "Report Date 2026-11-22 (rendering date, fixed by SOURCE_DATE_EPOCH)" in page1


def test_pdf_has_serial_verdict_and_every_deviation(iops_run):
    text = iops_run.pdf_text()
    assert iops_run.run_json["device"]["serial"] in text
    assert "NOT A COMPLIANT RUN" in text
    deviations = iops_run.run_json["deviations"] + [r["text"] for r in
                                                    iops_run.of_type("deviation")]
    assert any("0.5 KiB cells not measured" in d for d in deviations)
    assert any(d.startswith("Write cache:") for d in deviations)
    for d in deviations:
        assert words(d) in text, d


def test_pdf_has_every_block_size_convergence_and_the_3d_plot(iops_run):
    text = words(iops_run.pdf_text())
    for title in ("3D Plot: IOPS vs Block Size and R/W Mix",
                  *(f"Steady State Convergence: RND {m} ({d}) IOPS, all block sizes"
                    for m, d in (("0/100", "write"), ("100/0", "read")) if m in MIXES)):
        assert title in text, title


def test_host_ceiling_recorded_from_fio_and_the_tmpfs_dut_is_host_bound(iops_run):
    """The host_ceiling record: the test's heaviest points (4 KiB 0/100 and 1 MiB 100/0: the
    tracking cells at the smallest measured and the largest size) ran on a RAM device before
    the purge, each figure fio's own; the DUT, itself a tmpfs loop device, reaches it: its
    4 KiB points are marked host-bound with both figures."""
    ceiling = iops_run.of_type("host_ceiling")
    assert len(ceiling) == 1 and ceiling[0]["error"] is None, ceiling
    c = ceiling[0]
    kinds = [r["type"] for r in iops_run.records]
    assert kinds.index("host_ceiling") < kinds.index("purge")
    assert c["device"] == "tmpfs loop" and c["seconds"] == 1 and c["share"] == 0.2
    assert [(p["label"], p["block_size"]) for p in c["points"]] == [
        ("RND 4KiB 0/100", 4096), ("RND 1024KiB 100/0", 1048576)]
    for p in c["points"]:
        job = json.loads((iops_run.folder / p["raw"]).read_text())["jobs"][0]
        assert job["job options"]["bs"] == str(p["block_size"])
        assert job["job options"]["rw"] == p["rw"]
        assert p["iops"] == pytest.approx(job["read"]["iops"] + job["write"]["iops"], rel=1e-9)
        assert p["mbps"] == pytest.approx(
            (job["read"]["bw_bytes"] + job["write"]["bw_bytes"]) / 1e6, rel=1e-9)
    # every measured point's mark, from its own figures and the ceiling's (the rule of
    # pts.procedure.ceiling: the bound of its block size is the lower of the smallest
    # size's IOPS and the largest size's MB/s over the block size; marked at 0.2 of it),
    # both ways: which figure of the two runs is the lower is the host's, not asserted
    small, large = c["points"]
    points = [r for r in iops_run.of_type("point") if not r["na"]]
    for r in points:
        if small["iops"] <= large["mbps"] * 1e6 / r["block_size"]:
            by, figure, bound, label = "IOPS", r["iops"], small["iops"], small["label"]
        else:
            by, figure, bound, label = "MB/s", r["mbps"], large["mbps"], large["label"]
        expected = {"by": by, "figure": figure, "ceiling": bound, "limit": 0.2 * bound,
                    "ceiling_label": label} if figure >= 0.2 * bound else None
        assert r["host_bound"] == expected, (r["round"], r["rw_mix"], r["block_size"], c)
    # and the tmpfs DUT reaches its host at 4 KiB (not vacuous: marks are made)
    window = iops_run.of_type("test_end")[0]["window"]
    at_4k = [r for r in points if r["block_size"] == 4096
             and window[0] <= r["round"] <= window[1]]
    marked = [r for r in at_4k if r["host_bound"]]
    assert len(marked) > len(at_4k) / 2, [(r["round"], r["rw_mix"], r["iops"]) for r in at_4k]


def test_the_ceilings_tmpfs_loop_device_and_its_file_are_gone_after_the_run(iops_run):
    """The RAM device the run made for its ceiling (a loop device over a 1 GiB-at-most file
    in /dev/shm: RAM) is removed when the run's process ends: the file is gone and no loop
    device is bound to it, not even as '(deleted)'."""
    made = re.search(r"host ceiling: tmpfs loop (/dev/loop\d+) \(.*; backing file "
                     r"(/dev/shm/pts-ceiling-\S+\.img)\) made for it", iops_run.proc.stdout)
    assert made, iops_run.proc.stdout
    loop, backing = made.groups()
    assert not Path(backing).exists(), f"{backing} left behind"
    bound = [line for line in subprocess.run(["losetup", "-a"], capture_output=True, text=True,
                                             check=True).stdout.splitlines() if backing in line]
    assert bound == [], f"{loop} left bound: {bound}"


def test_rounds_stay_pipelined_each_point_started_when_the_one_before_completed(iops_run):
    """Issue 33 §4: each point after the first starts when every thread of the one before
    it has completed its I/O (fio_round's gate; the RND 1 MiB points at TC 4 / QD 32 still
    have I/O in flight after their 1 s runtime on this device): every round ran as one
    pipelined fio run with a barrier before the first point (its threads start together),
    a gate before each later point and one after each earlier point, none was measured
    again, and no recorded point overlapped its predecessor by more than 1 % of a point
    (10 ms)."""
    end = iops_run.of_type("test_end")[0]
    modes = iops_run.of_type("round_mode")
    assert not modes, modes
    points = len(MIXES) * (len(SIZES) - 1)                   # 0.5 KiB: N/A on 4Kn
    for n in range(1, end["rounds"] + 1):
        job = (iops_run.folder / "raw" / "iops" / f"round-{n:02d}" / "round.fio").read_text()
        lines = job.splitlines()
        waits = [ln for ln in lines if ln.startswith("exec_prerun=./pts-gate.sh wait ")]
        dones = [ln for ln in lines if ln.startswith("exec_postrun=./pts-gate.sh done ")]
        assert len(waits) == points and len(dones) == points - 1, (n, job)
        assert re.fullmatch(r"exec_prerun=\./pts-gate\.sh wait 0 \d+ \d+ \d+", waits[0]), job
    for p in iops_run.of_type("point"):
        if not p["na"] and p["overlap_ms"] is not None:
            assert p["overlap_ms"] <= 10, (p["round"], p["rw_mix"], p["block_size"], modes)
