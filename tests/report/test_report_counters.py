"""device_counters records (emulated SSD's FTL counters): loading and their report page."""

from __future__ import annotations

import dataclasses

import pytest
from reportlab.platypus import Paragraph

from pts.report import render
from pts.report.pages import registry
from pts.report.pages.counters import EMULATOR_TITLE, GENERIC_TITLE
from pts.stored import waf
from pts.stored.data import load_run
from pts.stored.model import RunFolderError
from tests.support.helpers import pdf_text
from tests.support.synthetic.runfactory import RunFolder, build_run, run_json, write_iops_test

PAGE = 4096
# when: host pages, NAND pages, GC runs, erases, free blocks (cumulative, as the emulator
# keeps them). Per round the host writes 100,000 pages; NAND writes 150,000, 270,000,
# 310,000, 325,000, then 320,000: interval WAF 1.50, 2.70, 3.10, 3.25, 3.20, 3.20, 3.20.
STEPS = {
    "after purge": (0, 0, 0, 0, 1000),
    "after WIPC": (500_000, 510_000, 3, 5, 40),
    "after round 1": (600_000, 660_000, 20, 25, 14),
    "after round 2": (700_000, 930_000, 40, 45, 12),
    "after round 3": (800_000, 1_240_000, 62, 66, 12),
    "after round 4": (900_000, 1_565_000, 85, 88, 11),
    "after round 5": (1_000_000, 1_885_000, 107, 110, 12),
    "after round 6": (1_100_000, 2_205_000, 129, 132, 12),
    "after round 7": (1_200_000, 2_525_000, 151, 154, 12),
}


def counters(host, nand, gc, erases, free, **extra) -> dict:
    return {"host_writes": host, "nand_writes": nand, "relocations": nand - host,
            "gc_runs": gc, "erases": erases, "trims": 262_144, "valid_pages": 240_000,
            "free_blocks": free, "page_size": PAGE, **extra}


FTL = {when: counters(*values) for when, values in STEPS.items()}


@pytest.fixture(scope="module")
def emulated_pdf(tmp_path_factory):
    return render(build_run(tmp_path_factory.mktemp("ftl"), emulated=True, counters=FTL))


@pytest.mark.needs("pdftotext")
def test_title_and_hand_computed_interval_waf(emulated_pdf):
    text = pdf_text(emulated_pdf)
    assert EMULATOR_TITLE in text
    # Round 2: (930,000 - 660,000) NAND / (700,000 - 600,000) host pages = 2.70;
    # cumulative 930,000 / 700,000 = 1.33; 700,000 x 4096 B = 2.867 GB, 930,000 -> 3.809 GB.
    assert "after round 2 2.867 3.809 2.70 1.33 40 45 12" in pdf_text(emulated_pdf, layout=True)
    assert "not drive measurements" in text


@pytest.mark.needs("pdftotext")
def test_page_one_gives_each_test_its_waf(emulated_pdf, tmp_path):
    """Issue 33 §3: page 1's Test results table has the test's WAF from the drive's counters
    (after the purge to its last step: 2,525,000 NAND / 1,200,000 host pages = 2.10), the
    same figure as the counters page's and the export's; "-" where no counter reports it."""
    row = "IOPS Steady state reached at round 7 (window 3..7) 7 3..7 "
    assert row + "2.10 Device under test" in pdf_text(emulated_pdf)
    folder = emulated_pdf.parent
    (test,) = load_run(folder).tests
    assert f"{waf.of_test(load_run(folder), test).value:.2f}" == "2.10"
    assert "WAF 2.10 " in pdf_text(emulated_pdf)                 # the counters page's line
    plain = render(build_run(tmp_path / "plain"))              # no device_counters at all
    assert row + "- Device under test" in pdf_text(plain)


@pytest.mark.needs("pdftotext")
def test_no_interval_or_no_host_writes_show_a_dash(emulated_pdf, tmp_path):
    text = pdf_text(emulated_pdf, layout=True)
    # First row: no interval; host 0: no cumulative WAF either.
    assert "after purge 0 0 — — 0 0 1,000" in text
    # Since purge: 510,000 NAND / 500,000 host pages.
    assert "after WIPC 2.048 2.089 1.02 1.02 3 5 40" in text
    idle = {"after WIPC": FTL["after WIPC"],
            "after round 1": counters(500_000, 520_000, 4, 6, 40)}   # host wrote nothing
    text = pdf_text(render(build_run(tmp_path, counters=idle)), layout=True)
    assert "after round 1 2.048 2.130 — 1.04 4 6 40" in text


