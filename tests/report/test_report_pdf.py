"""The rendered PDF, read back with pdftotext (poppler-utils)."""

from __future__ import annotations

import re
import subprocess

import pytest

from pts.report import render
from pts.report.renderers import charts
from tests.support.helpers import pdf_text
from tests.support.synthetic.runfactory import FALLING_CURVE, SERIAL, STEADY_CURVE, build_run

pytestmark = pytest.mark.needs("pdftotext")

RUN_DEVIATIONS = ["Test point duration 1 s instead of 60 s.",
                  "IOPS matrix reduced to block sizes 1024 KiB, 4 KiB, 0.5 KiB x R/W mixes "
                  "100/0, 65/35, 0/100 (spec: 8 x 7)."]
LEDGER_DEVIATIONS = ["0.5 KiB cells not measured (N/A): smaller than the logical sector size "
                     "(4096 bytes)."]


@pytest.fixture(scope="module")
def deviating(tmp_path_factory):
    folder = build_run(tmp_path_factory.mktemp("dev"), run_deviations=RUN_DEVIATIONS,
                       ledger_deviations=LEDGER_DEVIATIONS, purge_method="trim",
                       purge_deviation=True)
    return render(folder)


@pytest.fixture(scope="module")
def deviating_text(deviating):
    return pdf_text(deviating)


def test_report_lands_in_the_run_folder(deviating):
    assert deviating.name == "report.pdf" and deviating.is_absolute()
    assert deviating.read_bytes().startswith(b"%PDF-")


def test_identity_and_verdict(deviating_text):
    assert SERIAL in deviating_text
    assert "SNIA SSS PTS — SNIA SSS PTS 2.0.2 Enterprise" in deviating_text
    assert "NOT A COMPLIANT RUN" in deviating_text
    assert "960.2 GB (960,197,124,096 bytes)" in deviating_text


def test_every_deviation_verbatim(deviating_text):
    for text in RUN_DEVIATIONS + LEDGER_DEVIATIONS:
        assert text in deviating_text


def test_page_titles_and_page_numbers(deviating_text):
    for title in ("Run summary", "Steady State Convergence",
                  "Steady State Measurement Window: RND 4KiB 0/100",
                  "Steady State Measurement Window: RND 1024KiB 100/0",
                  "Measurement Window Tabular Data", "2D Plot: IOPS vs Block Size"):
        assert title in deviating_text
    pages = re.findall(r"Page (\d+) of (\d+)", deviating_text)
    total = int(pages[0][1])
    assert [int(n) for n, _ in pages] == list(range(1, total + 1))


def test_window_and_status(deviating_text):
    assert "Steady state reached at round 7 (window 3..7)" in deviating_text
    assert "rounds 3..7" in deviating_text


def test_iops_table_rows(deviating):
    text = pdf_text(deviating, layout=True)
    assert "Block size R/W 100/0 R/W 65/35 R/W 0/100" in text
    # Window rounds 3..7 scale the base IOPS by 1.08, 1.04, 1, 1, 1: a mean of 1.024.
    # 1024 KiB: 3,000 / 2,000 / 1,500 IOPS at round 5 -> 3,072 / 2,048 / 1,536.
    assert "1024 KiB 3,072 2,048 1,536" in text
    # 4 KiB: 100,000 / 60,000 / 40,000 -> 102,400 / 61,440 / 40,960.
    assert "4 KiB 102,400 61,440 40,960" in text
    assert "0.5 KiB N/A N/A N/A" in text


def test_evidence_table(deviating_text):
    assert "y = -800.0·R + 44,960" in deviating_text   # fit of 43,200 .. 40,000 IOPS
    assert "7.81 % of average; limit 20.00 %" in deviating_text


def test_outline_has_the_headings(deviating):
    data = deviating.read_bytes()
    assert b"/Outlines" in data
    assert b"(IOPS test)" in data


def test_compliant_run(tmp_path):
    text = pdf_text(render(build_run(tmp_path)))
    assert "COMPLIANT RUN" in text
    # the whole phrase: the OCP page's "NOT APPLICABLE" holds "NOT A" too
    assert "NOT A COMPLIANT RUN" not in text
    assert "Deviations from the specification (0) None recorded." in text


def test_never_steady_run(tmp_path):
    text = pdf_text(render(build_run(tmp_path, curve=FALLING_CURVE)))
    assert "STEADY STATE NOT ACHIEVED after 7 rounds" in text
    assert "NOT A COMPLIANT RUN" in text


def test_incomplete_run(tmp_path):
    text = pdf_text(render(build_run(tmp_path, curve=STEADY_CURVE[:6], finished=False)))
    assert "INCOMPLETE" in text and "window 2..6" in text


def test_torn_last_line_is_tolerated_and_noted(tmp_path):
    folder = build_run(tmp_path)
    with (folder / "ledger.jsonl").open("a") as fh:
        fh.write('{"type": "round", "test": "io')
    text = pdf_text(render(folder))
    assert "torn last record skipped" in text


