"""The RWSW pages (issue 32 §4) of a synthetic RWSW run (tests/support/synthetic/rwsw_run.py):
every number shown compared with the stored records, the workload pages from the ATW's
provenance (and "not in the workload file" for a hand-written ATW), no page misreading the
RWSW points' block size 0 or their missing WIPC, the readings counted by the verdict, and
the same pages as HTML."""

from __future__ import annotations

import math
import re

import pytest

from pts.report.document import build_html, build_pdf
from pts.report.renderers.layout import PageInfo
from pts.report.renderers.pdf import band_rows
from pts.stored.data import load_run
from tests.support.helpers import (
    ledger_by_test,
    of,
    page_headed,
    pdf_page_texts,
    report_page_texts,
    table_row,
)
from tests.support.synthetic import rwsw_run

pytestmark = pytest.mark.needs("pdftotext")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return rwsw_run.build(tmp_path_factory.mktemp("rwsw"), seq_miss=3.0)


@pytest.fixture(scope="module")
def pages(folder) -> list[str]:
    return report_page_texts(folder)


@pytest.fixture(scope="module")
def ledger(folder):
    return ledger_by_test(folder)


def close(cell: str, value: float, decimals: int = 2) -> bool:
    return math.isclose(float(cell.replace(",", "")), value, abs_tol=0.5 * 10 ** -decimals)


def test_atw_target_vs_achieved_from_the_point_records(pages, ledger):
    text = page_headed(pages, "ATW Target vs Achieved")
    points = of(ledger["rwsw-wsat"], "point")
    for s in of(ledger["rwsw-wsat"], "test_start")[0]["parameters"]["atw"]["streams"]:
        got = [x["achieved_pct"] for p in points for x in p["streams"]
               if x["stream"] == s["stream"]]
        miss = max(abs(a - s["share_pct"]) for a in got)
        target, achieved, max_miss, rounds, within = table_row(text, s["stream"])
        assert close(target, s["share_pct"]) and close(achieved, sum(got) / len(got))
        assert close(max_miss, miss) and rounds == str(len(got))
        assert within == ("yes" if miss <= 2.0 else "NO")
    assert "DECLARED: the applied workload did not reproduce the ATW within 2 points for " \
           "SEQ 128K W (max miss 3.00)" in " ".join(text.split())


def test_per_stream_table_from_the_window_points(pages, ledger):
    text = page_headed(pages, "Per-Stream Results")
    recs = ledger["rwsw-streams"]
    first, last = of(recs, "test_end")[-1]["window"]
    for k, t in enumerate(of(recs, "test_start")[0]["parameters"]["tracking"]):
        used = [p for p in of(recs, "point") if p["index"] == k and first <= p["round"] <= last]
        iops, art, nines, steady = table_row(text, t["label"].removesuffix(" IOPS"))
        assert close(iops, sum(p["iops"] for p in used) / len(used), 0)
        assert math.isclose(float(art), sum(p["lat_mean_us"] for p in used) / len(used),
                            rel_tol=5e-4)
        assert nines == "not recorded" and steady == "yes"
    assert "Steady round of the test: 7." in text


def test_workload_pages_from_the_atw_provenance(pages):
    p = rwsw_run.PROVENANCE
    desc = page_headed(pages, "Capture Descriptor")
    assert "WARNING: 7 EVENTS WERE LOST" in desc
    assert table_row(desc, "Host") == ["dbhost"]
    assert table_row(desc, "Process filter") == ["db_bench"]
    cum = page_headed(pages, "Cumulative Workload")
    total = sum(p["cumulative_ios"])
    for n, (name, ios, nbytes) in enumerate(zip(p["cumulative_streams"], p["cumulative_ios"],
                                                p["cumulative_bytes"], strict=True), 1):
        shown = table_row(cum, str(n))
        assert shown[0].removesuffix(" (ATW)") == name and shown[1] == str(ios)
        assert close(shown[2], 100 * ios / total)
        assert close(shown[3], 100 * nbytes / sum(p["cumulative_bytes"]))
    assert "cover 92.00 % of all I/Os" in cum
    assert "2 steps" in page_headed(pages, "IO Stream Map")
    assert "median 4, p95 12, max 20" in page_headed(pages, "Outstanding I/O Histogram")
    atw = page_headed(pages, "Applied Test Workload")
    for name, share, _, _ in rwsw_run.STREAMS:
        assert table_row(atw, name) == [f"{share:.2f}"]
    # one ATW, two tests: its pages once
    assert sum(bool(re.search(r"^Cumulative Workload\s*$", t, re.M)) for t in pages) == 1


