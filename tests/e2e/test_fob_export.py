"""--fob-sweep and `python -m pts export`: the IOPS test on a loop device with one
informative round between purge and WIPC; its records are `fob_point`, never `point`; the
report has the informative FOB page; the export gives FOB, steady state and their ratio per
cell, from the run folder only."""

import csv
import io
import subprocess
import sys

import pytest

from tests.support.helpers import REPO, loop_device
from tests.support.ptsrun import run_pts

pytestmark = [pytest.mark.slow,
              pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "pdftotext")]

SIZE = 64 << 20
# PTS-E 1.1 (one tracking cell: a 2 x 2 matrix is a valid reduction), two read mixes
MIXES, SIZES = "100/0,65/35,0/100", "64KiB,4KiB"
CELLS = 6


@pytest.fixture(scope="module")
def iops(tmp_path_factory):
    reports = tmp_path_factory.mktemp("fob") / "reports"
    with loop_device(SIZE) as dev:
        return run_pts(dev, reports, "-k", "iops", "--point-seconds", "1", "--purge", "trim",
                       "--max-rounds", "5", "--iops-rw-mixes", MIXES, "--iops-block-sizes",
                       SIZES, "--spec", "pts-e-1.1", "--fob-sweep")


def test_fob_round_between_purge_and_wipc(iops):
    kinds = [r["type"] for r in iops.records]
    first_fob = kinds.index("fob_point")
    assert kinds.index("purge") < first_fob < kinds.index("wipc") < kinds.index("point")
    fob = iops.of_type("fob_point")
    assert len(fob) == CELLS and {p["round"] for p in fob} == {0}
    assert all(p["iops"] > 0 and (iops.folder / p["raw"]).is_file() for p in fob)
    assert "raw/iops/round-00/" in fob[0]["raw"]
    assert any("--fob-sweep" in d for d in iops.run_json["deviations"])
    print(f"FOB sweep run: {iops.wall:.0f} s wall")


def test_report_has_the_informative_fob_page(iops):
    text = iops.pdf_text()
    assert "FOB vs Steady State (informative): IOPS" in text
    assert "INFORMATIVE, not a PTS result" in text


def test_fob_read_figures_are_marked_not_device_reads(iops):
    """The FOB round reads LBAs the TRIM emptied: the read mixes' FOB figures are marked on
    the FOB page, warned about on the summary and in pytest's terminal summary."""
    text = " ".join(iops.pdf_text().split())
    warning = ("iops: the --fob-sweep FOB figures of R/W mixes 100/0, 65/35 are not device "
               "reads: they read LBAs the purge emptied")
    assert f"WARNING: {warning}" in text
    assert f"PTS WARNING: {warning}" in iops.proc.stdout
    assert "* NOT A DEVICE READ: the FOB figures of R/W mixes with reads (100/0, 65/35)" in text
    assert text.count("NOT a device read *") == 4      # 2 read mixes x 2 block sizes


def test_export_csv_fob_ss_ratio_per_cell(iops):
    p = subprocess.run([sys.executable, "-m", "pts", "export", str(iops.folder), "--csv"],
                       cwd=REPO, capture_output=True, text=True, check=True)
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert len(rows) == CELLS and {r["test"] for r in rows} == {"iops"}
    fob = {(r["rw_mix"], int(r["block_size"])): r["iops"] for r in iops.of_type("fob_point")}
    for r in rows:
        first, ss = float(r["fob"]), float(r["steady_state"])
        assert first == pytest.approx(fob[(r["rw_mix"], int(r["block_size"]))])
        assert float(r["fob_ss_ratio"]) == pytest.approx(first / ss)
    bad = subprocess.run([sys.executable, "-m", "pts", "export", "/nonexistent", "--csv"],
                         cwd=REPO, capture_output=True, text=True)
    assert bad.returncode == 2 and "does not exist" in bad.stderr