def test_same_data_same_bytes(tmp_path):
    folder = build_run(tmp_path)
    first = render(folder, tmp_path / "a.pdf").read_bytes()
    second = render(folder, tmp_path / "b.pdf").read_bytes()
    assert first == second


def test_charts_are_deterministic_png_without_software_tag():
    # two drawings, not the process's chart cache (chart_base.drawn_once: a second call
    # returns the first call's bytes, whatever drawing again would give)
    args = ([1, 2, 3, 4, 5], {"x": [5.0, 4.0, 3.0, 3.1, 3.0]}, (1, 5), "IOPS", "t")
    png = charts.convergence.draw_anew(*args)
    assert png.startswith(b"\x89PNG") and png == charts.convergence.draw_anew(*args)
    assert b"matplotlib" not in png.lower()


def test_moved_run_folder_gives_the_same_bytes(tmp_path):
    folder = build_run(tmp_path)
    first = render(folder, tmp_path / "a.pdf").read_bytes()
    moved = folder.rename(tmp_path / "moved")
    assert render(moved, tmp_path / "b.pdf").read_bytes() == first


def test_point_timing_and_round_mode_changes_are_on_the_report(tmp_path):
    """The convergence page says how the points ran against each other (largest overlap,
    from the points' overlap_ms) and every fallback to stonewalled rounds."""
    reason = "round 4: RND 4KiB 0/100 overlapped the previous point by 700 ms"
    text = " ".join(pdf_text(render(build_run(tmp_path, round_modes={4: reason}))).split())
    assert ("a point's I/O overlapped the previous point's by 4 ms at most (round 2, 65/35 "
            "1024 KiB) (limit: 1 % of a point = 600 ms)") in text
    assert f"Round mode stonewalled: {reason}." in text



def test_every_page_footer_gives_the_verdict_and_why(deviating):
    """A page read on its own says the run is not compliant and why (the reason itself, not
    a count of reasons), in the footer line of every page."""
    from pts.stored.data import load_run
    reason = "3 deviation(s) from the specification (listed)"
    assert load_run(deviating.parent).verdict.reasons == (reason,)
    pages = subprocess.run(["pdftotext", "-layout", str(deviating), "-"], capture_output=True,
                           text=True, check=True).stdout.split("\f")[:-1]
    assert len(pages) > 5
    for n, page in enumerate(pages, 1):
        footer = [line for line in page.splitlines() if "from run.json + ledger.jsonl" in line]
        assert len(footer) == 1, f"page {n}: {footer}"
        assert footer[0].rstrip().endswith(f"NOT A COMPLIANT RUN — {reason}, see page 1"), \
            f"page {n}: {footer[0]}"


def test_footer_verdict_cuts_what_does_not_fit_and_keeps_the_page_pointer():
    from reportlab.pdfbase.pdfmetrics import stringWidth

    from pts.report.renderers.pdf import BOLD, footer_verdict
    from pts.stored.verdict import Verdict
    v = Verdict(False, "NOT A COMPLIANT RUN", ("4 deviation(s) from the specification "
                                               "(listed)", "IOPS: not steady", "XSR: aborted"))
    text = footer_verdict(v, 200)
    assert text.startswith("NOT A COMPLIANT RUN — 4 dev") and text.endswith("…, see page 1")
    assert stringWidth(text, BOLD, 7) <= 200
    assert footer_verdict(v, 2000) == ("NOT A COMPLIANT RUN — 4 deviation(s) from the "
                                      "specification (listed); IOPS: not steady; XSR: "
                                      "aborted, see page 1")


def test_a_counting_pass_draws_nothing_and_finds_the_same_pages(reference_render):
    """Pass 1 of the layout (pdf.lay_out(draw=False)) only counts pages: every flowable is
    placed as when drawn (the same pages for headings and markers, the same page count) and
    nothing is drawn (no chart image, no table text in its bytes). The report itself is
    pass 2's (tests/report/test_page_snapshots.py and the same-bytes tests above)."""
    import copy

    from reportlab.platypus import Image

    from pts.report.renderers import pdf
    view = reference_render.laid.view
    drawn = pdf.lay_out(view, copy.deepcopy(reference_render.story), total_pages=None)
    counted = pdf.lay_out(view, copy.deepcopy(reference_render.story), total_pages=None,
                          draw=False)
    assert (counted.page, counted.headings, counted.markers) == \
        (drawn.page, drawn.headings, drawn.markers) == \
        (reference_render.laid.total, reference_render.laid.headings,
         reference_render.laid.markers)
    # 66 charts; reportlab stores an image drawn twice once (two charts are alike)
    charts = sum(isinstance(f, Image) for f in reference_render.story)
    assert charts == 66 and 60 < drawn.buf.getvalue().count(b"/Subtype /Image") <= charts
    assert b"/Subtype /Image" not in counted.buf.getvalue()
    assert len(counted.buf.getvalue()) < len(drawn.buf.getvalue()) // 20
