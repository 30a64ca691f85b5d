"""A capture's own step is the step it is characterised in (issue 40 §4): a capture made with
`python -m pts capture --step 0.5` is cut in 0.5 s steps unless `--step` is given again; a
capture without a step (an import) takes the spec's step_seconds. The card says which."""

from __future__ import annotations

import pytest

from pts.cli.main import main
from pts.config.spec import load_rwsw
from pts.workload.characterise import characterise
from tests.support.synthetic_capture import R, rows, write

# one 4 KiB read every 100 ms for 2 s
IOS = [(100 * i, 100 * i + 1, 8 * i, 4096, R) for i in range(20)]


@pytest.fixture()
def made_with_step(tmp_path):
    return write(tmp_path / "half.parquet", rows(*IOS), seconds=2.0, step_s=0.5)


def test_the_captures_step_is_the_default(made_with_step):
    ch = characterise(made_with_step)
    assert (ch.step_s, len(ch.steps), ch.step_from) == (0.5, 4, "the capture's")
    assert [st.ios for st in ch.steps] == [5, 5, 5, 5]


def test_a_step_given_again_overrides_it(made_with_step):
    ch = characterise(made_with_step, step_s=1.0)
    assert (ch.step_s, len(ch.steps), ch.step_from) == (1.0, 2, "given")


def test_a_capture_without_a_step_takes_the_specs(tmp_path):
    path = write(tmp_path / "imported.parquet", rows(*IOS), seconds=2.0, source="blkparse")
    ch = characterise(path)
    spec_step = float(load_rwsw()["rwsw_capture"]["step_seconds"])
    assert (ch.step_s, ch.step_from) == (spec_step, "rwsw_capture.step_seconds")
    assert len(ch.steps) == 1


def test_the_card_says_where_the_step_came_from(made_with_step, capsys):
    assert main(["workload", str(made_with_step)]) == 0
    assert "4 steps of 0.5 s (the capture's step; --step overrides)" in capsys.readouterr().out
    assert main(["workload", str(made_with_step), "--step", "1"]) == 0
    assert "2 steps of 1 s (--step)" in capsys.readouterr().out
