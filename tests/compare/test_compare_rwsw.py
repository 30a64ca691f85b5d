"""`python -m pts compare` of two RWSW runs on one workload (synthetic: the second drive half
as fast and missing the SEQ stream's share): rwsw-wsat's IOPS per round overlaid, and per
stream of the ATW each run's figure side by side with the difference to run #1."""

from __future__ import annotations

import math
import re

import pytest

from pts.cli.main import main
from pts.compare.data import compare, rwsw_rows
from pts.stored import rwsw
from pts.stored.data import load_run
from tests.support.helpers import pdf_text
from tests.support.synthetic import rwsw_run


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("rwsw-compare")
    return (rwsw_run.build(root, "a", serial="SN-A"),
            rwsw_run.build(root, "b", scale=0.5, seq_miss=3.0, serial="SN-B"))


def test_per_stream_rows_are_each_runs_stored_figures(runs):
    c = compare(runs)
    assert c.common == ("rwsw-wsat", "rwsw-streams")
    streams = rwsw_rows(c.tests("rwsw-streams"))
    per_run = [{r.stream: r for r in rwsw.stream_results(t)} for t in c.tests("rwsw-streams")]
    iops = [r for r in streams if r.metric == "iops"]
    assert [r.label for r in iops] == [f"{s} IOPS" for s, _, _, _ in rwsw_run.STREAMS]
    for r in iops:
        name = r.label.removesuffix(" IOPS")
        assert r.values == (per_run[0][name].iops, per_run[1][name].iops)
        assert math.isclose(r.diffs[1], -50.0)
    shares = rwsw_rows(c.tests("rwsw-wsat"))
    seq = next(r for r in shares if r.label.startswith("SEQ 128K W"))
    got = [rwsw.shares(load_run(f).tests[0]) for f in runs]
    assert seq.values == tuple(next(x.achieved_pct for x in g if x.stream == "SEQ 128K W")
                               for g in got)
    assert seq.values[1] > seq.values[0]


@pytest.mark.needs("pdftotext")
def test_compare_pdf_overlays_rounds_and_shows_streams_side_by_side(runs, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["compare", *map(str, runs), "-o", str(out)]) == 0
    text = pdf_text(out / "compare.pdf")
    # rwsw-wsat's (and rwsw-streams') IOPS per round, overlaid
    assert text.count("Steady-state convergence (tracking variables, per round)") == 2
    assert text.count("Per stream of the ATW, side by side") == 2
    assert re.search(r"RND 4K R IOPS [\d,]+ [\d,]+ -50\.0 %", text)
    assert "0 KiB" not in text
