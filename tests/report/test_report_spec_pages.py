"""The pages a reader of SNIA PTS reports expects beyond the tracking variables (issue 11 §1):
IOPS convergence of every block size and the IOPS 3D plot, Throughput read and write
convergence apart, Latency 3D plots of ART and MRT, the QoS table and the per-cell
response-time histograms. Read back page by page with pdftotext."""

from __future__ import annotations

import json
import re

import pytest

from pts.config.datasheet import parse
from pts.export.json_doc import document
from pts.qualify.judge import ERROR, MET, judge
from pts.report import render
from pts.report.renderers import chart_base, charts_3d, histogram_chart
from pts.stored.data import load_run
from pts.stored.figures import datasheet_vocabulary
from tests.support.helpers import pdf_page_texts
from tests.support.synthetic.runfactory import STEADY_CURVE, RunFolder, run_json, write_iops_test
from tests.support.synthetic.runfactory_extra import write_latency_test, write_throughput_test

pytestmark = pytest.mark.needs("pdftotext")


def first_page(texts: list[str], heading: str, after: int = 0) -> int:
    """Index of the first page from `after` on whose text holds `heading` (the contents
    page names every heading too: start after it)."""
    return next(i for i, t in enumerate(texts) if i >= after and heading in t)


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    run = RunFolder(tmp_path_factory.mktemp("spec") / "run", run_json())
    write_iops_test(run, STEADY_CURVE)
    write_throughput_test(run, 1048576)
    write_throughput_test(run, 131072)
    write_latency_test(run)
    return render(run.path)


@pytest.fixture(scope="module")
def texts(full_run):
    return pdf_page_texts(full_run)


@pytest.fixture(scope="module")
def body(texts):
    """The page after the table of contents: headings found from here on are pages."""
    return first_page(texts, "IOPS test", first_page(texts, "contents of this report") + 1)


def test_iops_convergence_of_every_block_size_follows_the_tracking_page(texts, body):
    tracking = first_page(texts, "Steady State Convergence", body)
    write = first_page(texts, "Steady State Convergence: RND 0/100 (write) IOPS, all block "
                              "sizes", body)
    read = first_page(texts, "Steady State Convergence: RND 100/0 (read) IOPS, all block "
                             "sizes", body)
    window = first_page(texts, "Steady State Measurement Window", body)
    assert tracking < write < read < window
    assert "rounds 1..7" in texts[write]


def test_iops_3d_plot_follows_table_and_2d_plot(texts, body):
    table = first_page(texts, "Measurement Window Tabular Data: IOPS", body)
    plot_2d = first_page(texts, "2D Plot: IOPS vs Block Size", body)
    plot_3d = first_page(texts, "3D Plot: IOPS vs Block Size and R/W Mix", body)
    assert table < plot_2d < plot_3d < first_page(texts, "Throughput 1024 KiB test", body)
    assert "N/A: block size 512 B is smaller than the logical sector" in texts[plot_3d]


def test_throughput_read_and_write_convergence_on_separate_pages(texts, body):
    for size in ("1024 KiB", "128 KiB"):
        start = first_page(texts, f"Throughput {size} test", body)
        read = first_page(texts, "Steady State Convergence: SEQ read MB/s", start)
        write = first_page(texts, "Steady State Convergence: SEQ write MB/s", start)
        assert start == read < write == read + 1
        assert "SEQ write MB/s" not in texts[read].split("Steady State Convergence")[1]
    assert "SEQ read and write MB/s" not in " ".join(texts[body:])


def test_latency_3d_plots_of_art_and_mrt(texts, body):
    start = first_page(texts, "Latency test", body)
    art = first_page(texts, "3D Plot: ART vs Block Size and R/W Mix", start)
    mrt = first_page(texts, "3D Plot: MRT vs Block Size and R/W Mix", start)
    assert first_page(texts, "2D Plot: MRT", start) < art < mrt
    assert "Maximum response time (MRT" in texts[mrt]


def _row(page: str, label: str) -> list[str]:
    line = next(ln for ln in page.splitlines() if ln.strip().startswith(label))
    return line.split()[len(label.split()):]


def test_qos_table_levels_and_not_resolvable(full_run):
    texts = pdf_page_texts(full_run, layout=True)
    page = texts[max(i for i, t in enumerate(texts) if "Response Time QoS:" in t)]
    # 1,200,000 I/Os per point: every level resolved (base 80 µs x the window's mean
    # multiplier 1.024: 81.92; the tail's 3x and 8x bins: 245.8 and 655.4).
    assert _row(page, "100/0, 4 KiB") == ["81.93", "81.92", "245.8", "655.4", "1,638",
                                          "1,200,000"]
    # 200,000 I/Os: 99.9999 % is not resolvable.
    assert _row(page, "0/100, 4 KiB")[1:5] == ["61.44", "163.8", "n/r", "409.6"]
    # 50,000 I/Os: only 99.99 %.
    assert _row(page, "0/100, 8 KiB")[2:4] == ["n/r", "n/r"]
    assert "0.5 KiB" not in page.split("Response Time QoS:")[1]   # N/A cells have no row
    flat = re.sub(r"\s+", " ", page)
    assert "n/r = not resolvable" in flat
    assert "99.9999 % needs 1,000,000" in flat


def test_response_time_histograms_one_page_per_mix(texts, body):
    start = first_page(texts, "Latency test", body)
    found = [t for t in texts[start:] if "Response Time Histograms: RND" in t]
    assert len(found) == 3     # one per R/W mix, a panel per block size with bins
    assert all("rounds 3..7" in t and "one response-time axis" in t for t in found)
    assert first_page(texts, "3D Plot: MRT", start) < texts.index(found[0])


