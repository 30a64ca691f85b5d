"""The run folders under a report folder: a folder holding run.json is a run folder (its
raw/ and the like are not searched); a folder that looks like a run but is not one is named
with the reason it is skipped (a ledger.jsonl without run.json; a several-device session
folder, whose runs have folders of their own). Hidden folders and symlinked folders are not
entered; the search stops MAX_DEPTH levels down, as the dashboard's does."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pts.stored.data import LEDGER, RUN_JSON

SESSION_JSON = "session.json"
# reports/<model>_<serial>/<run-id>/ and reports/sessions/<stamp>/, with a margin (the
# dashboard's pts.serve.index.MAX_DEPTH)
MAX_DEPTH = 4


@dataclass(frozen=True)
class Found:
    runs: tuple[Path, ...]                   # run folders, resolved, in path order
    skipped: tuple[tuple[Path, str], ...]    # (folder, why it is not indexed)


def scan(root: Path) -> Found:
    root = root.resolve()
    runs, skipped = [], []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        depth = len(here.relative_to(root).parts)
        if RUN_JSON in filenames:
            runs.append(here)
            dirnames[:] = []
            continue
        if SESSION_JSON in filenames:
            skipped.append((here, f"a several-device session folder ({SESSION_JSON}): its "
                                  "runs are indexed from their own run folders"))
            dirnames[:] = []
            continue
        if LEDGER in filenames:
            skipped.append((here, f"{LEDGER} without {RUN_JSON}: not a run folder (a run "
                                  f"writes {RUN_JSON} before its first record)"))
        dirnames[:] = [] if depth >= MAX_DEPTH else \
            sorted(d for d in dirnames if not d.startswith("."))
    return Found(tuple(sorted(runs)), tuple(sorted(skipped)))
