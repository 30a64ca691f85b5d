"""The OCPTV 2.0 schema check both OCPTV outputs are tested with: a run's export
(tests/export/test_export_ocptv.py) and the release gate's answer
(tests/index/test_history_gate.py). The schema as published, tests/data/ocptv-schema/."""

from __future__ import annotations

import json
from datetime import datetime

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from tests.support.helpers import REPO

SCHEMA_DIR = REPO / "tests" / "data" / "ocptv-schema"


def schema_validator() -> Draft202012Validator:
    """The schema's root (root.json) with every other file registered under its $id, so
    its $refs ("/opencomputeproject/ocp-diag-core/testRunStart", ...) resolve offline."""
    schemas = [json.loads(p.read_text()) for p in sorted(SCHEMA_DIR.glob("*.json"))]
    registry = Registry().with_resources(
        (s["$id"], Resource.from_contents(s)) for s in schemas)
    root = next(s for s in schemas if s["title"] == "OutputArtifact")
    return Draft202012Validator(root, registry=registry)


def check_lines(lines: list[dict], validator: Draft202012Validator) -> None:
    """Every line valid against the schema; sequence 0..n-1; RFC 3339 UTC timestamps that
    never go back (the schema's "date-time" format is not checked by jsonschema without
    an extra package, so it is checked here)."""
    for line in lines:
        validator.validate(line)
    assert [ln["sequenceNumber"] for ln in lines] == list(range(len(lines)))
    stamps = [datetime.fromisoformat(ln["timestamp"]) for ln in lines]
    assert all(ln["timestamp"].endswith("Z") for ln in lines)
    assert stamps == sorted(stamps)
    assert lines[0]["schemaVersion"] == {"major": 2, "minor": 0}


def run_artifacts(lines, kind):
    return [ln["testRunArtifact"][kind] for ln in lines
            if kind in ln.get("testRunArtifact", {})]


def step_artifacts(lines, kind, step="1"):
    return [ln["testStepArtifact"][kind] for ln in lines
            if kind in ln.get("testStepArtifact", {})
            and ln["testStepArtifact"]["testStepId"] == step]