def test_histogram_panels_are_deterministic_png():
    bins = {20_000: 9_000, 60_000: 900, 400_000: 1}
    cells = [("RND 4KiB 0/100", bins, {"ART": 25.0, "99.99 %": 60.0, "MRT": 400.0}),
             ("RND 8KiB 0/100", {}, {})]
    # two drawings, not the process's chart cache (a second call returns the first's bytes)
    png = histogram_chart.panels.draw_anew(cells, "t")
    assert png.startswith(b"\x89PNG") and png == histogram_chart.panels.draw_anew(cells, "t")
    assert b"matplotlib" not in png.lower()


def test_without_the_fio_json_the_levels_are_na_not_guessed(tmp_path):
    run = RunFolder(tmp_path / "run", run_json())
    write_latency_test(run, keep_raw=False)
    texts = pdf_page_texts(render(run.path), layout=True)
    page = texts[max(i for i, t in enumerate(texts) if "Response Time QoS:" in t)]
    assert _row(page, "100/0, 4 KiB")[1:4] == ["n/a", "n/a", "n/a"]
    flat = re.sub(r"\s+", " ", page)
    assert "n/a = no latency bins" in flat and "n/r =" not in flat
    assert not any("Response Time Histograms: RND" in t for t in texts)


def test_3d_chart_is_deterministic_and_handles_gaps():
    sizes, mixes = [1048576, 4096, 512], ["100/0", "0/100"]
    values = {("100/0", 1048576): 3000.0, ("100/0", 4096): 100000.0,
              ("0/100", 1048576): 1500.0, ("0/100", 4096): 40000.0,
              ("100/0", 512): None}
    png = charts_3d.bars.draw_anew(sizes, mixes, values, "IOPS", "t")     # not the cache's
    assert png.startswith(b"\x89PNG") and png == charts_3d.bars.draw_anew(sizes, mixes, values,
                                                                          "IOPS", "t")
    assert b"matplotlib" not in png.lower()
    linear = charts_3d.bars(sizes, mixes, {("0/100", 4096): 20.0}, "ART (µs)", "t")
    assert linear.startswith(b"\x89PNG")
    assert charts_3d.bars(sizes, mixes, {}, "IOPS", "t").startswith(b"\x89PNG")


def test_log_ticks_are_values_not_exponents():
    assert charts_3d._log_ticks(100, 100000) == [100, 1000, 10000, 100000]
    assert charts_3d._log_ticks(10, 100) == [10, 20, 50, 100]
    assert chart_base.tick(10000.0) == "10,000"
    assert (chart_base.tick(100.0), chart_base.tick(2.5)) == ("100", "2.5")


def test_five_nines_table_says_not_resolvable_too(full_run):
    """The 5 9s matrix follows the same rule as the QoS table: the 8 KiB points (50,000
    I/Os) cannot resolve 99.999 %, the 4 KiB ones (200,000 and more) can."""
    texts = pdf_page_texts(full_run, layout=True)
    page = texts[max(i for i, t in enumerate(texts)
                     if "Measurement Window Tabular Data: ART, 5 9s" in t)]
    tables = page.split("99.999 % response time (5 9s)")[1].split("Maximum response time")[0]
    assert _row(tables, "8 KiB") == ["n/r", "n/r", "n/r"]
    assert "n/r" not in " ".join(_row(tables, "4 KiB"))
    flat = re.sub(r"\s+", " ", page)
    assert "n/r = not resolvable" in flat and "(99.999 % needs 100,000)" in flat
    assert "fewest: 50,000 I/Os" in flat
    assert "largest one measured" not in flat


def test_datasheet_never_judges_an_unresolvable_five_nines(tmp_path):
    run = RunFolder(tmp_path / "run", run_json())
    write_latency_test(run)
    loaded = load_run(run.path)

    def judged(cell: str):
        (r,) = parse(f'[[require]]\ntest="latency"\ncell="{cell}"\nmetric="lat_p99999_us"\n'
                     'at_most=1e9', datasheet_vocabulary(), "ds.toml")
        return judge(loaded, r)

    short = judged("RND 8KiB 0/100")       # 50,000 I/Os per point
    assert short.verdict == ERROR and short.measured is None
    assert "99.999 % response time is not resolvable" in short.text
    assert "fewer than 100,000 I/Os" in short.text
    ok = judged("RND 4KiB 0/100")          # 200,000 I/Os per point
    assert ok.verdict == MET and ok.measured is not None


def test_export_json_holds_the_qos_table(tmp_path):
    run = RunFolder(tmp_path / "run", run_json())
    write_iops_test(run, STEADY_CURVE)
    write_latency_test(run)
    doc = json.loads(json.dumps(document(run.path)))
    iops, latency = doc["tests"]
    assert "qos" not in iops
    rows = {r["label"]: r for r in latency["qos"]}
    assert len(rows) == 6 and "RND 0.5KiB 0/100" not in rows
    levels = {lv["pct"]: lv for lv in rows["RND 4KiB 0/100"]["levels"]}
    assert levels[99.999]["state"] == "ok" and levels[99.999]["us"] == pytest.approx(163.84)
    assert levels[99.9999] == {"pct": 99.9999, "state": "n/r", "us": None,
                               "ios_needed": 1_000_000}
    assert rows["RND 4KiB 0/100"]["fewest_ios"] == 200_000
