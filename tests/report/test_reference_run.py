"""The stored reference run (tests/data/reference-run/, read by the page snapshots) is what
its generator makes today: tests/data/make_reference_run.py's make_run() is
synthrun_more.build_reference(folder), run here into a temporary folder and compared with the
stored one file by file (nothing in a run folder depends on when or where it was made).

The stored run is kept as it was first written, an older run on purpose
(tests/unit/test_typed_parameters.py reads WSAT's `sample_seconds` and XSR's
`interval_seconds` from it; wsat_result and xsr_group records before `host_bound`), so its
ledger is compared record by record as the reader reads it (pts.results.records.parse, which
maps a stored run to this version's names); every other file byte for byte. About 1 s of
work: the fast tier."""

from __future__ import annotations

import json
from pathlib import Path

from pts.results import records
from tests.support import snapshots
from tests.support.synthetic import synthrun_more

FIX = ("the reference run no longer matches its generator: if the change to "
       "tests/support/synthetic/ or to what a run records is meant, re-make it with "
       "`python tests/data/make_reference_run.py` (the run folder and the page baselines), "
       "look at the pages, and commit both (the stored run then has this version's names: "
       "test_typed_parameters' reading of the old ones needs a record of its own)")


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def as_read(ledger: bytes) -> list[dict]:
    return [records.parse(json.loads(line)).to_json() for line in ledger.splitlines()]


def test_the_stored_reference_run_is_what_its_generator_makes(tmp_path):
    made = files(synthrun_more.build_reference(tmp_path / "reference-run"))
    stored = files(snapshots.REFERENCE_RUN)
    assert sorted(made) == sorted(stored), f"{FIX}: files {sorted(made)} vs {sorted(stored)}"
    assert "ledger.jsonl" in stored and "run.json" in stored
    for name in sorted(set(made) - {"ledger.jsonl"}):
        assert made[name] == stored[name], f"{FIX}: {name} differs"
    mine, kept = as_read(made["ledger.jsonl"]), as_read(stored["ledger.jsonl"])
    assert len(mine) == len(kept) > 600, (len(mine), len(kept))
    for n, (a, b) in enumerate(zip(mine, kept, strict=True), 1):
        assert a == b, f"{FIX}: ledger.jsonl record {n} ({a.get('type')}) differs: " + str(
            {k: (a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)})