def test_a_hand_written_atw_says_what_it_lacks(tmp_path):
    folder = rwsw_run.build(tmp_path, provenance={"made_by": "hand"})
    pdf = folder / "r.pdf"
    pdf.write_bytes(build_pdf(load_run(folder)))
    text = " ".join(" ".join(pdf_page_texts(pdf)).split())
    for what in ("The cumulative workload (every stream of the capture): not in the workload "
                 "file", "The per-step stream map: not in the workload file",
                 "The OIO histogram: not in the workload file"):
        assert what in text
    assert "LOST" not in text


def test_no_page_misreads_block_size_0_or_the_missing_wipc(pages, folder):
    run = load_run(folder)
    assert run.warnings == ()             # no "WIPC wrote 0 of the bytes" for a test without
    assert not any("0 KiB" in p for p in pages)
    assert not any("preconditioning SS" in p for p in pages)
    cells = {t.name: [(c.rw_mix, c.block_size) for c in t.cells] for t in run.tests}
    assert cells["rwsw-streams"] == [("100/0", 4096), ("0/100", 4096), ("0/100", 131072)]
    summary = pages[1] + pages[2] + pages[3]
    assert "RND 4K R 60 %, RND 4K W 30 %, SEQ 128K W 10 %" in " ".join(summary.split())


def test_the_readings_are_listed_and_counted_by_the_verdict(pages, folder):
    run = load_run(folder)
    keys = {r.key for r in run.readings}
    assert {"rwsw_wsat.stop_hours", "rwsw_atw.top_n", "rwsw_streams.round_seconds"} <= keys
    n = sum(1 for r in run.readings if r.status == "reading")
    assert n > 0 and f"COMPLIANT RUN — {n} values are readings of the specification" in \
        " ".join(pages[0].split())
    readings = " ".join(" ".join(pages).split())
    assert "rwsw_wsat.stop_hours" in readings and "rwsw_atw.share_tolerance_pct" in readings


def test_iops_per_round_and_the_html_report(folder, pages):
    for heading in ("IOPS vs Time", "IOPS vs TGBW"):
        assert "rounds 1..7" in page_headed(pages, heading)
    html = build_html(load_run(folder))
    for heading in ("ATW Target vs Achieved", "Per-Stream Results", "Cumulative Workload",
                    "IO Stream Map", "Outstanding I/O Histogram"):
        assert heading in html
    assert html.count("data:image/svg+xml") >= 8


def test_rwsw_pages_name_the_rwsw_spec_in_their_band(folder, pages):
    # The band of an RWSW test's pages names the RWSW spec the run recorded (rwsw_spec),
    # beside the PTS one; a PTS page's band is unchanged.
    run = load_run(folder)
    rwsw = PageInfo("RWSW Multi-WSAT", "IOPS vs Time", "", "", False)
    assert band_rows(run, rwsw, 1, 2)[0][0] == \
        f"SNIA RWSW PTS for Datacenter Storage 1.0.7 (+ {run.spec_title})"
    assert band_rows(run, PageInfo("IOPS", "x", "", "", False), 1, 2)[0][0] == \
        f"SNIA SSS PTS — {run.spec_title}"
    assert sum("SNIA RWSW PTS for Datacenter Storage 1.0.7 (+" in p for p in pages) >= 3
