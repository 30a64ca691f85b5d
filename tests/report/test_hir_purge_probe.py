"""HIR in the purge probe's FOB/SS check (issue 21 §3): the preconditioning baseline against
the probe right after the purge. A baseline within the FOB band (FOB/SS below the recorded
threshold) warns that it may be the fresh-out-of-box plateau, not the steady state."""

from __future__ import annotations

import json

import pytest

from pts.stored.data import load_run
from pts.stored.purge_check import HIR_WARNING, check
from tests.support.synthetic.synthrun import REFERENCE, build
from tests.support.synthetic.synthrun_more import hir_test


def hir_run(folder, probe_ratio: float | None):
    """A synthetic run with HIR; its purge_probe record at probe_ratio x the baseline."""
    build(folder, REFERENCE, extra=(hir_test,))
    lines = [x for x in (folder / "ledger.jsonl").read_text().splitlines()
             if '"type": "purge_probe"' not in x]        # the synthetic run's own probe
    base = next(json.loads(x) for x in lines if '"hir_baseline"' in x)
    if probe_ratio is not None:
        probe = {"type": "purge_probe", "test": "hir", "time": base["time"], "block_size": 4096,
                 "rw_mix": "0/100", "thread_count": 4, "queue_depth": 32, "seconds": 3.0,
                 "iops": base["ss_iops"] * probe_ratio, "fob_ss_min_ratio": 1.1,
                 "raw": "raw/hir/purge-probe.json"}
        at = next(i for i, x in enumerate(lines) if '"hir"' in x and '"purge"' in x)
        lines.insert(at + 1, json.dumps(probe))
    (folder / "ledger.jsonl").write_text("\n".join(lines) + "\n")
    run = load_run(folder)
    return run, next(t for t in run.tests if t.name == "hir"), base


def test_hir_baseline_at_the_fob_plateau_warns(tmp_path):
    run, hir, base = hir_run(tmp_path, 1.02)
    c = check(hir)
    assert c.ss_iops == pytest.approx(base["ss_iops"]) and c.ratio == pytest.approx(1.02)
    assert f"rounds {base['window'][0]}-{base['window'][1]}" in c.ss_source
    assert c.warning.startswith(f"hir: {HIR_WARNING}: purge probe ")
    assert c.warning in run.warnings


def test_hir_baseline_well_below_fob_does_not_warn(tmp_path):
    run, hir, _ = hir_run(tmp_path, 3.0)
    assert check(hir).ratio == pytest.approx(3.0) and check(hir).warning is None
    assert not [w for w in run.warnings if w.startswith("hir:")]


def test_hir_without_a_probe_is_not_checked(tmp_path):
    _, hir, _ = hir_run(tmp_path, None)
    assert check(hir) is None
