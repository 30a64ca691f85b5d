"""The numbers of the dashboard's pages against the run's stored data (issue 31 §2): the
screenshot baselines (tests/e2e/test_page_screenshots.py) compare layout at a tolerance and
cannot see a wrong digit, so the figures of the pages they shoot are read from the HTML
(Starlette's TestClient, as the other tests/serve/ tests do) and compared with the reference
run's run.json and ledger.jsonl, read here as raw JSON:

    runs list   the deviation count and the start time of each run
    run page    each test's rounds done "of" its max_rounds, its steady-state window, the
                deviation count
    compare     every IOPS and Throughput cell of both runs = the window mean of its points,
                and the difference to run #1 (the second copy's IOPS points are scaled
                so that the difference is not 0)

The HTML report's pages are the PDF's, figure for figure (tests/report/test_report_html.py),
whose numbers tests/report/test_page_numbers.py checks against the data.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from html import unescape
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from pts.serve.app import create_app
from tests.support import screens, snapshots
from tests.support.helpers import ledger_by_test, of
from tests.support.serve_runs import table

SCALE = 1.1           # the second copy's IOPS points, so that compare has a difference to show


@pytest.fixture(scope="module")
def pages() -> Iterator[dict[str, str]]:
    """The pages of the screenshot baselines (tests/support/screens.py), the second copy's IOPS
    points scaled by SCALE."""
    with screens.reports_folder() as root:
        ledger = root / screens.SECOND / "ledger.jsonl"
        lines = []
        for line in ledger.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("test") == "iops" and rec["type"] == "point" and not rec["na"]:
                rec["iops"] *= SCALE
            lines.append(json.dumps(rec))
        ledger.write_text("\n".join(lines) + "\n")
        with TestClient(create_app([root])) as client:
            texts = {stem: client.get(url.removeprefix("http://testserver")).text
                     for stem, url in screens.pages("http://testserver") if stem != "report"}
        yield texts | {"root": str(root)}


def deviation_count(folder: Path) -> int:
    info = json.loads((folder / "run.json").read_text())
    return len(info["deviations"]) + sum(len(of(recs, "deviation"))
                                         for recs in ledger_by_test(folder).values())


def window_means(recs: list[dict], field: str) -> dict[tuple[str, int], float | None]:
    """Per (R/W mix, block size): the mean of `field` over the window rounds' points."""
    first, last = of(recs, "test_end")[-1]["window"]
    params = of(recs, "test_start")[-1]["parameters"]
    out = {}
    for mix in params["rw_mixes"]:
        for bs in params["block_sizes"]:
            pts = [p for p in of(recs, "point") if p["rw_mix"] == mix and p["block_size"] == bs
                   and first <= p["round"] <= last]
            out[(mix, bs)] = None if not pts or pts[0]["na"] else \
                math.fsum(p[field] for p in pts) / len(pts)
    return out


def text_of(cell: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", "", cell)).split())


def shown(cell: str, value: float | None) -> bool:
    """`cell` is `value` to the digits it prints ("n/a" for None)."""
    if value is None:
        return cell == "n/a"
    m = re.fullmatch(r"[+-]?[\d,]+(?:\.(\d+))?", cell)
    if m is None:
        return False
    return abs(float(cell.replace(",", "")) - value) <= 0.5 * 10 ** -len(m[1] or "") * 1.000001


def test_runs_list_deviations_and_start_are_the_stored_ones(pages):
    root = Path(pages["root"])
    rows = table(pages["runs-list"])
    for rid in (screens.FIRST, screens.SECOND):
        info = json.loads((root / rid / "run.json").read_text())
        assert rows[rid]["deviations"] == str(deviation_count(root / rid)), rows[rid]
        started = datetime.fromisoformat(info["started"]).astimezone(UTC)
        assert rows[rid]["started"] == started.strftime("%Y-%m-%d %H:%M")    # UTC minute
        assert f'<time datetime="{info["started"]}" title="{info["started"]}">' in \
            pages["runs-list"]                                     # the full text kept


def test_run_page_rounds_window_and_deviations_are_the_stored_ones(pages):
    folder = Path(pages["root"]) / screens.FIRST
    page = pages["run-page"]
    checked = 0
    for name, recs in ledger_by_test(folder).items():
        if not name or not of(recs, "test_start"):
            continue
        row = re.search(rf'<tr data-test="{re.escape(name)}">(.*?)</tr>', page, re.S)
        assert row, name
        cells = [text_of(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row[1], re.S)]
        rounds = {r["round"] for r in of(recs, "round")}
        most = of(recs, "test_start")[-1]["parameters"].get("max_rounds")
        assert cells[2] == f"{len(rounds)}" + (f" of {most}" if most else ""), (name, cells)
        end = of(recs, "test_end")[-1]
        window = f"{end['window'][0]}..{end['window'][1]}" if rounds else "none"
        assert cells[3] == window, (name, cells)
        checked += 1
    assert checked == 11
    assert f"Deviations ({deviation_count(folder)})" in page


@pytest.mark.parametrize("name, field, caption", [
    ("iops", "iops", "IOPS, side by side"),
    ("throughput-1024k", "mbps", "Throughput (MB/s), side by side"),
    ("throughput-128k", "mbps", "Throughput (MB/s), side by side")])
def test_compare_cells_are_each_runs_window_means(pages, name, field, caption):
    root = Path(pages["root"])
    first, second = (window_means(ledger_by_test(root / rid)[name], field)
                     for rid in (screens.FIRST, screens.SECOND))
    begun = of(ledger_by_test(root / screens.FIRST)[name], "test_start")[-1]
    access = begun["parameters"]["access"]
    # This test's side-by-side table: its cell labels recur in other tests' tables.
    page = pages["compare"]
    start = page.index(caption, page.index(f"{begun['title']} ("))
    rows = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", page[start:page.index("</table>", start)], re.S):
        cells = [text_of(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
        if cells:
            rows[cells[0]] = cells[1:]
    assert rows.pop("Cell")[0].startswith("#1 ")        # the header row
    checked = 0
    for (mix, bs), a in first.items():
        label = f"{access} {bs / 1024:g}KiB {mix}"
        got = rows[label]
        b = second[(mix, bs)]
        assert shown(got[0], a) and shown(got[1], b), (label, got, a, b)
        if a is None:
            assert got[2] == "n/a", (label, got)
        else:
            m = re.fullmatch(r"([+-][\d.]+) %", got[2])
            assert m and shown(m[1], 100 * (b - a) / a), (label, got, a, b)
            checked += 1
    assert checked >= 2
    assert len(rows) == len(first)
    if name == "iops":          # the scaled copy: every measured cell 10 % higher
        assert all(rows[f"RND {bs / 1024:g}KiB {mix}"][2] == f"+{100 * (SCALE - 1):.1f} %"
                   for (mix, bs), a in first.items() if a)


def test_the_pages_are_those_of_the_screenshot_baselines():
    """What is checked here is what tests/support/screens.py shoots, of the reference run."""
    assert [stem for stem, _ in screens.pages("")] == ["runs-list", "run-page", "compare",
                                                        "report"]
    assert snapshots.REFERENCE_RUN.is_dir()
