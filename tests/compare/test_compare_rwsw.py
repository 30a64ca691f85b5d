"""`python -m pts compare` of two RWSW runs on one workload (synthetic: the second drive half
as fast and missing the SEQ stream's share): rwsw-wsat's IOPS per round overlaid, and per
stream of the ATW each run's figure side by side with the difference to run #1."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest

from pts.cli.main import main
from pts.compare.data import compare, rwsw_rows
from pts.stored import fmt
from tests.support.helpers import pdf_text
from tests.support.synthetic import rwsw_run


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("rwsw-compare")
    return (rwsw_run.build(root, "a", serial="SN-A"),
            rwsw_run.build(root, "b", scale=0.5, seq_miss=3.0, serial="SN-B"))


def ledger(folder: Path, test: str) -> list[dict]:
    """The run's records of `test`, read from its ledger.jsonl as they were written."""
    lines = (folder / "ledger.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r.get("test") == test]


def expected_rows(folders) -> dict[tuple[str, str], tuple]:
    """(test, row label) -> each run's figure, computed here from the stored records:
    rwsw-wsat per stream of the ATW its achieved share of I/Os, the mean over every round's
    point; rwsw-streams per stream (point k is stream k, tracking variable k) its mean IOPS
    and ART over the rounds of its test_end's window."""
    out: dict[tuple[str, str], list] = {}
    for folder in folders:
        recs = ledger(folder, "rwsw-wsat")
        (start,) = [r for r in recs if r["type"] == "test_start"]
        points = [p for p in recs if p["type"] == "point"]
        assert len(points) == len(rwsw_run.WSAT_IOPS)
        for s in start["parameters"]["atw"]["streams"]:
            got = [x["achieved_pct"] for p in points for x in p["streams"]
                   if x["stream"] == s["stream"]]
            assert len(got) == len(points)
            out.setdefault(("rwsw-wsat", f"{s['stream']} achieved share of I/Os"), []).append(
                statistics.fmean(got))
        recs = ledger(folder, "rwsw-streams")
        (start,) = [r for r in recs if r["type"] == "test_start"]
        (end,) = [r for r in recs if r["type"] == "test_end"]
        first, last = end["window"]
        for key, title in (("iops", "IOPS"), ("lat_mean_us", "ART")):
            for k, t in enumerate(start["parameters"]["tracking"]):
                used = [p for p in recs if p["type"] == "point" and p["index"] == k
                        and first <= p["round"] <= last]
                assert len(used) == last - first + 1 == 5
                stream = t["label"].removesuffix(" IOPS")
                out.setdefault(("rwsw-streams", f"{stream} {title}"), []).append(
                    statistics.fmean(p[key] for p in used))
    return {k: tuple(v) for k, v in out.items()}


def test_per_stream_rows_are_each_runs_stored_figures(runs):
    """compare's rows against the two run folders' ledgers, not against the reader the
    report uses (pts.stored.rwsw): the values, their order, and the difference to run #1."""
    c = compare(runs)
    assert c.common == ("rwsw-wsat", "rwsw-streams")
    want = expected_rows(runs)
    got = {(t, r.label): r for t in c.common for r in rwsw_rows(c.tests(t))}
    assert list(got) == list(want)            # every stream, metric by metric, in ATW order
    assert [label for (t, label) in want if t == "rwsw-streams"] == [
        f"{s} {m}" for m in ("IOPS", "ART") for s, _, _, _ in rwsw_run.STREAMS]
    for key, (a, b) in want.items():
        row = got[key]
        assert row.values == (pytest.approx(a, rel=1e-12), pytest.approx(b, rel=1e-12)), key
        assert row.diffs == (None, pytest.approx(100 * (b - a) / a, rel=1e-9)), key
    # what the synthetic runs were made with: run b at half the IOPS (twice the ART), its
    # SEQ stream 3 points over its target in every other round (4 of 7)
    iops = got[("rwsw-streams", "RND 4K R IOPS")]
    assert iops.diffs[1] == pytest.approx(-50.0)
    assert got[("rwsw-streams", "RND 4K R ART")].diffs[1] == pytest.approx(100.0)
    seq = got[("rwsw-wsat", "SEQ 128K W achieved share of I/Os")].values
    assert seq == (pytest.approx(10 + 0.5 * 4 / 7), pytest.approx(10 + 3.0 * 4 / 7))


@pytest.mark.needs("pdftotext")
def test_compare_pdf_overlays_rounds_and_shows_streams_side_by_side(runs, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["compare", *map(str, runs), "-o", str(out)]) == 0
    text = pdf_text(out / "compare.pdf")
    # rwsw-wsat's (and rwsw-streams') IOPS per round, overlaid
    assert text.count("Steady-state convergence (tracking variables, per round)") == 2
    assert text.count("Per stream of the ATW, side by side") == 2
    flat = " ".join(text.split())
    for (_, label), (a, b) in expected_rows(runs).items():     # each row, as stored
        row = f"{label} {fmt.num(a)} {fmt.num(b)} {100 * (b - a) / a:+.1f} %"
        assert row in flat, row
    assert re.search(r"RND 4K R IOPS [\d,]+ [\d,]+ -50\.0 %", text)
    assert "0 KiB" not in text
