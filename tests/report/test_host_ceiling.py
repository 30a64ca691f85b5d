"""The host ceiling on the report, in the JSON export and in compare (issue 33 §1), from a
synthetic run (tests/support/synthetic/host_ceiling_run.py): page 1's declared warning with
the counts of the ledger, the "not measured" note with its error, each test's Host Ceiling
page (every figure of the host_ceiling record and of each host-bound point), the dagger on
exactly the result-table cells holding a host-bound window point, the same in HTML; a run
without host-bound points says nothing of the kind."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest
from reportlab.platypus import Paragraph

from pts.compare.pdf import run_header
from pts.export.json_doc import document
from pts.report.document import build_html
from pts.report.pages import registry, warnings
from pts.stored.data import load_run
from tests.support.helpers import ledger_by_test, of, report_page_texts, table_row
from tests.support.synthetic import host_ceiling_run, rwsw_replay_dirth

pytestmark = pytest.mark.needs("pdftotext")
DAGGER = "\u2020"
REFERENCE = Path(__file__).parents[1] / "data" / "reference-run"
UNIT = {"IOPS": "IOPS", "MB/s": "MB/s", "latency": "\u00b5s"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return host_ceiling_run.build(tmp_path_factory.mktemp("hc"))


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    return host_ceiling_run.build(tmp_path_factory.mktemp("hc-clean"), bound=False)


@pytest.fixture(scope="module")
def pages(folder):
    return report_page_texts(folder)


@pytest.fixture(scope="module")
def clean_pages(clean):
    return report_page_texts(clean)


def flat(text: str) -> str:
    return " ".join(text.split())


def number(text: str) -> float:
    return float(text.replace(",", ""))


def close(text: str, value: float) -> bool:
    """A figure as the report prints it (about four significant digits) against the record."""
    return math.isclose(number(text), value, rel_tol=5e-4)


def window_points(recs: list[dict]) -> list[dict]:
    first, last = of(recs, "test_end")[-1]["window"]
    return [p for p in of(recs, "point") if first <= p["round"] <= last and not p["na"]]


def bound_in_window(recs: list[dict]) -> list[dict]:
    return [p for p in window_points(recs) if p.get("host_bound")]


def titled(pages: list[str], title: str, subtitle: str) -> str:
    found = [p for p in pages if re.search(rf"^\s*{re.escape(title)} — {subtitle}\s", p, re.M)]
    assert found, f"no page {title} — {subtitle}"
    return found[0]


def test_page_one_warns_with_the_ledger_counts(pages, folder):
    ledger = ledger_by_test(folder)
    page1 = flat(pages[0])
    for test in ("iops", "latency"):
        recs = ledger[test]
        bound, points = bound_in_window(recs), window_points(recs)
        assert bound            # the synthetic run has some: the check below means something
        by = {}
        for p in bound:
            by[p["host_bound"]["by"]] = by.get(p["host_bound"]["by"], 0) + 1
        order = [k for k in UNIT if k in by]
        first, last = of(recs, "test_end")[-1]["window"]
        title = of(recs, "test_start")[0]["title"]
        text = (f"WARNING: Host-bound: {len(bound)} of {len(points)} points of {title} "
                f"(measurement window, rounds {first}..{last}) are host-bound ("
                + ", ".join(f"by {k}: {by[k]}" for k in order)
                + "): their figures may be the host's, not the drive's")
        assert text in page1
    assert of(ledger["wsat"], "wsat_result")[0]["host_bound"]["by"] == "IOPS"
    assert ("WARNING: Host-bound: the result of Write Saturation is host-bound (by IOPS: 1): "
            "its figures may be the host's, not the drive's") in page1


def test_page_one_notes_a_ceiling_not_measured_with_why(pages, folder):
    ledger = ledger_by_test(folder)
    page1 = flat(pages[0])
    for recs in ledger.values():
        ceiling = of(recs or [], "host_ceiling")
        if not ceiling:
            continue
        title = of(recs, "test_start")[0]["title"]
        note = f"Note: {title}: host ceiling not measured ({ceiling[0]['error']})"
        assert (note in page1) == (ceiling[0]["error"] is not None), note
    assert "host ceiling not measured (--host-ceiling off)" in page1


def test_host_ceiling_pages_show_the_records(pages, folder):
    ledger = ledger_by_test(folder)
    for test in ("iops", "latency", "wsat"):
        recs = ledger[test]
        rec = of(recs, "host_ceiling")[0]
        text = titled(pages, of(recs, "test_start")[0]["title"], "Host Ceiling")
        assert table_row(text, "RAM-backed device") == [rec["device"]]
        assert table_row(text, "fio engine") == [rec["engine"]]
        assert table_row(text, "CPUs (fio cpus_allowed)") == [rec["cpus"]]
        for job in rec["points"]:
            rw, bs, jobs, iops, mbps, lat = table_row(text, job["label"])
            assert rw == job["rw"] and bs == f"{job['block_size'] / 1024:g} KiB"
            assert jobs.replace(" ", "") == f"{job['numjobs']}x{job['iodepth']}"  # layout
            assert close(iops, job["iops"]) and close(mbps, job["mbps"])
            assert close(lat, job["lat_mean_us"])
        bound = [of(recs, "wsat_result")[0]] if test == "wsat" else bound_in_window(recs)
        lines = re.findall(rf"^{DAGGER} (.*)$", text, re.M)
        assert len(lines) == len(bound)
        for p, line in zip(bound, lines, strict=True):
            assert_point_line(p, line)
    text = titled(pages, "Throughput 1024 KiB", "Host Ceiling")
    assert "NOT MEASURED: --host-ceiling off." in flat(text)


def assert_point_line(p: dict, line: str) -> None:
    """"round 4, RND 4KiB 100/0: 104,000 IOPS; host ceiling 110,000 IOPS (limit 88,000 IOPS;
    ceiling job ...)": the point, its figure and the ceiling, each from its record."""
    hb = p["host_bound"]
    unit = re.escape(UNIT[hb["by"]])
    m = re.search(rf"(?:round (\d+), )?[^:]+: (?:mean latency )?([\d,.]+) {unit}; host "
                  rf"(?:ceiling|floor) ([\d,.]+) {unit} \(limit ([\d,.]+) {unit}; ceiling job "
                  rf"(.+)\)", line)
    assert m, line
    if "round" in p:
        assert int(m.group(1)) == p["round"]
    assert close(m.group(2), hb["figure"]) and close(m.group(3), hb["ceiling"])
    assert close(m.group(4), hb["limit"]) and m.group(5) == hb["ceiling_label"]


