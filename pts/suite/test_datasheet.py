"""Datasheet qualification (--datasheet FILE.toml, docs/datasheet.md): one item per
requirement, run right after the PTS test it depends on (pts/suite/datasheet.py). Judged
from the run's stored data by pts.qualify.judge; the judgement is written to the ledger
(a `requirement` record) for the report's Qualification page.

A requirement the run cannot answer (on --power's figures, without --power) is skipped as
NOT CHECKED with the reason, its record written. Without --datasheet there is no item;
without --device the items are skipped.
"""

import pytest

from pts.qualify.judge import MET, NOT_CHECKED, judge
from pts.results import records
from pts.stored.data import load_run


def test_requirement(pts_requirement, pts_run):
    j = judge(load_run(pts_run.folder), pts_requirement)
    r = pts_requirement
    pts_run.ledger.append(records.Requirement(
        test=r.test, cell=r.cell, metric=r.metric, bound=r.bound, required=r.value,
        value=j.measured, verdict=j.verdict, text=j.text, source=r.where))
    if j.verdict == NOT_CHECKED:       # e.g. a W requirement of a run without --power
        pytest.skip(f"NOT CHECKED: {j.text}")
    assert j.verdict == MET, f"{j.verdict.upper()}: {j.text}"
