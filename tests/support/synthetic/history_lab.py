"""A small synthetic lab for the history tests (tests/index/test_history.py,
tests/serve/test_history_page.py): run folders of tests/support/synthetic/
runfactory.py (an IOPS test, 3 mixes x 3 block sizes, 0.5 KiB N/A), each given a model,
serial, firmware and start time of its own, and chosen IOPS per cell in every round (so the
window mean, the figure the index holds, is exactly the number chosen here).

LAB_X: 5 runs of firmware FW-A (2026-10-01..05), then 5 of FW-B (2026-10-06..10), samples
SN-1..SN-5 on each:
- RND 4KiB 0/100 falls 10 % on FW-B, its spread doubled: regressed, a change point at run 6;
- RND 4KiB 100/0 rises about 10 %: improved, a change point at run 6;
- RND 4KiB 65/35 moves 100 IOPS, well inside its spread (wider on FW-B): no change beyond
  noise;
- the 1024KiB cells are the factory's base IOPS in every run: no spread, equal means.
LAB_Y: one run of FW-A and one of FW-B: spread unknown.
"""

from __future__ import annotations

import json
from pathlib import Path

from pts.index import build, db
from tests.support.synthetic.runfactory import BASE_IOPS, build_run

LAB_X, LAB_Y = "LabDrive X1", "LabDrive Y2"
W, R, M = ("0/100", 4096), ("100/0", 4096), ("65/35", 4096)
LABEL = {W: "RND 4KiB 0/100", R: "RND 4KiB 100/0", M: "RND 4KiB 65/35",
         ("0/100", 1048576): "RND 1024KiB 0/100"}
X_VALUES = {
    "FW-A": {W: [40000, 40400, 39600, 40200, 39800],
             R: [100000, 101000, 99000, 100500, 99500],
             M: [60000, 60600, 59400, 60300, 59700]},
    "FW-B": {W: [36000, 36800, 35200, 36600, 35400],
             R: [110000, 111000, 109000, 110500, 109500],
             M: [60100, 61300, 58900, 61000, 59200]},
}
Y_VALUES = {"FW-A": {W: [40000]}, "FW-B": {W: [30000]}}


def lab_run(root: Path, model: str, serial: str, firmware: str, day: int,
            iops: dict[tuple[str, int], float]) -> Path:
    """A finished, steady run of `model` started on 2026-10-<day> 12:00 UTC whose cells have
    the IOPS `iops` in every round (other cells: the factory's BASE_IOPS)."""
    run_id = f"202610{day:02d}T120000"
    folder = build_run(root / f"{model.replace(' ', '_')}_{serial}", run_id, curve=(1.0,) * 5)
    info = json.loads((folder / "run.json").read_text())
    info["run_id"] = run_id
    info["started"] = f"2026-10-{day:02d}T12:00:00+00:00"
    info["device"].update(model=model, serial=serial, firmware=firmware)
    (folder / "run.json").write_text(json.dumps(info, indent=2))
    lines = []
    for line in (folder / "ledger.jsonl").read_text().splitlines():
        rec = json.loads(line)
        key = (rec.get("rw_mix"), rec.get("block_size"))
        if rec["type"] == "point" and key in iops:
            v, read = float(iops[key]), rec["read_pct"] / 100
            rec.update(iops=v, read_iops=v * read, write_iops=v * (1 - read),
                       mbps=v * key[1] / 1e6, lat_mean_us=128e6 / v, lat_max_us=1280e6 / v)
        lines.append(json.dumps(rec))
    (folder / "ledger.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def build_lab(root: Path) -> Path:
    """LAB_X and LAB_Y under root (a REPORTS_DIR); root."""
    day = 1
    for firmware, cells in X_VALUES.items():
        for k in range(5):
            lab_run(root, LAB_X, f"SN-{k + 1}", firmware, day,
                    {cell: values[k] for cell, values in cells.items()})
            day += 1
    for day, (firmware, cells) in enumerate(Y_VALUES.items(), 1):
        lab_run(root, LAB_Y, "SN-Y", firmware, day, {c: v[0] for c, v in cells.items()})
    return root


def indexed_lab(root: Path) -> Path:
    """build_lab(root), indexed in root/index.sqlite by pts index's own update; root."""
    build_lab(root)
    conn = db.connect(root / db.FILE_NAME)
    try:
        summary = build.update(conn, [root])
    finally:
        conn.close()
    assert len(summary.added) == 12, summary.line()
    return root


def base(cell: tuple[str, int]) -> float:
    return float(BASE_IOPS[cell])
