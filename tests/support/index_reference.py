"""tests/data/reference-run copied under a tmp report folder and indexed: the one set-up of
the tests that compare the index's rows with pts.stored's reading of the same folder."""

from __future__ import annotations

import json
import shutil

from pts.index import build, db
from pts.stored.data import load_run
from tests.support.helpers import DATA

REFERENCE = DATA / "reference-run"


def index_folder(reports, folder):
    """An index of `reports`, which holds one run folder: `folder`; its connection."""
    conn = db.connect(reports / db.FILE_NAME)
    summary = build.update(conn, [reports])
    assert summary.added == [str(folder.resolve())], summary
    return conn


def copy_reference(tmp, edit=None, drop_raw=False):
    """A copy of the reference run under tmp/reports (its ledger edited by `edit(records)`,
    its raw/ folder dropped with `drop_raw`), indexed; (connection, the copy's RunView)."""
    folder = tmp / "reports" / "model_serial" / "run"
    shutil.copytree(REFERENCE, folder)
    if edit is not None:
        ledger = folder / "ledger.jsonl"
        lines = [json.loads(x) for x in ledger.read_text(encoding="utf-8").splitlines()]
        ledger.write_text("".join(json.dumps(r) + "\n" for r in edit(lines)), encoding="utf-8")
    if drop_raw:
        shutil.rmtree(folder / "raw")
    return index_folder(tmp / "reports", folder), load_run(folder)