def marked_cells(recs: list[dict]) -> set[tuple[str, int]]:
    return {(p["rw_mix"], p["block_size"]) for p in bound_in_window(recs)}


def assert_marks(text: str, recs: list[dict], rows: int) -> None:
    """Every table row of the page: a cell is marked exactly when the ledger has a
    host-bound window point for it; `rows` block-size rows are checked in all."""
    mixes = of(recs, "test_start")[0]["parameters"]["rw_mixes"]
    sizes = {f"{bs / 1024:g} KiB": bs for bs in of(recs, "test_start")[0]["parameters"]
             ["block_sizes"]}
    marked, seen = marked_cells(recs), 0
    for line in text.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if cells[0] in sizes and len(cells) == len(mixes) + 1:
            seen += 1
            for mix, cell in zip(mixes, cells[1:], strict=True):
                assert cell.endswith(DAGGER) == ((mix, sizes[cells[0]]) in marked), line
    assert seen == rows and marked


def test_result_tables_mark_the_host_bound_cells(pages, folder):
    ledger = ledger_by_test(folder)
    iops = titled(pages, "IOPS", "Measurement Window Tabular Data")
    assert_marks(iops, ledger["iops"], 3)
    latency = titled(pages, "Latency", "Measurement Window Tabular Data")
    assert_marks(latency, ledger["latency"], 12)        # ART, 5 9s, MRT, IOPS tables
    for text, recs in ((iops, ledger["iops"]), (latency, ledger["latency"])):
        lines = re.findall(r"^- (round .*)$", text, re.M)
        bound = bound_in_window(recs)
        assert len(lines) == len(bound)
        for p, line in zip(bound, lines, strict=True):
            assert_point_line(p, line)


