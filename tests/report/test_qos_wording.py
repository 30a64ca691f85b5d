"""QoS levels everywhere, one wording (issue 12): the stored reference run's report shows the
WSAT's whole-run and final-window histograms with 99.99/99.999/99.9999 % and their I/O counts,
DIRTH/CBW's all-points table with every level of the spec file, and "n/r" with one footnote
wherever an I/O count cannot resolve a level — never the slowest I/O in its place."""

from __future__ import annotations

import re

import pytest

from pts.results.ledger import read_ledger
from tests.support import snapshots
from tests.support.helpers import pdf_page_texts

pytestmark = pytest.mark.needs("pdftotext")


@pytest.fixture(scope="module")
def texts(reference_pdf):
    return pdf_page_texts(reference_pdf, layout=True)


def page(texts: list[str], *needles: str) -> str:
    """The last page holding every needle (the contents page names headings too)."""
    return [t for t in texts if all(n in t for n in needles)][-1]


def row(text: str, *start: str) -> list[str]:
    line = next(ln for ln in text.splitlines() if ln.split()[:len(start)] == list(start))
    return line.split()[len(start):]


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_wsat_whole_run_and_final_window_levels(texts):
    whole = page(texts, "Response Time Histogram: Whole run (TC4/QD32)", "I/Os needed")
    window = page(texts, "Response Time Histogram: Final window (samples", "I/Os needed")
    for text in (whole, window):
        levels = [row(text, pct, "%") for pct in ("99.99", "99.999", "99.9999")]
        assert [lv[-1] for lv in levels] == ["10,000", "100,000", "1,000,000"]   # needed
        assert all(lv[0] != "n/r" for lv in levels[:2])
    assert "json+ total-latency bins of the whole run" in flat(whole)
    assert "completion latency (clat)" in flat(window)


def test_dirth_all_points_every_level_and_n_r(texts):
    text = page(texts, "DIRTH — All Points", "Each value is over the window rounds")
    assert all(f"{p} %" in text for p in ("99.9", "99.99", "99.999", "99.9999"))
    # TC1/QD1 completes about 960,000 I/Os per 60 s point: 99.9999 % needs 1,000,000.
    tc1 = row(text, "1", "1")
    assert tc1[-2] == "n/r" and tc1[-3] != "n/r"
    assert "n/r" not in row(text, "32", "32")
    assert "*" not in text
    assert "n/r = not resolvable" in flat(text) and "99.9999 % needs 1,000,000" in flat(text)


def stored_histogram(test: str, name: str) -> dict:
    """The run's response_histogram record (the last one written: a resumed capture)."""
    found, _ = read_ledger(snapshots.REFERENCE_RUN / "ledger.jsonl")
    return [r.data for r in found if r.data["type"] == "response_histogram"
            and r.data["test"] == test and r.data["name"] == name][-1]


def number(cell: str) -> float:
    return float(cell.replace(",", ""))


@pytest.mark.parametrize("test", ["dirth", "cbw"])
def test_histogram_page_levels_are_the_stored_ones(texts, test):
    """Each level row of the MinIOPS histogram page against its stored record: "n/r" exactly
    where the capture completed fewer than 1 / (1 - p/100) I/Os, else the stored time (to
    the 4 digits printed); the I/O count and the I/Os needed; MRT = the slowest I/O."""
    stored = stored_histogram(test, "MinIOPS")
    text = page(texts, f"{test.upper()} — Response Time Histogram: MinIOPS", "I/Os needed")
    for level in stored["percentiles"]:
        needed = round(1 / (1 - level["pct"] / 100))
        assert level["ios_needed"] == needed
        assert (level["us"] is None) == (stored["ios"] < needed)
        cells = row(text, f"{level['pct']:g}", "%")
        assert [number(c) for c in cells[1:]] == [stored["ios"], needed]
        if level["us"] is None:
            assert cells[0] == "n/r"
        else:
            assert number(cells[0]) == pytest.approx(level["us"], rel=5e-4)
    mrt = row(text, "MRT")
    assert number(mrt[0]) == pytest.approx(stored["lat_max_us"], rel=5e-4)
    # the reference capture completed 491,534 I/Os: 99.9999 % (needs 1,000,000) is n/r
    assert row(text, "99.9999", "%")[0] == "n/r" and row(text, "99.999", "%")[0] != "n/r"


def test_export_json_carries_the_histograms_levels():
    from pts.export.json_doc import document
    tests = {t["name"]: t for t in document(snapshots.REFERENCE_RUN)["tests"]}
    wsat = tests["wsat"]["histograms"]
    assert [h["name"][:12] for h in wsat] == ["Whole run", "Final window"]
    assert all("bins" not in h and [r["pct"] for r in h["percentiles"]] ==
               [99.99, 99.999, 99.9999] for h in wsat)
    assert [h["name"] for h in tests["dirth"]["histograms"]] == ["MaxIOPS", "MidIOPS",
                                                                 "MinIOPS"]
    assert "histograms" not in tests["iops"]
