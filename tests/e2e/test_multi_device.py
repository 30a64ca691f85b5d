"""Several devices in one session (pts.session), as a user runs it: two tiny loop devices
and a third holding a mounted filesystem, a short IOPS test (real fio, reduced matrix, 1 s
points, at most 5 rounds).

First without --skip-refused-devices: the mounted device refuses the whole session and
nothing is written to any device (the other two keep their checksums, no reports folder).
Then with it: the two others run in parallel, each with its run folder, report and verdict;
the parent's items name their device and mirror the children's outcomes (junit XML too);
compare.pdf + compare.csv are written in a session folder, its path printed last."""

import csv
import hashlib
import os
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pts.results.ledger import read_ledger
from tests.support.ptsrun import check_outcomes, run_suite

pytestmark = [pytest.mark.slow,     # ~1 min: two 4-point IOPS runs at once
              pytest.mark.needs("root", "fio", "losetup", "blkdiscard", "mkfs.ext4", "mount",
                                "umount", "pdftotext")]

SIZE = 64 << 20
# pts-e-1.1 tracks RND 4 KiB 0/100 only, so a 2 x 2 matrix keeps its tracking variable
ARGS = ("--destructive", "-k", "iops", "--spec", "pts-e-1.1", "--iops-block-sizes",
        "4KiB,1024KiB", "--iops-rw-mixes", "100/0,0/100", "--point-seconds", "1",
        "--max-rounds", "5", "--purge", "trim")


def sha(dev: str) -> str:
    with open(dev, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def mark(dev: str) -> None:
    """Something to destroy: a pattern at the start and at the end of the device."""
    with open(dev, "r+b") as fh:
        fh.write(b"snia-pts multi-device sentinel\n" * 4096)
        fh.seek(SIZE - 4096)
        fh.write(b"E" * 4096)
        os.fsync(fh.fileno())


@pytest.fixture
def mounted(make_loop, tmp_path):
    dev = make_loop(SIZE)
    subprocess.run(["mkfs.ext4", "-F", "-q", dev], check=True, capture_output=True)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", dev, str(mnt)], check=True)
    (mnt / "precious.txt").write_text("do not destroy\n" * 1000)
    os.sync()
    try:
        yield dev, mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_two_devices_in_parallel_and_a_refused_one(make_loop, mounted, tmp_path):
    a, b = make_loop(SIZE), make_loop(SIZE)
    c, mnt = mounted
    la, lb, lc = (os.path.basename(d) for d in (a, b, c))
    reports = tmp_path / "reports"
    for dev in (a, b):
        mark(dev)
    before = {dev: sha(dev) for dev in (a, b)}

    # one refused device refuses the session: nothing written anywhere
    p = run_suite("--device", a, "--device", c, "--device", b, "--reports-dir", str(reports),
                  *ARGS, timeout=120)
    out = p.stdout + p.stderr
    assert p.returncode == 4, out                               # usage error
    assert f"refusing the whole session: [{lc}] refusing to write to {c}: {c} is mounted " \
           f"on {mnt}" in out
    assert "Nothing was written to any of the 3 devices" in out
    assert "--skip-refused-devices" in out
    assert {dev: sha(dev) for dev in (a, b)} == before
    assert not reports.exists()
    assert (mnt / "precious.txt").read_text() == "do not destroy\n" * 1000

    # --skip-refused-devices: the other two run, in parallel, the refused one is reported
    xml = tmp_path / "session.xml"
    logs_before = set(Path(tempfile.gettempdir()).glob("pts-multi-*"))
    p = run_suite("--device", a, "--device", c, "--device", b, "--reports-dir", str(reports),
                  "--skip-refused-devices", "-v", "-rs", "--junitxml", str(xml),
                  "--render-jobs", "1", *ARGS, timeout=600)
    out = p.stdout + p.stderr
    print(out[-6000:])
    assert (mnt / "precious.txt").read_text() == "do not destroy\n" * 1000
    assert f"snia-pts device [{lc}] {c}: REFUSED, left out (--skip-refused-devices)" in out
    folders, verdicts = {}, []
    for label, dev in ((la, a), (lb, b)):
        # its own run, exactly as a single-device run: progress lines prefixed by device
        assert f"[{label}] snia-pts device: {dev} ({dev})" in out
        assert f"[{label}] [pts iops] round 1/5" in out
        found = [f for f in reports.glob("*/*/run.json")
                 if f'"path": "{dev}"' in f.read_text()]
        assert len(found) == 1, out
        folders[label] = folder = found[0].parent
        assert (folder / "report.pdf").stat().st_size > 0
        assert f"[{label}] PTS report: {folder / 'report.pdf'}" in out
        # --render-jobs 1: the session's one render slot (pts.tools.slots)
        assert f"[{label}] PTS report: rendering in render slot 1 of 1" in out
        records, _ = read_ledger(folder / "ledger.jsonl")
        expected = check_outcomes(folder, [r.data for r in records])["iops"]
        verdict = "PASSED" if expected.passed else "FAILED"
        verdicts.append(verdict)
        assert f"pts/suite/test_iops.py::test_iops[{label}] {verdict}" in out
        assert f"snia-pts [{label}] {dev}: exit status " \
               f"{0 if verdict == 'PASSED' else 1}" in out
        assert sha(dev) != before[dev]                          # it was tested
    assert p.returncode == (0 if verdicts == ["PASSED", "PASSED"] else 1), out
    assert f"SKIPPED [1] pts/suite/test_iops.py:16: [{lc}] {c} refused: refusing to write " \
           f"to {c}" in out
    sessions = list((reports / "sessions").iterdir())
    assert len(sessions) == 1
    pdf, table = sessions[0] / "compare.pdf", sessions[0] / "compare.csv"
    assert pdf.stat().st_size > 0
    rows = list(csv.DictReader(table.open()))
    assert {(r["run"], r["run_id"]) for r in rows} == {
        ("1", folders[la].name), ("2", folders[lb].name)}
    ours = [line for line in p.stdout.splitlines() if line.startswith(("snia-pts", "PTS "))]
    assert ours[-1] == f"PTS comparison: {pdf}"                  # the path printed last
    # the children's logs and render slots are gone with the session
    assert set(Path(tempfile.gettempdir()).glob("pts-multi-*")) == logs_before
    cases = {t.get("name"): t for t in ET.parse(xml).getroot().iter("testcase")}
    assert set(cases) == {f"test_iops[{la}]", f"test_iops[{lb}]", f"test_iops[{lc}]"}
    assert cases[f"test_iops[{lc}]"].find("skipped") is not None
