"""The SNIA header block of every test page states what ran (issue 21 §1): for each test of
the stored reference run (IOPS, both Throughput sizes, Latency, WSAT, DIRTH and CBW with
their preconditioning phases, HIR, XSR) every page's rendered block, read back with
pdftotext, equals what its run.json and ledger say (tests/support/headers.py computes the expected
cells from the raw records). A variant of the run (HIR not steady, DIRTH under --purge none,
CBW's write cache wrong, XSR's last group missing) takes the other branches; the check is
shown to fail on a header that does not match its data."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from pathlib import Path

import pytest

from pts.report import render
from pts.report.pages import dirth_cbw
from pts.report.renderers.layout import PageMarker
from pts.stored.data import load_run
from tests.support import headers, snapshots
from tests.support.helpers import pdf_text
from tests.support.synthetic import synthrun, synthrun_more

pytestmark = pytest.mark.needs("pdftotext")

TESTS = ("iops", "throughput-1024k", "throughput-128k", "latency", "wsat",
         "dirth-precondition", "dirth", "cbw-precondition", "cbw", "hir", "xsr")


@pytest.fixture(scope="module")
def reference(reference_pdf) -> tuple[Path, list[str], dict[str, int]]:
    bad, seen = headers.mismatches(reference_pdf, snapshots.REFERENCE_RUN)
    return reference_pdf, bad, seen


def test_the_reference_run_holds_every_test_type():
    _, by_test = headers.load(snapshots.REFERENCE_RUN)
    assert tuple(n for n, recs in by_test.items()
                 if any(r["type"] == "test_start" for r in recs)) == TESTS


@pytest.mark.parametrize("name", TESTS)
def test_every_header_cell_matches_the_data(reference, name):
    _, bad, seen = reference
    assert seen.get(name, 0) >= 2, f"{name}: {seen.get(name, 0)} pages with a header block"
    mine = [b for b in bad if f"({name})" in b]
    assert not mine, "\n".join(mine)


def _patched(tmp: Path, patch) -> Path:
    """A copy of the reference run whose ledger records went through patch(record)."""
    folder = tmp / "run"
    shutil.copytree(snapshots.REFERENCE_RUN, folder)
    lines = (folder / "ledger.jsonl").read_text().splitlines()
    out = []
    for line in lines:
        rec = patch(json.loads(line))
        if rec is not None:
            out.append(json.dumps(rec))
    (folder / "ledger.jsonl").write_text("\n".join(out) + "\n")
    return folder


def _variant(rec: dict) -> dict | None:
    t, kind = rec.get("test"), rec["type"]
    if t == "hir" and kind == "hir_baseline":
        rec["steady"] = False
    if t == "hir" and kind == "test_end":
        rec |= {"status": "not_steady", "steady_round": None}
    if t == "dirth-precondition" and kind == "purge":
        rec |= {"method": "none", "command": None, "steps": []}
    if t == "cbw-precondition" and kind == "write_cache":
        rec |= {"actual": "write back", "settable": False}
    if t == "xsr" and kind == "xsr_group" and rec["group"] == 3:
        return None
    return rec


@pytest.fixture(scope="module")
def variant(tmp_path_factory) -> tuple[Path, dict[str, str], list[str], dict[str, int]]:
    folder = _patched(tmp_path_factory.mktemp("variant"), _variant)
    pdf = render(folder, folder / "report.pdf")
    return pdf, _blocks(pdf), *headers.mismatches(pdf, folder)


def _blocks(pdf: Path) -> dict[str, str]:
    """Each test title's first header block, its columns joined."""
    out: dict[str, str] = {}
    for words in headers.pdf_pages(pdf):
        block, title = headers.header_block(words), headers.page_test(words)
        if block and title and title not in out:
            out[title] = " | ".join(block)
    return out


def test_variant_headers_match_their_data(variant):
    _, blocks, bad, seen = variant
    assert set(seen) == set(TESTS) and not bad, "\n".join(bad)
    # The branches the variant takes, as the reader sees them.
    assert "Pre-Condition 2 RND 4 KiB 0/100, TC/QD 4/32 (TOIO 128), NOT steady (rounds " \
           "3..7)" in blocks["Host Idle Recovery"]
    assert "Purge none (--purge none: no purge ran) (under dirth-precondition)" in \
        blocks["DIRTH"]
    assert "Write cache required WCD, actual write back; DOES NOT MATCH; not settable" in \
        blocks["CBW"]
    assert re.search(r"Group 3 SEQ 1024 KiB W, \d+ s \(not run\)", blocks["Cross Stimulus "
                                                                       "Recovery"])


def test_a_header_that_differs_from_its_data_fails(reference, tmp_path):
    """The reference PDF against data it does not show: a reduced DIRTH grid, another CBW
    mix, a HIR purge of another method. Each is named."""
    def other(rec: dict) -> dict:
        p = rec.get("parameters") or {}
        if rec["type"] == "test_start" and rec["test"] == "dirth":
            p["thread_counts"] = [32, 1]
        if rec["type"] == "test_start" and rec["test"] == "cbw":
            p["block_size_mix"] = p["block_size_mix"][:-1]
        if rec["type"] == "purge" and rec["test"] == "hir":
            rec["method"] = "ata-security-erase"
        return rec

    pdf, _, _ = reference
    bad, _ = headers.mismatches(pdf, _patched(tmp_path, other))
    failed = {re.match(r"page \d+ \((\S+)\) (.*?):", b).groups() for b in bad}
    assert failed == {("dirth", "Test parameters"), ("cbw", "Test parameters"),
                      ("hir", "Set-up parameters")}


# ----------------------------------------------------------------------------- the pages

