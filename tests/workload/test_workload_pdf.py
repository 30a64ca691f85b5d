"""`python -m pts workload CAPTURE --pdf`: the capture's workload pages without a drive, on a
synthetic capture (CaptureWriter): the descriptor's numbers, the cumulative table's shares equal
to the characterisation's, the lost events loud; bad input writes nothing."""

from __future__ import annotations

import math

import pytest

from pts.cli.main import main
from pts.workload.characterise import characterise
from tests.support.helpers import pdf_page_texts, table_row
from tests.support.synthetic_capture import R, W, rows, write

pytestmark = pytest.mark.needs("pdftotext")


@pytest.fixture()
def capture(tmp_path):
    ios = ([(i, i + 3, 8 * i, 4096, R) for i in range(8)] + [(9, 10, 5000, 65536, W)]
           + [(10, 11, 90000, 8192, W), (10.5, 11.5, 70000, 8192, W)])
    return write(tmp_path / "c.capture", rows(*ios), seconds=0.012, lost_events=5,
                 device="/dev/loop9", process_filter="db_bench", host="dbhost")


def test_pdf_pages_hold_the_characterisations_figures(capture, tmp_path):
    out = tmp_path / "w.pdf"
    assert main(["workload", str(capture), "--pdf", "-o", str(out), "--step", "0.005",
                 "--top-n", "2"]) == 0
    pages = pdf_page_texts(out, layout=True)
    ch = characterise(capture, step_s=0.005, top_n=2)
    desc = pages[0]
    assert "WARNING: 5 EVENTS WERE LOST" in desc
    assert table_row(desc, "Device") == ["/dev/loop9"] and table_row(desc, "Host") == ["dbhost"]
    assert table_row(desc, "Process filter") == ["db_bench"]
    assert table_row(desc, "Lost events") == ["5"]
    assert table_row(desc, "Steps") == [f"{len(ch.steps)} of 0.005 s"]
    assert table_row(desc, "Events")[0].startswith(f"{ch.events} (I/Os {ch.ios},")
    table = next(p for p in pages if "Cumulative Workload" in p)
    assert len(ch.streams) == 4
    for n, s in enumerate(ch.streams, 1):
        name, ios, by_ios, by_bytes = table_row(table, str(n))
        assert name.removesuffix(" (ATW)") == s.key.label and int(ios) == s.ios
        assert math.isclose(float(by_ios), s.share_ios_pct, abs_tol=0.005)
        assert math.isclose(float(by_bytes), s.share_bytes_pct, abs_tol=0.005)
        assert name.endswith(" (ATW)") == (n <= 2)
    covered = sum(s.share_ios_pct for s in ch.streams[:2])
    assert f"cover {covered:.2f} % of all I/Os" in table
    oio = next(p for p in pages if "Outstanding I/O Histogram" in p)
    assert f"median {ch.oio_median}, p95 {ch.oio_p95}, max {ch.oio_max}" in oio
    assert f"{len(ch.steps)} steps" in next(p for p in pages if "IO Stream Map" in p)


def test_bad_capture_writes_no_pdf(capture, tmp_path, capsys):
    bad = tmp_path / "bad.capture"
    bad.write_bytes(capture.read_bytes()[:-100])
    out = tmp_path / "w.pdf"
    assert main(["workload", str(bad), "--pdf", "-o", str(out)]) == 2
    assert "bad.capture" in capsys.readouterr().err and not out.exists()
