"""The numbers of the report's pages against the run's stored data (issue 31 §2): a page
snapshot compares layout at a tolerance and cannot see a wrong digit, so every figure of the
pages below is read back with pdftotext and compared with what the reference run's
ledger.jsonl holds, computed here from the raw JSON records (as tests/support/headers.py does for
the header blocks), never by pts.report's own code.

    Measurement Window Tabular Data   IOPS, Throughput (both sizes), Latency (ART, 5 9s,
                                      MRT, IOPS): the mean of the window rounds' points
    Steady State Measurement Window   every tracking variable of every test with rounds:
                                      round values, average, min/max, 110/90 %, excursions,
                                      least-squares slope/intercept, r (the PTS's rule)
    Operating Points (DIRTH, CBW)     operating_point and response_histogram records
    Wait-state table (HIR)            hir_state records and the hir_baseline
    Recovery table (XSR)              xsr_group records
    Write Saturation Summary          wsat_result, samples and the whole-run histogram

A figure is "shown" when it equals the stored value rounded to the digits the page prints.
"""

from __future__ import annotations

import math
import re
import subprocess

import pytest

from tests.support import snapshots
from tests.support.helpers import ledger_by_test, of

pytestmark = pytest.mark.needs("pdftotext")


@pytest.fixture(scope="module")
def texts(reference_pdf) -> list[str]:
    out = subprocess.run(["pdftotext", "-layout", str(reference_pdf), "-"], check=True,
                         capture_output=True, text=True).stdout
    return out.split("\f")


@pytest.fixture(scope="module")
def ledger() -> dict[str, list[dict]]:
    return ledger_by_test(snapshots.REFERENCE_RUN)


def start(recs: list[dict]) -> dict:
    return of(recs, "test_start")[-1]["parameters"]


def point_seconds(parameters: dict):
    """--point-seconds as stored (the reference run predates its one name: WSAT's was
    `sample_seconds`)."""
    return parameters.get("point_seconds", parameters.get("sample_seconds"))


def window(recs: list[dict]) -> list[int]:
    first, last = of(recs, "test_end")[-1]["window"]
    return list(range(first, last + 1))


# ----------------------------------------------------------------------------- reading

def page(texts: list[str], title: str, *needles: str) -> str:
    """The first page whose band title is `title` (or the band's cut "…" form of it) and
    which holds every needle."""
    def titled(text: str) -> bool:
        band = snapshots._title(text).removesuffix("…")
        return len(band) > 20 and (band.startswith(title) or title.startswith(band))
    found = [t for t in texts if titled(t) and all(n in t for n in needles)]
    assert found, f"no page '{title}' holding {needles}"
    return found[0]


def cells(text: str, first: str) -> list[str]:
    """The cells (split at 2+ spaces) of the first row whose first cell is `first`."""
    for line in text.splitlines():
        row = re.split(r"\s{2,}", line.strip())
        if row[0] == first:
            return row[1:]
    raise AssertionError(f"no row '{first}' in:\n{text}")


def value_of(text: str, item: str) -> str:
    """An Item / Value table's value (the Result column cut off)."""
    return cells(text, item)[0]


def shown(cell: str, value: float | None) -> bool:
    """`cell` is `value` rounded to the digits it prints ("N/A" / "n/r" for None)."""
    if value is None:
        return cell in ("N/A", "n/r", "-")
    m = re.fullmatch(r"(-?[\d,]+)(?:\.(\d+))?", cell.strip())
    if m is None:
        return False
    decimals = len(m[2] or "")
    printed = float(cell.replace(",", ""))
    return abs(printed - value) <= 0.5 * 10 ** -decimals * (1 + 1e-9) + 1e-12 * abs(value)


def assert_shown(cell: str, value: float | None, what: str) -> None:
    assert shown(cell, value), f"{what}: the page shows {cell!r}, the data gives {value!r}"


def kib(nbytes: int) -> str:
    return f"{nbytes / 1024:g} KiB"