def test_no_warning_no_mark_when_nothing_is_host_bound(clean_pages, clean):
    assert not any(p.get("host_bound") for recs in ledger_by_test(clean).values()
                   for p in of(recs or [], "point"))
    text = flat(" ".join(clean_pages))
    assert "Host-bound:" not in text and DAGGER not in text
    iops = titled(clean_pages, "IOPS", "Host Ceiling")
    assert "None: no point of the measurement window reached the host's ceiling." in flat(iops)


def test_html_says_the_same(folder):
    html = build_html(load_run(folder))
    assert "Host-bound: 3 of 30 points of IOPS (measurement window, rounds 3..7)" in html
    assert "host ceiling not measured (--host-ceiling off)" in html
    assert f"102,400 {DAGGER}" in html and "Host Ceiling: what this host drives" in html


def test_export_has_the_ceiling_and_the_host_bound_points(folder, clean):
    ledger = ledger_by_test(folder)
    tests = {t["name"]: t for t in document(folder)["tests"]}
    for name, recs in ledger.items():
        if name is None:
            continue
        rec = of(recs, "host_ceiling")[0]
        assert tests[name]["host_ceiling"] == {k: v for k, v in rec.items()
                                               if k not in ("type", "test")}
        got = tests[name]["host_bound"]
        if name == "wsat":
            want = [of(recs, "wsat_result")[0]["host_bound"]]
            assert got["window_points"] == 1
        else:
            want = [p["host_bound"] for p in bound_in_window(recs)]
            assert got["window_points"] == len(window_points(recs))
            assert [(p["round"], p["rw_mix"], p["block_size"]) for p in got["points"]] == \
                [(p["round"], p["rw_mix"], p["block_size"]) for p in bound_in_window(recs)]
        assert [{k: p[k] for k in ("by", "figure", "ceiling", "limit", "ceiling_label")}
                for p in got["points"]] == want
    assert tests["iops"]["host_bound"]["outside_window"] == 1
    assert all(not t["host_bound"]["points"] for t in document(clean)["tests"])


def test_compare_header_says_whether_a_run_was_host_bound(folder, clean):
    ledger = ledger_by_test(folder)
    want = "; ".join(f"{name}: {len(bound_in_window(ledger[name]))} of "
                     f"{len(window_points(ledger[name]))}" for name in ("iops", "latency"))
    assert dict(run_header(load_run(folder)))["Host-bound points"] == \
        f"{want}; wsat: 1 of 1"
    assert dict(run_header(load_run(clean)))["Host-bound points"] == \
        "none (host ceiling measured)"


def test_rwsw_and_dirth_tests_list_their_ceiling(tmp_path):
    """The RWSW tests (rwsw-wsat's ATW points, rwsw-dirth's TC x QD grid) get the Host Ceiling
    page too, with their host-bound window point; page 1 warns about them."""
    folder = rwsw_replay_dirth.build(tmp_path)
    ledger = ledger_by_test(folder)
    jobs = {t: [host_ceiling_run.CEILING_JOBS["iops"][0]] for t in ("rwsw-wsat", "rwsw-dirth")}
    marked = {}
    for test in jobs:
        last = window_points(ledger[test])[-1]
        marked[(test, last["round"], last["index"])] = ("IOPS", "iops", 1.1 * last["iops"],
                                                        jobs[test][0]["label"])
    host_ceiling_run.inject(folder, jobs, marked)
    ledger, run = ledger_by_test(folder), load_run(folder)
    for test in jobs:
        view = next(t for t in run.tests if t.name == test)
        texts = [f.getPlainText() for f in registry.pages_for(run, view)
                 if isinstance(f, Paragraph)]
        assert "Host Ceiling: what this host drives on a RAM-backed device" in texts
        (bound,) = bound_in_window(ledger[test])
        (line,) = [t for t in texts if t.startswith(f"{DAGGER} round ")]
        assert_point_line(bound, line.removeprefix(f"{DAGGER} "))
        title = of(ledger[test], "test_start")[0]["title"]
        assert any(w.startswith(f"Host-bound: 1 of {len(window_points(ledger[test]))} points "
                                f"of {title} ") for w in run.warnings)
    others = [t.name for t in run.tests if t.name not in jobs]
    assert others and all(f"{next(t.title for t in run.tests if t.name == n)}: host ceiling "
                          "not measured (not root)" in " ".join(warnings_block(run))
                          for n in others)


