"""The purge probe on the report: FOB/SS against the IOPS test's RND 4 KiB 0/100 window
mean, the warning below the recorded threshold, none above it, nothing without a probe."""

from __future__ import annotations

import re

import pytest

from pts.report import render
from pts.stored.data import load_run
from pts.stored.purge_check import LIMITS_NO_PURGE, WARNING, WARNING_NO_PURGE, check
from tests.support.helpers import pdf_text
from tests.support.synthetic.runfactory import build_run


def words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def ss_4k_write(folder) -> float:
    test = load_run(folder).tests[0]
    return next(c.mean for c in test.cells if c.rw_mix == "0/100" and c.block_size == 4096)


@pytest.fixture(scope="module")
def ss(tmp_path_factory):
    return ss_4k_write(build_run(tmp_path_factory.mktemp("ss")))


def test_probe_near_steady_state_warns(tmp_path, ss):
    folder = build_run(tmp_path, purge_probe_iops=ss * 1.05)
    run = load_run(folder)
    c = check(run.tests[0])
    assert c.ratio == pytest.approx(1.05) and c.ss_iops == pytest.approx(ss)
    assert run.warnings == (c.warning,)
    assert c.warning.startswith(f"iops: {WARNING}: purge probe ")
    assert "FOB/SS 1.05 < 1.1" in c.warning
    text = words(pdf_text(render(folder)))
    assert "Warnings (1)" in text and f"WARNING: iops: {WARNING}" in text
    assert "PURGE NOT EFFECTIVE?" in text and "an addition to the PTS flow" in text


def test_probe_well_above_steady_state_does_not_warn(tmp_path, ss):
    folder = build_run(tmp_path, purge_probe_iops=ss * 4)
    run = load_run(folder)
    assert check(run.tests[0]).ratio == pytest.approx(4) and run.warnings == ()
    text = words(pdf_text(render(folder)))
    assert "Warnings (0)" in text and "FOB/SS 4.00, threshold 1.1: purge effective" in text


def test_threshold_is_the_recorded_one(tmp_path, ss):
    """Just above the recorded 1.1: no warning; just below: the warning."""
    assert load_run(build_run(tmp_path / "a", purge_probe_iops=ss * 1.101)).warnings == ()
    assert len(load_run(build_run(tmp_path / "b", purge_probe_iops=ss * 1.099)).warnings) == 1


def test_no_probe_no_row_no_warning(tmp_path):
    folder = build_run(tmp_path)
    run = load_run(folder)
    assert check(run.tests[0]) is None and run.warnings == ()
    assert "Purge probe" not in pdf_text(render(folder))


def test_no_purge_probe_is_named_for_what_it_is(tmp_path, ss):
    """--purge none on a used drive: no "right after the purge", no "purge effective"; what
    the probe cannot tell is said (faster than SS is not FOB)."""
    folder = build_run(tmp_path, purge_method="none", purge_probe_iops=ss * 1.44)
    run = load_run(folder)
    c = check(run.tests[0])
    assert not c.purged and c.warning is None and run.warnings == ()
    text = words(pdf_text(render(folder)))
    assert "at the start of the test (NO purge ran: --purge none)" in text
    assert "start/SS 1.44, threshold 1.1: faster than steady state." in text
    assert words(LIMITS_NO_PURGE) in text
    assert "right after the purge" not in text and "purge effective" not in text
    assert "FOB/SS" not in text


def test_no_purge_probe_near_steady_state_warns_not_at_fob(tmp_path, ss):
    folder = build_run(tmp_path, purge_method="none", purge_probe_iops=ss * 1.05)
    run = load_run(folder)
    (warning,) = run.warnings
    assert warning.startswith(f"iops: {WARNING_NO_PURGE}: purge probe ") and WARNING not in warning
    assert "start/SS 1.05 < 1.1" in warning and "FOB/SS" not in warning
    assert "near steady state: NOT at FOB" in words(pdf_text(render(folder)))