@pytest.mark.needs("pdftotext")
def test_page_comes_after_the_tests_other_pages(emulated_pdf):
    text = pdf_text(emulated_pdf)
    assert text.rindex("2D Plot: IOPS vs Block Size") < text.rindex(EMULATOR_TITLE)


@pytest.mark.needs("pdftotext")
def test_run_without_counters_has_no_such_page(tmp_path):
    text = pdf_text(render(build_run(tmp_path)))
    assert EMULATOR_TITLE not in text and GENERIC_TITLE not in text


@pytest.mark.needs("pdftotext")
def test_other_source_gets_the_generic_title(tmp_path):
    text = pdf_text(render(build_run(tmp_path, counters=FTL, counters_source="smart-log")))
    assert GENERIC_TITLE in text
    assert EMULATOR_TITLE not in text and "emulator model" not in text


def test_every_test_gets_the_page_not_only_iops(tmp_path):
    run = load_run(build_run(tmp_path, counters=FTL))
    other = dataclasses.replace(run.tests[0], name="throughput", title="Throughput")
    headings = [f.getPlainText() for f in registry.pages_for(run, other)
                if isinstance(f, Paragraph)]
    assert EMULATOR_TITLE in headings


def test_counters_load_in_ledger_order(tmp_path):
    test = load_run(build_run(tmp_path, counters=FTL)).tests[0]
    assert [c.when for c in test.counters] == list(STEPS)
    after_2 = test.counters[3]
    assert (after_2.round, after_2.source, after_2.host_bytes) == (2, "emulator", 700_000 * PAGE)
    assert after_2.waf_since(test.counters[2]) == pytest.approx(2.7)
    assert test.counters[1].waf_since(test.counters[0]) == pytest.approx(1.02)
    assert test.counters[0].waf is None   # nothing written yet


def test_later_record_for_the_same_step_wins(tmp_path):
    run = RunFolder(tmp_path / "r", run_json(emulated=True))
    write_iops_test(run, (1.0, 1.0), finished=False, counters={k: FTL[k] for k in list(STEPS)[:4]})
    run.record("device_counters", test="iops", when="after round 1", round=1,
               source="emulator", counters=counters(610_000, 670_000, 21, 26, 13))
    test = load_run(run.path).tests[0]
    assert [c.when for c in test.counters] == ["after purge", "after WIPC", "after round 2",
                                               "after round 1"]
    assert test.counters[-1].host_writes == 610_000


def test_unknown_and_missing_counters_are_tolerated(tmp_path):
    partial = {"host_writes": 10, "nand_writes": 25, "page_size": PAGE, "waf": 2.5,
               "reads": 7}
    test = load_run(build_run(tmp_path, counters={"after round 3": partial})).tests[0]
    (c,) = test.counters
    assert (c.round, c.waf, c.gc_runs, c.free_blocks) == (3, 2.5, None, None)


def test_round_number_read_from_when_if_missing(tmp_path):
    run = RunFolder(tmp_path / "r", run_json())
    write_iops_test(run, (1.0,), finished=False)
    run.record("device_counters", test="iops", when="after round 1", source="emulator",
               counters=FTL["after round 1"])
    assert load_run(run.path).tests[0].counters[0].round == 1


@pytest.mark.parametrize("bad", [{"counters": "garbage"}, {"counters": None}, {}])
def test_malformed_record_names_file_and_line(tmp_path, bad):
    run = RunFolder(tmp_path / "r", run_json())
    write_iops_test(run, (1.0,), finished=False)
    run.record("device_counters", test="iops", when="after round 1", round=1,
               source="emulator", **bad)
    line = len(run.ledger.read_text().splitlines())
    with pytest.raises(RunFolderError,
                       match=rf"ledger\.jsonl line {line}: device_counters record has no "
                             r"\"counters\" object"):
        load_run(run.path)


def test_record_without_when_names_the_line(tmp_path):
    folder = build_run(tmp_path, counters={"after WIPC": counters(1, 1, 0, 0, 0)})
    lines = (folder / "ledger.jsonl").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "device_counters" in text)
    lines[line - 1] = lines[line - 1].replace('"when": "after WIPC", ', "")
    (folder / "ledger.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(RunFolderError, match=rf"line {line}: device_counters record has no "
                                             r"\"when\""):
        load_run(folder)


def test_same_data_same_bytes_with_counters(tmp_path):
    folder = build_run(tmp_path, emulated=True, counters=FTL)
    first = render(folder, tmp_path / "a.pdf").read_bytes()
    assert render(folder, tmp_path / "b.pdf").read_bytes() == first