# ----------------------------------------------------------------------------- the data

def window_means(recs: list[dict], field: str) -> dict[tuple[str, int], float | None]:
    """Per (R/W mix, block size): the mean of `field` over the window rounds' points (a
    point written again, after a resume, replaces the first); None for an N/A cell."""
    rounds = window(recs)
    last: dict[tuple[int, str, int], dict] = {}
    for p in of(recs, "point"):
        last[(p["round"], p["rw_mix"], p["block_size"])] = p
    out = {}
    for mix in start(recs)["rw_mixes"]:
        for bs in start(recs)["block_sizes"]:
            pts = [last[(r, mix, bs)] for r in rounds if (r, mix, bs) in last]
            out[(mix, bs)] = None if not pts or pts[0]["na"] else \
                math.fsum(p[field] for p in pts) / len(pts)
    return out


def fit(xs: list[int], ys: list[float]) -> tuple[float, float, float]:
    """Least squares y = slope * x + intercept, and Pearson's r."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    slope = sxy / sxx
    return slope, my - slope * mx, sxy / math.sqrt(sxx * syy) if syy else 0.0


# ----------------------------------------------------------------------------- the pages

def test_iops_table_is_the_window_mean_of_every_cell(texts, ledger):
    text = page(texts, "IOPS — Measurement Window Tabular Data")
    recs = ledger["iops"]
    means = window_means(recs, "iops")
    checked = 0
    for bs in start(recs)["block_sizes"]:
        row = cells(text, kib(bs))
        for mix, cell in zip(start(recs)["rw_mixes"], row, strict=True):
            assert_shown(cell, means[(mix, bs)], f"IOPS {mix} {kib(bs)}")
            checked += means[(mix, bs)] is not None
    assert checked == 9


LATENCY_TABLES = (("Average response time (ART)", "lat_mean_us"),
                  ("99.999 % response time (5 9s)", "lat_percentile_us"),
                  ("Maximum response time (MRT)", "lat_max_us"), ("IOPS (IOPS)", "iops"))


@pytest.mark.parametrize("caption, field", LATENCY_TABLES, ids=[f for _, f in LATENCY_TABLES])
def test_latency_tables_are_the_window_means(texts, ledger, caption, field):
    text = page(texts, "Latency — Measurement Window Tabular Data")
    table = text[text.index(caption):]
    recs = ledger["latency"]
    means = window_means(recs, field)
    for bs in start(recs)["block_sizes"]:
        row = cells(table, kib(bs))
        for mix, cell in zip(start(recs)["rw_mixes"], row[:3], strict=True):
            assert_shown(cell, means[(mix, bs)], f"Latency {caption} {mix} {kib(bs)}")


def test_throughput_table_is_each_size_window_mean(texts, ledger):
    text = page(texts, "Throughput 128 KiB — Measurement Window Tabular Data")
    for name in ("throughput-1024k", "throughput-128k"):
        recs = ledger[name]
        (bs,) = start(recs)["block_sizes"]
        means = window_means(recs, "mbps")
        row = cells(text, kib(bs))
        for mix, cell in zip(("100/0", "0/100"), row[:2], strict=True):
            assert_shown(cell, means[(mix, bs)], f"{name} {mix} MB/s")
        w = window(recs)
        assert row[2] == f"rounds {w[0]}..{w[-1]}"


def tracked(ledger) -> list[tuple[str, str]]:
    out = []
    for name, recs in ledger.items():
        if name and of(recs, "round"):
            out += [(name, label) for label in of(recs, "round")[0]["tracking"]]
    return out


TRACKED = tracked(ledger_by_test(snapshots.REFERENCE_RUN))


def test_every_test_with_rounds_has_its_window_pages_checked():
    assert len(TRACKED) == 11, TRACKED        # 3 IOPS variables, 8 other tests with rounds


@pytest.mark.parametrize("name, label", TRACKED, ids=[f"{n}:{lb}" for n, lb in TRACKED])
def test_measurement_window_page_is_the_rule_applied_to_the_rounds(texts, ledger, name,
                                                                   label):
    recs = ledger[name]
    title = of(recs, "test_start")[-1]["title"]
    text = page(texts, f"{title} — Steady State Measurement Window", f"  {label} (")
    p = start(recs)
    rounds = window(recs)
    by_round = {r["round"]: r["tracking"][label] for r in of(recs, "round")}
    ys = [by_round[r] for r in rounds]
    avg = sum(ys) / len(ys)
    slope, intercept, r = fit(rounds, ys)
    assert value_of(text, "Measurement window") == f"rounds {rounds[0]}..{rounds[-1]}"
    shown_rounds = re.findall(r"R(\d+): ([\d,.-]+)", value_of(text, "Round values"))
    assert [int(n) for n, _ in shown_rounds] == rounds
    for (n, cell), y in zip(shown_rounds, ys, strict=True):
        assert_shown(cell, y, f"{name} round {n}")
    assert_shown(value_of(text, "Average"), avg, "average")
    low, high = value_of(text, "Minimum / maximum").split(" / ")
    assert_shown(low, min(ys), "minimum") and assert_shown(high, max(ys), "maximum")
    up, down = value_of(text, "110 % / 90 % of average").split(" / ")
    assert_shown(up, 1.1 * avg, "110 %") and assert_shown(down, 0.9 * avg, "90 %")
    for item, excursion, limit in (
            ("Data excursion (max - min)", max(ys) - min(ys), p["max_data_excursion"]),
            ("Slope excursion |slope| x (last - first round)",
             abs(slope) * (rounds[-1] - rounds[0]), p["max_slope_excursion"])):
        m = re.fullmatch(r"([\d,.]+) = ([\d.]+) % of average; limit ([\d.]+) % = ([\d,.]+)",
                         value_of(text, item))
        assert m, value_of(text, item)
        assert_shown(m[1], excursion, item)
        assert_shown(m[2], 100 * excursion / avg, f"{item} %")
        assert_shown(m[3], 100 * limit, f"{item} limit %")
        assert_shown(m[4], limit * avg, f"{item} limit")
    assert_shown(value_of(text, "Least-squares slope").removesuffix(" per round"), slope,
                 "slope")
    assert_shown(value_of(text, "Least-squares intercept"), intercept, "intercept")
    assert_shown(value_of(text, "Correlation coefficient r"), r, "r")


@pytest.mark.parametrize("name", ["dirth", "cbw"])
def test_operating_points_are_the_stored_ones(texts, ledger, name):
    recs = ledger[name]
    text = page(texts, f"{name.upper()} — Operating Points")
    captures = {h["name"]: h for h in of(recs, "response_histogram")}
    for op in of(recs, "operating_point"):
        row = cells(text, op["name"])
        cap = captures[op["name"]]
        assert row[0] == f"TC{op['thread_count']}/QD{op['queue_depth']}"
        for cell, value, what in zip(row[1:], (op["iops"], op["lat_mean_us"], cap["iops"],
                                               cap["lat_mean_us"], cap["lat_max_us"]),
                                     ("IOPS (rounds)", "ART (rounds)", "IOPS (capture)",
                                      "ART (capture)", "MRT (capture)"), strict=True):
            assert_shown(cell, value, f"{name} {op['name']} {what}")


def test_hir_wait_state_table_is_the_stored_states(texts, ledger):
    recs = ledger["hir"]
    text = page(texts, "Host Idle Recovery — Wait-state table")
    names = start(recs)["wait_state_names"]
    states = of(recs, "hir_state")
    assert len(states) == len(names)
    for st in states:
        row = cells(text, names[st["state"] - 1])
        assert row[0].replace(" ", "") == f"{st['write_s']}s+{st['idle_s']}s"
        assert row[1] == str(st["repetitions"])
        for cell, value, what in zip(row[2:], (st["wait_iops"], st["baseline_iops"],
                                               st["ss_iops"], st["ratio"]),
                                     ("wait IOPS", "return to baseline", "baseline", "ratio"),
                                     strict=True):
            assert_shown(cell, value, f"HIR {names[st['state'] - 1]} {what}")
    base = of(recs, "hir_baseline")[-1]
    m = re.search(r"Baseline: ([\d,]+) IOPS", text)
    assert m and shown(m[1], base["ss_iops"])


def test_xsr_recovery_table_is_the_stored_groups(texts, ledger):
    text = page(texts, "Cross Stimulus Recovery — Recovery table")
    groups = of(ledger["xsr"], "xsr_group")
    assert len(groups) == 3
    for g in groups:
        # End TP: the group's last interval; peaks: the largest of its intervals.
        tps = sorted((i for i in of(ledger["xsr"], "xsr_interval") if i["group"] == g["group"]),
                     key=lambda i: i["interval"])
        assert len(tps) == g["intervals"]
        first = next(c for line in text.splitlines()
                     for c in [re.split(r"\s{2,}", line.strip())]
                     if c[0].startswith(f"{g['group']}: "))
        assert first[1] == f"{g['seconds']} s"
        for cell, value, what in zip(first[2:6], (tps[-1]["tp_mbps"], g["final_level_mbps"],
                                                  max(i["lat_mean_us"] for i in tps),
                                                  max(i["clat_max_us"] for i in tps)),
                                     ("end TP", "final level", "peak ART", "peak MRT"),
                                     strict=True):
            assert_shown(cell, value, f"XSR group {g['group']} {what}")
        rec = g["recovery_s"]
        assert first[6] == ("-" if g["recovered"] is None else
                            "never (not settled within the group)" if rec is None else
                            f"{rec:,.0f} s ({rec / 60:.1f} min)"), first


def test_wsat_summary_is_the_stored_result(texts, ledger):
    recs = ledger["wsat"]
    text = page(texts, "Write Saturation — Summary")
    res = of(recs, "wsat_result")[-1]
    m = re.fullmatch(r"([\d,.]+) GB = ([\d.]+) drive fills in ([\d,]+) s",
                     value_of(text, "Written (TGBW)"))
    assert m, value_of(text, "Written (TGBW)")
    assert_shown(m[1], res["tgbw_gb"], "TGBW") and assert_shown(m[2], res["drive_fills"],
                                                                "drive fills")
    assert_shown(m[3], res["seconds"], "seconds")
    samples = [s for s in of(recs, "sample") if not s["partial"]]
    assert value_of(text, "Samples") == \
        f"{len(samples)} complete samples of {point_seconds(start(recs))} s"
    # FOB = the first sample, steady state = the mean of the final window's samples.
    assert_shown(value_of(text, "FOB IOPS (first sample)"), samples[0]["iops"], "FOB IOPS")
    first, last = res["ss_window"]
    final = [s["iops"] for s in samples if first <= s["sample"] <= last]
    assert len(final) == 5 and samples[-1]["sample"] == last
    ss, rest = value_of(text, "Steady-state IOPS").split(":", 1)
    assert_shown(ss, sum(final) / 5, "steady-state IOPS")
    assert f"(samples {first}..{last})" in rest
    assert_shown(value_of(text, "FOB / steady-state IOPS"), samples[0]["iops"] / (sum(final) / 5),
                 "ratio")
    for item, field in (("Steady state first met", "first_steady_sample"),
                        ("Steady since", "steady_from_sample")):
        assert value_of(text, item) == f"window ending at sample {res[field]}"
    assert_shown(value_of(text, "Whole run: IOPS"), res["iops"], "whole-run IOPS")
    art, five, mrt = value_of(text, "Whole run: ART / 5 9s / MRT").split(" µs")[0].split(" / ")
    for cell, field in ((art, "lat_mean_us"), (five, "lat_percentile_us"),
                        (mrt, "lat_max_us")):
        assert_shown(cell, res[field], f"whole run {field}")