def test_dirth_all_points_labels_each_column(reference):
    pdf, _, _ = reference
    text = pdf_text(pdf)
    page = text[text.index("DIRTH — All Points"):]
    page = page[:page.index("DIRTH — System CPU")]
    assert "% µs (mean)" in page and "(mean of maxima)" in page
    assert "MRT is the mean of the rounds' maxima" in page
    assert "each percentile is the mean of the rounds' own percentiles" in page
    assert "Values are means" not in page


def test_hir_baseline_says_whether_it_is_steady(variant, reference):
    steady, not_steady = pdf_text(reference[0]), pdf_text(variant[0])
    assert "Baseline: " in steady and "steady-state baseline (rounds 3..7)" in steady
    assert "baseline: preconditioning rounds 3..7, NOT steady" in not_steady
    assert "steady-state baseline" not in not_steady
    assert "SS baseline" not in steady + not_steady


def _texts(flowables) -> str:
    return " ".join(getattr(f, "text", "") for f in flowables if not isinstance(f, PageMarker))


def test_tc_qd_page_uses_the_recorded_values():
    run = load_run(snapshots.REFERENCE_RUN)
    test = next(t for t in run.tests if t.name == "dirth")
    _, by_test = headers.load(snapshots.REFERENCE_RUN)
    pre = {(r["thread_count"], r["queue_depth"], r["seconds"]) for r in by_test["dirth"]
           if r["type"] == "prewrite" and r["when"].startswith("before round")}
    text = _texts(dirth_cbw._tc32_page(run, test))
    tc, qd = test.parameters["thread_count"], test.parameters["queue_depth"]
    assert f"TC{tc}, every QD" in text and f"tracking variable is the TC{tc}/QD{qd}" in text
    assert [f"RND 0/100 at TC{a}/QD{b} for {s} s" for a, b, s in pre] == \
        re.findall(r"RND 0/100 at TC\d+/QD\d+ for \d+ s", text)
    # Without the recorded TC: said so, no guessed TC32.
    params = {k: v for k, v in test.parameters.items() if k != "thread_count"}
    text = _texts(dirth_cbw._tc32_page(run, dataclasses.replace(test, parameters=params)))
    assert "thread count was not recorded" in text and "TC32" not in text


def test_summary_setup_rows_agree_with_the_data(reference):
    """The run summary: the DIRTH demand phase's purge and WIPC rows tell one story (no
    "purged, FOB state" for a phase that continues another); CBW's block sizes are the mix
    its test_start recorded, with its zones; XSR ran access groups, not rounds."""
    pdf, _, _ = reference
    text = pdf_text(pdf)
    summary = text[:text.index("Contents — Table of contents")]
    _, by_test = headers.load(snapshots.REFERENCE_RUN)
    start = {n: next(r for r in recs if r["type"] == "test_start")["parameters"]
             for n, recs in by_test.items()}
    dirth = summary[summary.index("DIRTH test setup"):summary.index("CBW Preconditioning test")]
    assert "none in this phase: the drive was purged once, at the start of " \
           "dirth-precondition" in dirth
    assert "fresh-out-of-box" not in dirth and "FOB" not in dirth
    cbw = summary[summary.index("CBW test setup"):summary.index("Host Idle Recovery test")]
    assert f"Block sizes {', '.join(start['cbw']['block_size_mix'])}" in cbw
    zones = start["cbw"]["random_distribution"].removeprefix("zoned:").split(":")
    assert f"LBA zones (% of I/Os / % of LBAs) {', '.join(zones)}" in cbw
    assert "Block sizes (inner loop)" not in cbw
    groups = len({r["group"] for r in by_test["xsr"] if r["type"] == "xsr_group"})
    assert re.search(rf"Cross Stimulus Recovery Completed \(no steady state required\): "
                     rf"{groups} access groups done {groups} groups (?!1\.\.)", summary)


def test_summary_precondition_phase_shows_no_tc_qd_grid(reference):
    """The preconditioning phase runs one point (TC/QD of its test_start), not the demand
    grid its parameters also carry."""
    text = pdf_text(reference[0])
    pre = text[text.index("CBW Preconditioning test setup"):text.index("CBW test setup")]
    _, by_test = headers.load(snapshots.REFERENCE_RUN)
    p = next(r for r in by_test["cbw-precondition"] if r["type"] == "test_start")["parameters"]
    assert f"TC / QD (TOIO) {p['thread_count']} / {p['queue_depth']}" in pre
    assert "TC (outer loop)" not in pre and "QD (inner loop)" not in pre
    assert f"Preconditioning round {p['round_seconds']} s of writes, the last " \
           f"{p['point_seconds']} s measured" in pre


def test_a_table_continued_onto_another_page_has_the_header_block_there_too(tmp_path):
    """The full 7 x 7 DIRTH grid: its All Points table runs over more than one page, and
    the pages it continues onto carry the same header block (mismatches() names any test
    page without one)."""
    shape = dataclasses.replace(synthrun.REFERENCE, dirth_grid=None)
    folder = synthrun.build(tmp_path / "run", shape, extra=(synthrun_more.dirth,))
    pdf = render(folder, tmp_path / "report.pdf")
    bad, seen = headers.mismatches(pdf, folder)
    assert not bad, "\n".join(bad)
    titles = [headers.page_test(w) for w in headers.pdf_pages(pdf)]
    all_points = [n for n, w in enumerate(headers.pdf_pages(pdf))
                  if "DIRTH — All Points" in " ".join(x[3] for x in headers._lines(w)[1])]
    assert len(all_points) >= 2, f"the All Points table fits one page: {all_points}"
    assert seen["dirth"] == titles.count("DIRTH")
