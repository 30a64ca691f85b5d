"""Reads of never-written LBAs on the report: read points whose range WIPC did not cover
(constructed from a run folder whose WIPC wrote less than the ActiveRange), and the FOB
read figures of --fob-sweep (constructed fob_point records)."""

from __future__ import annotations

import json
import re

from pts.report import render
from pts.stored.data import load_run
from tests.support.helpers import pdf_text
from tests.support.synthetic.runfactory import build_run


def words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def edit_ledger(folder, edit):
    path = folder / "ledger.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    out = []
    for rec in lines:
        out += edit(rec)
    path.write_text("".join(json.dumps(r) + "\n" for r in out))
    return folder


def test_full_wipc_no_warning(tmp_path):
    assert load_run(build_run(tmp_path)).warnings == ()


def test_read_points_outside_wipc_coverage_warn(tmp_path):
    def half_wipc(rec):
        if rec["type"] == "wipc":
            rec["bytes_written"] = 960197124096 // 2 // 131072 * 131072
        return [rec]
    folder = edit_ledger(build_run(tmp_path), half_wipc)
    (warning,) = load_run(folder).warnings
    assert warning.startswith("iops: WIPC wrote 480,098,516,992 of the 960,197,124,096 bytes "
                              "its read points read (50.0% not preconditioned)")
    assert "LBAs nothing wrote (purged or never written)" in warning
    assert f"WARNING: {warning}" in words(pdf_text(render(folder)))


def test_fob_read_figures_are_marked(tmp_path):
    def add_fob(rec):
        if rec["type"] != "wipc":
            return [rec]
        fob = [{"type": "fob_point", "time": rec["time"] - 1, "test": "iops", "round": 0,
                "index": i, "rw_mix": mix, "read_pct": float(mix.split("/")[0]),
                "block_size": 4096, "na": False, "reason": None, "iops": iops,
                "raw": "raw/iops/round-00/x.json"}
               for i, (mix, iops) in enumerate((("100/0", 900000.0), ("0/100", 50000.0)))]
        return fob + [rec]
    folder = edit_ledger(build_run(tmp_path), add_fob)
    (warning,) = load_run(folder).warnings
    assert warning.startswith("iops: the --fob-sweep FOB figures of R/W mix 100/0 are not "
                              "device reads: they read LBAs the purge emptied")
    text = words(pdf_text(render(folder)))
    assert "* NOT A DEVICE READ: the FOB figures of R/W mixes with reads (100/0)" in text
    assert "NOT a device read *" in text
