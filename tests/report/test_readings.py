"""The report's "Readings of the specification" section and the verdict that counts them
(pts/stored/readings.py, pages/readings.py, run/verdict.py, document.py; issue 21 §2):
built from the readings the run stored in its test_start records, the count in the verdict
line equal to the rows listed, and its page number the real page of the section."""

import json
import re
import subprocess

import pytest

from pts.cli.main import main
from pts.config.spec import load_spec
from pts.export.json_doc import document
from pts.stored.data import load_run
from tests.support.synthetic.runfactory import build_run

pytestmark = pytest.mark.needs("pdftotext")

TITLE = "Readings of the specification"
# Stored data only: a reading no spec file has, so a report built from the spec file
# instead of the run would not show it.
STORED_ONLY = {"key": "iops.stored_only", "value": [7, 11], "status": "reading",
               "source": "a source only this run recorded", "alternatives": ["13: elsewhere"]}


def page_text(pdf, n: int) -> str:
    return subprocess.run(["pdftotext", "-f", str(n), "-l", str(n), "-layout", str(pdf), "-"],
                          capture_output=True, text=True, check=True).stdout


def render(folder):
    assert main(["report", str(folder)]) == 0
    return folder / "report.pdf"


def test_compliant_run_on_readings_counts_them_and_names_the_sections_page(tmp_path):
    stored = load_spec("pts-e-1.1").readings_for("iops") + [STORED_ONLY]
    readings = [r for r in stored if r["status"] == "reading"]
    assert len(readings) == 3            # PTS-E 1.1's TC and QD, and the stored-only one
    pdf = render(build_run(tmp_path, readings=stored))
    first = re.sub(r"\s+", " ", page_text(pdf, 1))
    m = re.search(r"COMPLIANT RUN — (\d+) values are readings of the specification "
                  r"\(page (\d+)\)", first)
    assert m, first
    assert "NOT A COMPLIANT" not in first
    count, page = int(m[1]), int(m[2])
    section = page_text(pdf, page)
    assert re.search(rf"^{TITLE}\s*$", section, re.M), section     # the heading, on page X
    assert f"{count} values of this run are readings of the specification." in section
    # The rows listed: one per stored reading, with its key, value and source.
    # (a long key wraps inside its cell: a row is the line its key starts on)
    listed = re.findall(r"^\s*((?:common|iops|purge_probe)\.\w+)", section, re.M)
    assert len(listed[:count]) == count == len(readings)
    for shown, r in zip(listed, readings, strict=False):
        assert r["key"].startswith(shown) and len(shown) >= 15
    flat = re.sub(r"\s+", " ", section)
    assert "7, 11" in flat and "a source only this run recorded" in flat and "13: elsewhere" in flat
    # The suite's own choices (purge probe) are listed apart and not counted.
    assert "Values of this suite's own" in flat
    choices = [r["key"] for r in stored if r["status"] == "choice"]
    assert len(listed) == count + len(choices)
    assert all(k.startswith(shown) for shown, k in zip(listed[count:], choices, strict=True))
    # The contents page and every page's footer give the same page.
    contents = [t for t in (re.sub(r"\s+", " ", page_text(pdf, n)) for n in (2, 3))
                if "Table of contents" in t]
    assert len(contents) == 1 and f"{TITLE} {page}" in contents[0]
    assert f"(page {page})" in re.sub(r"\s+", " ", page_text(pdf, page + 1))
    # The IOPS set-up table on the summary counts the test's own readings.
    summary = " ".join(re.sub(r"\s+", " ", page_text(pdf, n)) for n in range(1, page))
    assert "Readings of the specification 3 values (listed in the section" in summary


def test_readings_are_taken_from_the_stored_run_not_the_spec_file(tmp_path):
    folder = build_run(tmp_path, readings=[STORED_ONLY])
    run = load_run(folder)
    assert [(r.key, r.value, r.source, r.alternatives, r.tests) for r in run.readings] == [
        ("iops.stored_only", [7, 11], "a source only this run recorded", ("13: elsewhere",),
         ("iops",))]
    assert run.verdict.readings == 1 and run.verdict.compliant
    assert run.verdict.text == "COMPLIANT RUN — 1 values are readings of the specification"
    exported = document(folder)
    assert exported["verdict"]["readings"] == 1
    assert exported["readings"] == [STORED_ONLY | {"alternatives": ["13: elsewhere"],
                                                   "tests": ["iops"]}]


def test_no_readings_plain_verdict_and_not_compliant_unchanged(tmp_path):
    plain = load_run(build_run(tmp_path, "plain", readings=[]))
    assert plain.verdict.text == "COMPLIANT RUN" and plain.readings == ()
    emulated = load_run(build_run(tmp_path, "emu", emulated=True,
                                  readings=[STORED_ONLY]))
    assert emulated.verdict.text == "NOT A COMPLIANT RUN"


def test_reference_run_lists_the_readings_of_its_advanced_tests():
    """The stored reference run (DIRTH, CBW, HIR, XSR, ...): every reading its test_start
    records hold is in the run view, once, with the tests that used it."""
    from tests.support.snapshots import REFERENCE_RUN
    run = load_run(REFERENCE_RUN)
    ledger = [json.loads(line) for line in (REFERENCE_RUN / "ledger.jsonl").open()]
    stored = {r["key"] for rec in ledger if rec["type"] == "test_start"
              for r in rec["parameters"].get("readings", ())}
    assert {r.key for r in run.readings} == stored
    assert {"cbw.block_align", "hir.wait_state_naming", "xsr.group_hours",
            "dirth.art_ceiling_us"} <= stored
    align = next(r for r in run.readings if r.key == "cbw.block_align")
    assert (align.value, align.tests) == ("4KiB", ("cbw",))


def test_readings_table_keeps_every_key_and_test_name_whole(reference_pdf):
    """The readings pages of the reference run: each key and each "Used by" test name is one
    word of the page's text (a column too narrow breaks it mid-word: "throughpu" / "t")."""
    from tests.support.snapshots import REFERENCE_RUN
    pdf = reference_pdf
    run = load_run(REFERENCE_RUN)
    pages = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                           text=True, check=True).stdout.split("\f")
    text = "\n".join(p for p in pages if TITLE in p)
    words = set(re.split(r"[\s,]+", text))
    assert run.readings
    for r in run.readings:
        assert r.key in words, r.key
        assert set(r.tests) <= words, (r.key, r.tests)