def warnings_block(run) -> list[str]:
    return [f.getPlainText() for f in warnings.block(run) if isinstance(f, Paragraph)]


def test_xsr_judges_each_access_group(tmp_path):
    """XSR (no rounds, no result table): its ceiling's jobs are its groups' patterns, and each
    access group's whole-run figure is judged; page 1 counts host-bound groups, its Host
    Ceiling page lists them with both figures, the export has them."""
    folder = tmp_path / "ref"
    shutil.copytree(REFERENCE, folder)
    ceiling = [{"label": "SEQ 1024KiB W", "rw": "write", "block_size": 1048576, "numjobs": 4,
                "iodepth": 32, "iops": 2480.0, "mbps": 2600.5, "lat_mean_us": 51_600.0,
                "raw": "raw/xsr/host-ceiling/c00.json"},
               {"label": "RND 8KiB W", "rw": "randwrite", "block_size": 8192, "numjobs": 4,
                "iodepth": 32, "iops": 98_000.0, "mbps": 802.8, "lat_mean_us": 1306.0,
                "raw": "raw/xsr/host-ceiling/c01.json"}]
    judged = {"by": "MB/s", "figure": 2401.7, "ceiling": 2600.5, "limit": 0.8 * 2600.5,
              "ceiling_label": "SEQ 1024KiB W"}
    out = []
    for line in (folder / "ledger.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["type"] == "test_start" and rec["test"] == "xsr":
            out.append(json.dumps({"type": "host_ceiling", "time": rec["time"] - 1, "test": "xsr",
                                   "device": "tmpfs loop", "engine": "libaio", "cpus": None,
                                   "seconds": 5, "points": ceiling, "share": 0.8,
                                   "margin": 0.25, "error": None}))
        if rec["type"] == "xsr_group":
            rec["host_bound"] = judged if rec["group"] == 1 else None
        out.append(json.dumps(rec))
    (folder / "ledger.jsonl").write_text("\n".join(out) + "\n")
    run = load_run(folder)
    view = next(t for t in run.tests if t.name == "xsr")
    assert ("Host-bound: 1 of 3 access groups of Cross Stimulus Recovery are host-bound (by "
            "MB/s: 1): their figures may be the host's, not the drive's (its Host Ceiling page "
            "lists them with both figures)") in run.warnings
    texts = [f.getPlainText() for f in registry.pages_for(run, view) if isinstance(f, Paragraph)]
    assert "Host-bound access groups (1 of 3: each group's whole-run figure)" in texts
    assert (f"{DAGGER} Group 1: SEQ 1024KiB W: 2,402 MB/s; host ceiling 2,600 MB/s (limit "
            "2,080 MB/s; ceiling job SEQ 1024KiB W)") in texts, [t for t in texts if DAGGER in t]
    doc = next(t for t in document(folder)["tests"] if t["name"] == "xsr")
    assert doc["host_ceiling"]["points"] == ceiling
    (point,) = doc["host_bound"]["points"]
    assert doc["host_bound"]["window_points"] == 3 and point["figure"] == 2401.7
    assert point["label"] == "Group 1: SEQ 1024KiB W" and point["ceiling"] == 2600.5
